"""One occurrence of a series closed (skipped or done: an EXDATE, its reminder moved on to the next occurrence)
or reopened (the page's 撤销); the series itself goes on."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from schedule.clock import from_ms, to_ms
from schedule.convert import item_of, recurrence_of, reminder_of
from schedule.domain import Item, NewReminder, Recurrence, key_closes, occurrence_key
from schedule.errors import InvalidChange, NotAnOccurrence
from schedule.model import ScheduleItemRow
from schedule.occurrence import occurs_on, reminder_occurrence
from schedule.recurrence import next_occurrence
from schedule.rows import insert_reminder, owned_item, reminders_of


async def skip_occurrence(session: AsyncSession, user_id: int, item_id: int, on: date | datetime, *, done: bool,
                          now_ms: int) -> Item:
    """Cancel one occurrence of a series (an EXDATE), or mark it done (still listed, as done): the series itself
    goes on, and a reminder planned for it moves on to the next occurrence with the same lead time. `on` is a
    day (every occurrence that day) or one occurrence's start (a series several times a day: that dose only)."""
    row, recurrence, anchor = await _owned_series(session, user_id, item_id)
    zone = ZoneInfo(row.timezone)
    day = on.astimezone(zone).date() if isinstance(on, datetime) else on
    if not occurs_on(item_of(row), day):  # a stale page or a hand-made request: no override on a foreign day
        raise NotAnOccurrence(item_id, day.isoformat())
    on = _local(on, zone)
    key = occurrence_key(on)
    skipped = sorted({*recurrence.skipped, key})
    marked = sorted({*recurrence.done, key} if done else set(recurrence.done) - {key})
    row.metadata_json = {**(row.metadata_json or {}), "skipped": skipped, "done": marked}
    row.updated_at, row.sequence = now_ms, row.sequence + 1
    moved = replace(recurrence, skipped=tuple(skipped))
    reminders = await reminders_of(session, [row.id])
    for rem in reminders:
        occurs = reminder_occurrence(reminder_of(rem), anchor)  # as firing counts it
        lead = occurs - rem.remind_at
        occurrence = from_ms(occurs)
        if rem.status != "pending" or not key_closes({key}, occurrence.astimezone(zone).replace(tzinfo=None)):
            continue
        rem.status, rem.updated_at = "cancelled", now_ms
        if rem.once:  # a snooze of the closed day goes with it
            continue
        nxt = next_occurrence(moved, dtstart=from_ms(anchor), after=occurrence, tz=zone)
        if nxt is not None:  # the lead written out: the moved row belongs to its own occurrence
            await insert_reminder(session, row, NewReminder(remind_at=to_ms(nxt) - lead, offset_minutes=lead // 60_000,
                                                            channel=rem.channel), now_ms)
    await session.flush()
    return item_of(row, await reminders_of(session, [row.id]))


async def reopen_occurrence(session: AsyncSession, user_id: int, item_id: int, on: date | datetime, *,
                            now_ms: int) -> Item:
    """Undo a done or skipped occurrence (the page's 撤销): the day is open again, and its reminders that
    the close cancelled and that are still ahead are pending again (the next day's, moved there by the
    close, stays: firing this one then finds it and adds no other)."""
    row, recurrence, anchor = await _owned_series(session, user_id, item_id)
    zone = ZoneInfo(row.timezone)
    on = _local(on, zone)
    day = occurrence_key(on)
    if day in recurrence.skipped:
        row.metadata_json = {**(row.metadata_json or {}),
                             "skipped": [d for d in recurrence.skipped if d != day],
                             "done": [d for d in recurrence.done if d != day]}
        row.updated_at, row.sequence = now_ms, row.sequence + 1
        for rem in await reminders_of(session, [row.id]):
            occurs = from_ms(reminder_occurrence(reminder_of(rem), anchor)).astimezone(zone).replace(tzinfo=None)
            if rem.status == "cancelled" and key_closes({day}, occurs) and rem.remind_at > now_ms:
                rem.status, rem.updated_at, rem.attempts = "pending", now_ms, 0
    await session.flush()
    return item_of(row, await reminders_of(session, [row.id]))


async def _owned_series(session: AsyncSession, user_id: int, item_id: int
                        ) -> tuple[ScheduleItemRow, Recurrence, int]:
    """The user's series row, its rule and its first instant; InvalidChange when the item does not repeat."""
    row = await owned_item(session, user_id, item_id, include_deleted=False)
    recurrence = recurrence_of(row)
    anchor = row.start_at if row.kind == "event" else row.due_at
    if recurrence is None or anchor is None:
        raise InvalidChange(f"item {item_id} is not recurring")
    return row, recurrence, anchor


def _local(on: date | datetime, zone: ZoneInfo) -> date | datetime:
    """A day as is; an occurrence's start as local wall clock (naive), to the minute."""
    if isinstance(on, datetime):
        moment = on.astimezone(zone) if on.tzinfo is not None else on
        return moment.replace(tzinfo=None, second=0, microsecond=0)
    return on
