"""The in-app queue as the page shows it (schedule.inbox.take: marked shown in the same transaction)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from render.itinerary import Notice
from schedule import inbox
from schedule.db import in_transaction
from schedule.model import OutboundMessageRow


@dataclass(frozen=True, slots=True)
class Shown:
    notices: tuple[Notice, ...]
    reminder_ids: frozenset[int]  # reminders whose push waited in the queue (未送达 on this view)


async def take_notices(sessions: async_sessionmaker[AsyncSession], user_id: int, *, now_ms: int) -> Shown:
    return await in_transaction(sessions, lambda session: _take(session, user_id, now_ms))


async def _take(session: AsyncSession, user_id: int, now_ms: int) -> Shown:
    taken = await inbox.take(session, user_id, now_ms=now_ms)
    if not taken:
        return Shown((), frozenset())
    linked = await session.scalars(select(OutboundMessageRow.reminder_id).where(
        OutboundMessageRow.id.in_([n.outbox_id for n in taken]), OutboundMessageRow.reminder_id.is_not(None)))
    notices = tuple(Notice(text=n.text or "一条提醒", expired=n.expired, created_at=n.created_at) for n in taken)
    return Shown(notices, frozenset(int(r) for r in linked if r is not None))
