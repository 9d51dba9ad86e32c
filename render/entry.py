"""One card of the itinerary page (pure): an item — for a series, one occurrence — as the page shows it.

A card says only what is its own: its occurrence's reminders and state. Labels are computed here;
templates only print them. A past event is simply past; only an undone task is overdue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from urllib.parse import quote
from zoneinfo import ZoneInfo

from render.timefmt import clock_label, local
from schedule.course import several_a_day
from schedule.domain import Item, Reminder

MARKS = {"task": "待办", "event": "日程", "reminder": "提醒"}
_URL = re.compile(r"https?://[^\s<>\"'，。、；！？）】》]+")
MAX_NOTE = 500  # a note's characters on a card (the rest is in chat and the API)
MAP_SEARCH = "https://uri.amap.com/search?keyword={}&src=schedbot&callnative=0"  # 高德: opens inside WeChat


@dataclass(frozen=True, slots=True)
class ReminderChip:
    reminder_id: int  # 0: planned for this occurrence, not a row yet (nothing to cancel)
    time: str
    state: str  # 待提醒 | 已提醒 | 未送达
    open: bool  # a pending row: can be dismissed


@dataclass(frozen=True, slots=True)
class TitlePart:
    text: str
    href: str | None = None  # a URL said in the title, linked


@dataclass(frozen=True, slots=True)
class Entry:
    item_id: int
    ref: str  # what a button names: "12", or "12:2026-06-18" for one occurrence of a series
    kind: str  # task | event | reminder
    mark: str
    title: str
    title_parts: tuple[TitlePart, ...]
    time: str
    datetime_attr: str  # <time datetime=…>
    states: tuple[str, ...]
    tone: str  # overdue | today | upcoming | past | done
    done: bool
    recurring: bool
    occurrence_on: str | None  # the occurrence's local date, for a series
    location: str | None
    reminders: tuple[ReminderChip, ...]
    can_complete: bool
    can_cancel: bool
    can_snooze: bool
    anchor_at: int | None
    note_parts: tuple[TitlePart, ...] = ()  # the item's note, its http(s) links tappable
    map_href: str = ""  # the location on a map
    due_label: str = ""  # an overdue card's deadline: 6月15日 18:00 到期
    day_note: str = ""  # 第 2/3 天 on the days of a multi-day event
    again: bool = False  # a later day's copy of a multi-day event (counted and acted on once, on its first)
    dom_id: str = ""  # unique on the page: item-12, item-12-2026-06-18 (a series' day), …-d2 (a later day)


class View:
    """What every entry of one view shares: now, the user's zone (looked up once) and today."""

    __slots__ = ("now_ms", "today", "undelivered", "zone")

    def __init__(self, now_ms: int, tz: str, undelivered: frozenset[int]) -> None:
        self.now_ms, self.zone, self.undelivered = now_ms, ZoneInfo(tz), undelivered
        self.today = self.local(now_ms).date()

    def local(self, ms: int) -> datetime:
        return datetime.fromtimestamp(ms / 1000, self.zone)


def date_label(day: date, *, with_year: bool = False) -> str:
    return f"{day.year}年{day.month}月{day.day}日" if with_year else f"{day.month}月{day.day}日"


def title_parts(title: str) -> tuple[TitlePart, ...]:
    """Text with its http(s) URLs as links (any other scheme stays text; the template escapes all of it)."""
    parts: list[TitlePart] = []
    at = 0
    for found in _URL.finditer(title):
        if found.start() > at:
            parts.append(TitlePart(title[at:found.start()]))
        url = found.group(0)
        shown = url.split("://", 1)[1]
        parts.append(TitlePart(shown if len(shown) <= 28 else shown[:27] + "…", url))
        at = found.end()
    if at < len(title):
        parts.append(TitlePart(title[at:]))
    return tuple(parts)


