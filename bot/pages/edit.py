"""修改 on the page: the time, title, place and note of one item or of one occurrence of a series, through the
same ScheduleService calls as chat. One occurrence leaves its series (as a skipped one does) and a one-off
copy, reminded with the series' lead times, takes the change; the series and its other days stay as they are."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from render.timefmt import local
from schedule.clock import to_ms
from schedule.domain import Item, ItemChanges, NewItem, NewReminder
from schedule.errors import NotFound
from schedule.occurrence import at_occurrence
from schedule.recurrence import localize
from schedule.service import ScheduleService

_REF = re.compile(r"^([0-9]{1,18})(?::([0-9]{4}-[0-9]{2}-[0-9]{2}))?$")
_CLOCK = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
MAX_TITLE, MAX_LOCATION, MAX_NOTE = 200, 200, 2000
EARLIEST, LATEST = date(2000, 1, 1), date(2100, 12, 31)


class BadEdit(ValueError):
    """What the form says cannot be saved; the message is for the user."""


@dataclass(frozen=True, slots=True)
class Editing:
    """An item as the form shows it (a series at the occurrence), and the occurrence's day."""

    item: Item
    on: date | None
    day: str
    clock: str


@dataclass(frozen=True, slots=True)
class Fields:
    title: str
    day: str
    clock: str
    location: str
    note: str


def parse_ref(raw: str) -> tuple[int, date | None]:
    found = _REF.match(raw or "")
    if found is None:
        raise NotFound("no such card")
    try:
        return int(found.group(1)), date.fromisoformat(found.group(2)) if found.group(2) else None
    except ValueError as exc:
        raise NotFound("no such day") from exc


class PageEdits:
    def __init__(self, service: ScheduleService) -> None:
        self._service = service

    async def load(self, user_id: int, ref: str, *, tz: str) -> Editing:
        """The card the form edits; NotFound for another user's item, a closed one, or a day that is not one of
        the series' occurrences."""
        item_id, on = parse_ref(ref)
        item = await self._service.get_item(user_id, item_id)
        if item.status != "active" or (on is not None) != (item.recurrence is not None):
            raise NotFound("not editable")
        if on is not None:
            item = await self._occurrence(user_id, item, on, tz)
        anchor = item.anchor_at
        if anchor is None:
            return Editing(item, on, "", "")
        when = local(anchor, item.timezone if item.all_day else tz)
        return Editing(item, on, when.date().isoformat(), "" if item.all_day else when.strftime("%H:%M"))

    async def save(self, user_id: int, ref: str, fields: Fields, *, tz: str, now_ms: int) -> Item | None:
        """Apply the form; the item as saved (for a series' day: the one-off copy), None when nothing changed."""
        editing = await self.load(user_id, ref, tz=tz)
        item = editing.item
        title = " ".join(fields.title.split())
        if not title:
            raise BadEdit("标题不能为空。")
        if len(title) > MAX_TITLE or len(fields.location) > MAX_LOCATION or len(fields.note) > MAX_NOTE:
            raise BadEdit("内容太长了：标题和地点最多 200 字，备注最多 2000 字。")
        location, note = fields.location.strip(), fields.note.strip().replace("\r\n", "\n")
        anchor = self._anchor(editing, fields, tz)
        changes = ItemChanges(
            title=title if title != item.title else None,
            location=location if location != (item.location or "") else None,
            description=note if note != (item.description or "") else None,
            start_at=anchor if item.kind == "event" and anchor != item.anchor_at else None,
            due_at=anchor if item.kind != "event" and anchor != item.anchor_at else None)
        if changes == ItemChanges():
            return None
        if editing.on is None:
            return await self._service.update_item(user_id, item.id, changes)
        return await self._detach(user_id, item, editing.on, changes, now_ms=now_ms)

    def _anchor(self, editing: Editing, fields: Fields, tz: str) -> int | None:
        item = editing.item
        if item.anchor_at is None or not editing.day:
            return item.anchor_at  # an undated task keeps having no date
        try:
            day = date.fromisoformat(fields.day)
        except ValueError as exc:
            raise BadEdit("日期看不懂，请用日期选择器选一天。") from exc
        if not EARLIEST <= day <= LATEST:
            raise BadEdit("日期要在 2000–2100 年之间。")
        if item.all_day:
            return to_ms(localize(datetime.combine(day, time()), ZoneInfo(item.timezone)))
        if not _CLOCK.match(fields.clock):
            raise BadEdit("时间看不懂，请用 24 小时制，例如 15:30。")
        return to_ms(localize(datetime.combine(day, time.fromisoformat(fields.clock)), ZoneInfo(tz)))

    async def _occurrence(self, user_id: int, series: Item, on: date, tz: str) -> Item:
        """The series at its occurrence on `on` (as the page lists it), or NotFound when `on` is not one."""
        zone = ZoneInfo(tz)
        start = to_ms(localize(datetime.combine(on, time()), zone))
        end = to_ms(localize(datetime.combine(on + timedelta(days=1), time()), zone))
        listed = await self._service.list_window(user_id, start_ms=start, end_ms=end, first=500,
                                                 statuses=("active",), expand=True)
        for shown in listed.items:
            if shown.id == series.id and shown.status == "active":
                return at_occurrence(series, shown.anchor_at)
        raise NotFound("not an occurrence")

    async def _detach(self, user_id: int, occurrence: Item, on: date, changes: ItemChanges, *, now_ms: int) -> Item:
        """That day leaves the series and a one-off copy takes the change, reminded with the series' leads."""
        assert occurrence.anchor_at is not None
        anchor = changes.start_at or changes.due_at or occurrence.anchor_at
        shift = anchor - occurrence.anchor_at
        event = occurrence.kind == "event"
        leads = sorted({r.offset_minutes for r in occurrence.reminders
                        if r.status not in ("cancelled", "expired") and r.offset_minutes is not None})
        copy = NewItem(
            kind=occurrence.kind, title=changes.title or occurrence.title, timezone=occurrence.timezone,
            all_day=occurrence.all_day, start_at=anchor if event else None, due_at=None if event else anchor,
            end_at=occurrence.end_at + shift if event and occurrence.end_at is not None else None,
            description=(changes.description if changes.description is not None else occurrence.description) or None,
            location=(changes.location if changes.location is not None else occurrence.location) or None,
            source_channel="page",
            reminders=tuple(NewReminder(remind_at=anchor - lead * 60_000, offset_minutes=lead)
                            for lead in leads if anchor - lead * 60_000 > now_ms))
        made = await self._service.create_item(user_id, copy)  # first: over the quota, nothing has changed
        await self._service.skip_occurrence(user_id, occurrence.id, on)
        return made
