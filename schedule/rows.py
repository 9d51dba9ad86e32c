"""Item and reminder rows as the ORM write paths read and add them: the user's own item (NotFound otherwise),
an item's reminders, and a reminder added once per (item, time, channel). Shared by items, series and reminders."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import and_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.domain import NewReminder
from schedule.errors import NotFound
from schedule.model import ReminderRow, ScheduleItemRow

OPEN_REMINDER = ("pending", "locked")


async def owned_item(session: AsyncSession, user_id: int, item_id: int, *, include_deleted: bool) -> ScheduleItemRow:
    query = select(ScheduleItemRow).where(ScheduleItemRow.id == item_id, ScheduleItemRow.user_id == user_id)
    if not include_deleted:
        query = query.where(ScheduleItemRow.status != "deleted")
    row = await session.scalar(query)
    if row is None:
        raise NotFound(f"item {item_id}")
    return row


async def reminders_of(session: AsyncSession, item_ids: Iterable[int]) -> list[ReminderRow]:
    ids = list(item_ids)
    if not ids:
        return []
    return list((await session.scalars(select(ReminderRow).where(ReminderRow.item_id.in_(ids)))).all())


def _new_reminder(item: ScheduleItemRow, new: NewReminder, stamp: int) -> ReminderRow:
    return ReminderRow(user_id=item.user_id, item_id=item.id, remind_at=new.remind_at,
                       offset_minutes=new.offset_minutes, channel=new.channel, status="pending", attempts=0,
                       next_attempt_at=new.remind_at, created_at=stamp, updated_at=stamp, once=new.once)


async def insert_reminder(session: AsyncSession, item: ScheduleItemRow, new: NewReminder, stamp: int) -> ReminderRow:
    key = and_(ReminderRow.item_id == item.id, ReminderRow.remind_at == new.remind_at,
               ReminderRow.channel == new.channel)
    existing = await session.scalar(select(ReminderRow).where(key))
    if existing is None:
        try:
            async with session.begin_nested():
                existing = _new_reminder(item, new, stamp)
                session.add(existing)
        except IntegrityError:
            # A concurrent session created the same reminder first; that one is ours too.
            existing = await session.scalar(select(ReminderRow).where(key))
            if existing is None:  # pragma: no cover
                raise
    elif existing.status == "cancelled":  # asking again re-arms a cancelled reminder
        existing.status, existing.updated_at, existing.attempts = "pending", stamp, 0
        existing.once = new.once
    return existing