def build_entry(item: Item, view: View) -> tuple[Entry, date | None]:
    anchor = item.anchor_at
    start = view.local(anchor) if anchor is not None else None
    on = day_of(item, start)
    kind = _kind(item)
    done = item.status == "completed"
    active = item.status == "active"
    over = active and _is_over(item, on, view)
    chips = tuple(_chip(r, view) for r in item.reminders if r.status != "cancelled")
    states: list[str] = []
    if done:
        states, tone = ["已完成"], "done"
    elif over and item.kind == "task":
        states, tone = ["已过期"], "overdue"
    elif over:
        tone = "past"  # an event that happened: nothing to do, nothing missed
    else:
        tone = "today" if on == view.today else "upcoming"
    if active and any(c.state == "未送达" for c in chips):
        states.append("未送达")
    fired = any(r.status in ("locked", "sent", "failed", "expired") or (r.id in view.undelivered and not r.planned)
                for r in item.reminders)  # a planned one carries the id of the stored reminder it is made from
    series = item.recurrence is not None
    occurrence_on = on.isoformat() if series and on is not None else None
    note = (item.description or "").strip()
    entry = Entry(
        note_parts=title_parts(note if len(note) <= MAX_NOTE else note[:MAX_NOTE - 1] + "…") if note else (),
        map_href=MAP_SEARCH.format(quote(item.location.strip())) if item.location and item.location.strip() else "",
        due_label=f"{date_label(on)}{'' if item.all_day else ' ' + clock_label(start)} 到期"
        if tone == "overdue" and start is not None and on is not None else "",
        item_id=item.id, ref=f"{item.id}:{occurrence_on}" if occurrence_on else str(item.id), kind=kind,
        mark=MARKS[kind], title=item.title, title_parts=title_parts(item.title),
        time=_time_label(item, kind, start, view), datetime_attr=_datetime_attr(item, start),
        states=tuple(states), tone=tone, done=done, recurring=series, occurrence_on=occurrence_on,
        location=item.location, reminders=chips, can_complete=active and item.kind == "task",
        can_cancel=active and tone != "past", can_snooze=active and fired and tone != "past", anchor_at=anchor,
        dom_id=(f"item-{item.id}-{occurrence_on}" + (start.strftime("-%H%M") if start is not None and
                                                      several_a_day(item.recurrence) else ""))
        if occurrence_on else f"item-{item.id}",
    )
    return entry, on


def day_of(item: Item, start: datetime | None) -> date | None:
    """The local day an item sits on; an all-day item keeps its own date whatever the viewer's zone."""
    if item.all_day and item.local_date and item.recurrence is None:
        return date.fromisoformat(item.local_date)
    if start is None:
        return None
    if item.all_day and item.anchor_at is not None:
        return local(item.anchor_at, item.timezone).date()
    return start.date()


def last_day_of(item: Item, on: date, view: View) -> date:
    """The last local day a multi-day event covers (its end is exclusive), else `on`."""
    if item.kind != "event" or item.end_at is None or item.anchor_at is None or item.end_at <= item.anchor_at:
        return on
    zone = ZoneInfo(item.timezone) if item.all_day else view.zone
    end = datetime.fromtimestamp((item.end_at - 1) / 1000, zone).date()
    return max(end, on)


def _kind(item: Item) -> str:
    if item.kind == "task" and item.due_at is not None and any(r.remind_at == item.due_at for r in item.reminders):
        return "reminder"  # "明天九点提醒我带材料": the reminder is the point of the task
    return item.kind


def _is_over(item: Item, on: date | None, view: View) -> bool:
    anchor = item.anchor_at
    if anchor is None:
        return False
    if item.all_day:
        last = last_day_of(item, on, view) if on is not None else None
        return last is not None and last < view.today
    end = item.end_at if item.kind == "event" and item.end_at is not None else anchor
    return end < view.now_ms


def _time_label(item: Item, kind: str, start: datetime | None, view: View) -> str:
    if start is None or item.anchor_at is None:
        return ""
    if item.all_day:
        return "全天"
    if item.kind == "task":
        return clock_label(start) if kind == "reminder" else f"截止 {clock_label(start)}"
    if item.end_at is None or item.end_at <= item.anchor_at:
        return clock_label(start)
    end = view.local(item.end_at)
    tail = clock_label(end) if end.date() == start.date() else f"{date_label(end.date())} {clock_label(end)}"
    return f"{clock_label(start)}–{tail}"


def _datetime_attr(item: Item, start: datetime | None) -> str:
    if start is None:
        return ""
    if item.all_day:
        return (day_of(item, start) or start.date()).isoformat()
    return start.isoformat(timespec="minutes")


def _chip(reminder: Reminder, view: View) -> ReminderChip:
    at = view.local(reminder.remind_at)
    when = clock_label(at) if at.date() == view.today else f"{date_label(at.date())} {clock_label(at)}"
    if (reminder.id in view.undelivered and not reminder.planned) or reminder.status in ("failed", "expired"):
        state = "未送达"
    elif reminder.status in ("sent", "locked"):
        state = "已提醒"
    else:
        state = "待提醒"
    return ReminderChip(reminder_id=reminder.id, time=when, state=state,
                        open=reminder.status == "pending" and reminder.id > 0 and not reminder.planned)
