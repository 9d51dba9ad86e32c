"""Itinerary view model: items, reminders and in-app notices grouped by local day (pure).

One view feeds the chat summary (two lines) and the HTML page, so both say the same thing.
Every label is computed here; templates only loop and print.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from render.timefmt import clock_label, local, weekday
from schedule.domain import Item, Reminder

MARKS = {"task": "待办", "event": "日程", "reminder": "提醒"}
MAX_LISTED_DAYS = 31  # longer ranges list only the days that have entries
FIRST_SCREEN = 3  # overdue entries shown before the days; more fold into a <details>


@dataclass(frozen=True, slots=True)
class Notice:
    """A push that could not be delivered (or a reminder that expired), shown at the top once."""

    text: str
    expired: bool = False
    created_at: int = 0


@dataclass(frozen=True, slots=True)
class ReminderChip:
    reminder_id: int
    time: str
    state: str  # 待提醒 | 已提醒 | 未送达
    open: bool  # still pending: can be dismissed


@dataclass(frozen=True, slots=True)
class Entry:
    item_id: int
    kind: str  # task | event | reminder
    mark: str
    title: str
    time: str
    states: tuple[str, ...]
    tone: str  # overdue | today | upcoming | past | done
    done: bool
    recurring: bool
    location: str | None
    reminders: tuple[ReminderChip, ...]
    can_complete: bool
    can_cancel: bool
    can_snooze: bool
    anchor_at: int | None


@dataclass(frozen=True, slots=True)
class Day:
    on: date
    label: str  # 12月1日
    weekday: str  # 周二
    relative: str  # 今天 | 明天 | ""
    is_today: bool
    is_past: bool
    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True)
class Itinerary:
    title: str  # 我的行程 · 12月1日–12月7日
    range_label: str
    start_on: date
    end_on: date  # exclusive
    today: date
    timezone: str
    days: tuple[Day, ...]
    overdue: tuple[Entry, ...]  # open tasks due before the range
    undated: tuple[Entry, ...]  # open tasks without a deadline
    notices: tuple[Notice, ...]
    count: int  # entries inside the range

    @property
    def overdue_first(self) -> tuple[Entry, ...]:
        """The overdue entries shown open; the rest fold away so today stays on the first screen."""
        return self.overdue[:FIRST_SCREEN]

    @property
    def overdue_rest(self) -> tuple[Entry, ...]:
        return self.overdue[FIRST_SCREEN:]

    @property
    def empty(self) -> bool:
        return not (self.count or self.overdue or self.undated or self.notices)

    def entries(self) -> list[Entry]:
        return [entry for day in self.days for entry in day.entries]


def date_label(day: date, *, with_year: bool = False) -> str:
    return f"{day.year}年{day.month}月{day.day}日" if with_year else f"{day.month}月{day.day}日"


def range_label(start_on: date, end_on: date, today: date) -> str:
    """12月1日–12月7日 for [start_on, end_on); the year shows only when it is not this year's."""
    last = end_on - timedelta(days=1)
    with_year = start_on.year != today.year or last.year != today.year
    first = date_label(start_on, with_year=with_year)
    if last <= start_on:
        return first
    return f"{first}–{date_label(last, with_year=with_year and last.year != start_on.year)}"


def build_itinerary(
    items: Sequence[Item], *, now_ms: int, tz: str, start_on: date, end_on: date,
    overdue: Sequence[Item] = (), undated: Sequence[Item] = (), notices: Sequence[Notice] = (),
    undelivered: Collection[int] = (),
) -> Itinerary:
    """The page's content: `items` as returned by ScheduleService.list_items for [start_on, end_on).

    `undelivered` holds reminder ids whose push sits in the in-app queue (shown as 未送达).
    """
    ctx = _Context(now_ms, tz, frozenset(undelivered))
    today = ctx.today
    by_day: dict[date, list[Entry]] = {}
    for item in items:
        entry, on = _entry(item, ctx)
        on = min(max(on, start_on), end_on - timedelta(days=1)) if on is not None else start_on
        by_day.setdefault(on, []).append(entry)
    span = (end_on - start_on).days
    shown = [start_on + timedelta(days=n) for n in range(span)] if span <= MAX_LISTED_DAYS else sorted(by_day)
    days = tuple(
        Day(on=on, label=date_label(on), weekday=weekday(on), relative=_relative(on, today), is_today=on == today,
            is_past=on < today, entries=tuple(sorted(by_day.get(on, []), key=_order)))
        for on in shown
    )
    label = range_label(start_on, end_on, today)
    return Itinerary(
        title=f"我的行程 · {label}", range_label=label, start_on=start_on, end_on=end_on, today=today, timezone=tz,
        days=days, count=sum(len(d.entries) for d in days),
        overdue=tuple(_entry(i, ctx)[0] for i in overdue), undated=tuple(_entry(i, ctx)[0] for i in undated),
        notices=tuple(notices),
    )


def entry_of(item: Item, *, now_ms: int, tz: str, undelivered: Collection[int] = ()) -> Entry:
    """One item as the page and the summary show it."""
    return _entry(item, _Context(now_ms, tz, frozenset(undelivered)))[0]


class _Context:
    """What every entry of one view shares: now, the user's zone (looked up once) and today."""

    __slots__ = ("now_ms", "today", "undelivered", "zone")

    def __init__(self, now_ms: int, tz: str, undelivered: frozenset[int]) -> None:
        self.now_ms, self.zone, self.undelivered = now_ms, ZoneInfo(tz), undelivered
        self.today = self.local(now_ms).date()

    def local(self, ms: int) -> datetime:
        return datetime.fromtimestamp(ms / 1000, self.zone)


