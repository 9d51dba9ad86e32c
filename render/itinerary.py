"""Itinerary view model: cards grouped by local day, the overdue group, undated tasks and notices (pure).

One view feeds the chat summary (two lines) and the HTML page, so both say the same thing.
Every label is computed here (cards in `render.entry`); templates only loop and print.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta

from render.daymarks import lunar_label, off_mark, zone_label
from render.entry import MARKS, Entry, ReminderChip, View, build_entry, date_label, last_day_of
from render.timefmt import weekday
from schedule.domain import Item

__all__ = ["MARKS", "Day", "Entry", "Flash", "Itinerary", "Notice", "ReminderChip", "build_itinerary",
           "date_label", "entry_of", "range_label", "summary"]
MAX_LISTED_DAYS = 31  # longer ranges list only the days that have entries


@dataclass(frozen=True, slots=True)
class Notice:
    """A push that could not be delivered (or a reminder that expired), shown at the top once."""

    text: str
    expired: bool = False
    created_at: int = 0


@dataclass(frozen=True, slots=True)
class Flash:
    """What the last tap did, said at the top of the page, with the form value that undoes it (or "")."""

    text: str
    undo: str = ""


@dataclass(frozen=True, slots=True)
class Day:
    on: date
    label: str  # 12月1日
    weekday: str  # 周二
    relative: str  # 今天 | 明天 | ""
    is_today: bool
    is_past: bool
    entries: tuple[Entry, ...]
    off: str = ""  # 休 | 班 (official calendar) | ""
    lunar: str = ""  # 农历五月初四


@dataclass(frozen=True, slots=True)
class Itinerary:
    title: str  # 我的行程 · 12月1日–12月7日
    range_label: str
    start_on: date
    end_on: date  # exclusive
    today: date
    timezone: str
    days: tuple[Day, ...]
    overdue: tuple[Entry, ...]  # open tasks due before the range (the first ones; `overdue_count` says all)
    undated: tuple[Entry, ...]  # open tasks without a deadline
    notices: tuple[Notice, ...]
    count: int  # entries inside the range (a multi-day event once)
    overdue_count: int = 0
    shared: bool = False  # a public share: no reminder states, no owner's notes
    flash: Flash | None = None
    truncated: bool = False  # the range held more entries than a page shows: the earliest ones are listed
    zone: str = ""  # the time zone in words: 北京时间

    @property
    def span_days(self) -> int:
        return (self.end_on - self.start_on).days

    @property
    def empty(self) -> bool:
        return not (self.count or self.overdue or self.undated or self.notices)

    @property
    def today_count(self) -> int:
        return sum(1 for d in self.days if d.is_today for e in d.entries if not e.done and not e.again)

    def entries(self) -> list[Entry]:
        return [entry for day in self.days for entry in day.entries if not entry.again]


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
    undelivered: Collection[int] = (), overdue_count: int | None = None, shared: bool = False,
    flash: Flash | None = None, truncated: bool = False, share_notes: bool = False,
) -> Itinerary:
    """The page's content: `items` as ScheduleService.list_items(expand=True) returns them for [start_on, end_on)
    (a series once per occurrence). A multi-day event is on each of its days in the range.

    `undelivered` holds reminder ids whose push sits in the in-app queue (shown as 未送达). A public share
    (`shared`) shows the plan only: no done or overdue states, no reminders, notes only with `share_notes`.
    """
    view = View(now_ms, tz, frozenset(undelivered))
    today = view.today
    last_shown = end_on - timedelta(days=1)
    by_day: dict[date, list[Entry]] = {}
    for item in items:
        entry, on = build_entry(item, view)
        if shared:
            entry = _plan_only(entry, on, today, share_notes)
        first = min(max(on, start_on), last_shown) if on is not None else start_on
        end = last_day_of(item, on, view) if on is not None else first
        if on is None or end == on:
            by_day.setdefault(first, []).append(entry)
            continue
        total = (end - on).days + 1
        for n in range((min(end, last_shown) - first).days + 1):
            day = first + timedelta(days=n)
            note = f"第 {(day - on).days + 1}/{total} 天"
            by_day.setdefault(day, []).append(replace(entry, day_note=note, again=n > 0,
                                                      tone=_tone_on(entry, day, today),
                                                      dom_id=f"{entry.dom_id}-d{n + 1}" if n else entry.dom_id))
    span = (end_on - start_on).days
    shown = [start_on + timedelta(days=n) for n in range(span)] if span <= MAX_LISTED_DAYS else sorted(by_day)
    days = tuple(
        Day(on=on, label=date_label(on), weekday=weekday(on), relative=_relative(on, today), is_today=on == today,
            is_past=on < today, entries=tuple(sorted(by_day.get(on, []), key=_order)), off=off_mark(on),
            lunar=lunar_label(on))
        for on in shown
    )
    label = range_label(start_on, end_on, today)
    overdue_entries = tuple(build_entry(i, view)[0] for i in overdue)
    return Itinerary(
        title=f"{'行程' if shared else '我的行程'} · {label}", range_label=label, start_on=start_on, end_on=end_on,
        today=today, timezone=tz, days=days,
        count=sum(1 for d in days for e in d.entries if not e.again),
        overdue=overdue_entries, overdue_count=len(overdue_entries) if overdue_count is None else overdue_count,
        undated=tuple(build_entry(i, view)[0] for i in undated), notices=tuple(notices), shared=shared, flash=flash,
        truncated=truncated, zone=zone_label(tz, view.local(now_ms)),
    )


def entry_of(item: Item, *, now_ms: int, tz: str, undelivered: Collection[int] = ()) -> Entry:
    """One item as the page and the summary show it."""
    return build_entry(item, View(now_ms, tz, frozenset(undelivered)))[0]


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
    overdue = view.overdue_count + sum(1 for e in entries if e.tone == "overdue")
    if overdue:
        facts.append(f"已过期 {overdue} 项")
    if view.today_count:
        facts.append(f"今天 {view.today_count} 项")
    upcoming = next((e for d in view.days if not d.is_past for e in d.entries
                     if e.tone in ("today", "upcoming") and not e.again), None)
    if upcoming is not None:
        title = upcoming.title if len(upcoming.title) <= 16 else upcoming.title[:15] + "…"
        day = next(d for d in view.days if upcoming in d.entries)
        facts.append(f"下一项：{day.relative or day.label} {upcoming.time} {title}".replace("  ", " "))
    return first + "\n" + ("，".join(facts) + "。" if facts else "接下来没有待办。")


def _plan_only(entry: Entry, on: date | None, today: date, notes: bool) -> Entry:
    """A card as a share shows it: what is planned, not how it went (no 已过期 on someone's 吃药)."""
    tone = "past" if on is not None and on < today else "today" if on == today else "upcoming"
    return replace(entry, states=(), tone=tone, done=False, reminders=(), due_label="", can_complete=False,
                   can_cancel=False, can_snooze=False, note_parts=entry.note_parts if notes else ())


def _tone_on(entry: Entry, day: date, today: date) -> str:
    if entry.tone in ("done", "overdue"):
        return entry.tone
    return "past" if day < today else "today" if day == today else "upcoming"


def _relative(on: date, today: date) -> str:
    return {0: "今天", 1: "明天"}.get((on - today).days, "")


def _order(entry: Entry) -> tuple[int, int, int]:
    return (0 if entry.time == "全天" or entry.again else 1,
            entry.anchor_at if entry.anchor_at is not None else 0, entry.item_id)
