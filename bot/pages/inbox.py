"""The in-app queue as the page shows it: listed by a GET (read only, so a link preview consumes nothing) and
marked seen only by the owner's 知道了 (schedule.inbox.take, in one transaction)."""

from __future__ import annotations

from collections.abc import Sequence
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


async def peek_notices(sessions: async_sessionmaker[AsyncSession], user_id: int) -> Shown:
    """What waits in the queue, changing nothing."""
    async with sessions.begin() as session:
        return await _shown(session, await inbox.pending(session, user_id))


async def take_notices(sessions: async_sessionmaker[AsyncSession], user_id: int, *, now_ms: int) -> Shown:
    """知道了: the waiting notices, marked delivered (their reminders sent) in the same transaction."""
    async def take(session: AsyncSession) -> Shown:
        return await _shown(session, await inbox.take(session, user_id, now_ms=now_ms))
    return await in_transaction(sessions, take)


async def _shown(session: AsyncSession, taken: Sequence[inbox.Notice]) -> Shown:
    if not taken:
        return Shown((), frozenset())
    linked = await session.scalars(select(OutboundMessageRow.reminder_id).where(
        OutboundMessageRow.id.in_([n.outbox_id for n in taken]), OutboundMessageRow.reminder_id.is_not(None)))
    notices = tuple(Notice(text=n.text or "一条提醒", expired=n.expired, created_at=n.created_at) for n in taken)
    return Shown(notices, frozenset(int(r) for r in linked if r is not None))