def _entry(item: Item, ctx: _Context) -> tuple[Entry, date | None]:
    today = ctx.today
    anchor = item.anchor_at
    start = ctx.local(anchor) if anchor is not None else None
    on = _day_of(item, start)
    kind = _kind(item)
    done = item.status == "completed"
    active = item.status == "active"
    over = active and _is_over(item, on, ctx)
    chips = tuple(_chip(r, ctx) for r in item.reminders if r.status != "cancelled")
    if done:
        states, tone = ["已完成"], "done"
    elif over:
        states, tone = ["已过期"], "overdue" if item.kind == "task" else "past"
    elif on is None:
        states, tone = [], "upcoming"
    else:
        relative = _relative(on, today) or ("即将到来" if on > today else "")
        states, tone = ([relative] if relative else []), "today" if on == today else "upcoming"
    if not chips:
        states.append("无提醒")
    elif any(c.state == "未送达" for c in chips):
        states.append("未送达")
    elif any(c.state == "已提醒" for c in chips):
        states.append("已提醒")
    fired = any(r.status in ("locked", "sent", "failed", "expired") or r.id in ctx.undelivered
                for r in item.reminders)
    entry = Entry(
        item_id=item.id, kind=kind, mark=MARKS[kind], title=item.title, time=_time_label(item, kind, start, ctx),
        states=tuple(states), tone=tone, done=done, recurring=item.recurrence is not None, location=item.location,
        reminders=chips, can_complete=active and item.kind == "task", can_cancel=active,
        can_snooze=active and fired, anchor_at=anchor,
    )
    return entry, on


def summary(view: Itinerary) -> str:
    """Two short lines for the chat reply that carries the page link."""
    entries = view.entries()
    if not entries and not view.overdue:
        first = f"{view.range_label}没有安排。"
    else:
        counts = {kind: sum(1 for e in entries if e.kind == kind) for kind in MARKS}
        parts = [f"{MARKS[k]} {n}" for k, n in counts.items() if n]
        first = f"{view.range_label}，共 {len(entries)} 项" + (f"（{'，'.join(parts)}）" if parts else "") + "。"
    facts = []
    overdue = len(view.overdue) + sum(1 for e in entries if e.tone == "overdue")
    if overdue:
        facts.append(f"已过期 {overdue} 项")
    today = sum(1 for d in view.days if d.is_today for e in d.entries if not e.done)
    if today:
        facts.append(f"今天 {today} 项")
    upcoming = next((e for d in view.days if not d.is_past for e in d.entries if e.tone in ("today", "upcoming")),
                    None)
    if upcoming is not None:
        title = upcoming.title if len(upcoming.title) <= 16 else upcoming.title[:15] + "…"
        day = next(d for d in view.days if upcoming in d.entries)
        facts.append(f"下一项：{day.relative or day.label} {upcoming.time} {title}".replace("  ", " "))
    return first + "\n" + ("，".join(facts) + "。" if facts else "接下来没有待办。")


def _kind(item: Item) -> str:
    if item.kind == "task" and item.due_at is not None and any(r.remind_at == item.due_at for r in item.reminders):
        return "reminder"  # "明天九点提醒我带材料": the reminder is the point of the task
    return item.kind


def _day_of(item: Item, start: datetime | None) -> date | None:
    """The local day an item sits on; an all-day item keeps its own date whatever the viewer's zone."""
    if item.all_day and item.local_date and item.recurrence is None:
        return date.fromisoformat(item.local_date)
    if start is None:
        return None
    if item.all_day and item.anchor_at is not None:
        return local(item.anchor_at, item.timezone).date()
    return start.date()


def _is_over(item: Item, on: date | None, ctx: _Context) -> bool:
    anchor = item.anchor_at
    if anchor is None:
        return False
    if item.all_day:
        return on is not None and on < ctx.today
    end = item.end_at if item.kind == "event" and item.end_at is not None else anchor
    return end < ctx.now_ms


def _time_label(item: Item, kind: str, start: datetime | None, ctx: _Context) -> str:
    if start is None or item.anchor_at is None:
        return ""
    if item.all_day:
        return "全天"
    if item.kind == "task":
        return clock_label(start) if kind == "reminder" else f"截止 {clock_label(start)}"
    if item.end_at is None or item.end_at <= item.anchor_at:
        return clock_label(start)
    end = ctx.local(item.end_at)
    tail = clock_label(end) if end.date() == start.date() else f"{date_label(end.date())} {clock_label(end)}"
    return f"{clock_label(start)}–{tail}"


def _chip(reminder: Reminder, ctx: _Context) -> ReminderChip:
    at = ctx.local(reminder.remind_at)
    when = clock_label(at) if at.date() == ctx.today else f"{date_label(at.date())} {clock_label(at)}"
    if reminder.id in ctx.undelivered or reminder.status in ("failed", "expired"):
        state = "未送达"
    elif reminder.status in ("sent", "locked"):
        state = "已提醒"
    else:
        state = "待提醒"
    return ReminderChip(reminder_id=reminder.id, time=when, state=state, open=reminder.status == "pending")


def _relative(on: date, today: date) -> str:
    return {0: "今天", 1: "明天"}.get((on - today).days, "")


def _order(entry: Entry) -> tuple[int, int, int]:
    return (0 if entry.time == "全天" else 1, entry.anchor_at if entry.anchor_at is not None else 0, entry.item_id)
