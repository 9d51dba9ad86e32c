"""A user's reminders one at a time: added to an item (idempotent), read, cancelled, re-led (提前15分钟),
and the one most recently delivered (what a snooze, 过10分钟再提醒我, is about)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.convert import item_of, reminder_of
from schedule.domain import Item, NewReminder, Reminder
from schedule.errors import InvalidChange, NotFound
from schedule.model import ReminderRow
from schedule.rows import OPEN_REMINDER, insert_reminder, owned_item, reminders_of


async def create(session: AsyncSession, user_id: int, item_id: int, new: NewReminder, *, now_ms: int) -> Reminder:
    """Idempotent on (item, remind_at, channel): asking twice returns the same reminder."""
    row = await owned_item(session, user_id, item_id, include_deleted=False)
    if row.status != "active":
        raise InvalidChange(f"item {item_id} is {row.status}")
    if new.once:  # an occurrence of the series changes (the feed's override): the item's version moves on
        row.updated_at, row.sequence = max(row.updated_at, now_ms), row.sequence + 1
    return reminder_of(await insert_reminder(session, row, new, now_ms))


async def get(session: AsyncSession, user_id: int, reminder_id: int) -> Reminder:
    return reminder_of(await _owned(session, user_id, reminder_id))


async def cancel(session: AsyncSession, user_id: int, reminder_id: int, *, now_ms: int) -> Reminder:
    rem = await _owned(session, user_id, reminder_id)
    if rem.status in OPEN_REMINDER:
        rem.status = "cancelled"
        rem.updated_at = now_ms
        if rem.once:  # the snoozed occurrence is back to the series' own reminders
            row = await owned_item(session, user_id, rem.item_id, include_deleted=True)
            row.updated_at, row.sequence = max(row.updated_at, now_ms), row.sequence + 1
    return reminder_of(rem)


async def set_lead(session: AsyncSession, user_id: int, item_id: int, minutes: int, *, now_ms: int) -> Item:
    """Replace the item's open reminders by one `minutes` before its time (周会提醒改成提前15分钟)."""
    row = await owned_item(session, user_id, item_id, include_deleted=False)
    anchor = row.start_at if row.kind == "event" else row.due_at
    if anchor is None:
        raise InvalidChange(f"item {item_id} has no time to count back from")
    for rem in await reminders_of(session, [row.id]):
        if rem.status in OPEN_REMINDER:
            rem.status, rem.updated_at, rem.locked_until = "cancelled", now_ms, None
    await insert_reminder(session, row, NewReminder(remind_at=anchor - minutes * 60_000, offset_minutes=minutes),
                          now_ms)
    await session.flush()
    return item_of(row, await reminders_of(session, [row.id]))


async def drop_open(session: AsyncSession, user_id: int, item_id: int, *, now_ms: int) -> Item:
    """The item stays and its open reminders are cancelled (不用提醒我了)."""
    row = await owned_item(session, user_id, item_id, include_deleted=False)
    for rem in await reminders_of(session, [row.id]):
        if rem.status in OPEN_REMINDER:
            rem.status, rem.updated_at, rem.locked_until = "cancelled", now_ms, None
    await session.flush()
    return item_of(row, await reminders_of(session, [row.id]))


async def last_delivered(session: AsyncSession, user_id: int, *, since_ms: int) -> tuple[Reminder, Item] | None:
    """The reminder most recently delivered to the user (sent since `since_ms`), with its item."""
    rem = await session.scalar(
        select(ReminderRow).where(ReminderRow.user_id == user_id, ReminderRow.status == "sent",
                                  ReminderRow.sent_at >= since_ms)
        .order_by(ReminderRow.sent_at.desc(), ReminderRow.id.desc()).limit(1))
    if rem is None:
        return None
    row = await owned_item(session, user_id, rem.item_id, include_deleted=False)
    return reminder_of(rem), item_of(row)


async def _owned(session: AsyncSession, user_id: int, reminder_id: int) -> ReminderRow:
    rem = await session.scalar(select(ReminderRow).where(ReminderRow.id == reminder_id,
                                                         ReminderRow.user_id == user_id))
    if rem is None:
        raise NotFound(f"reminder {reminder_id}")
    return rem
