"""Inbound dedupe: a WeChat message is claimed (INSERT on a unique key) before any work is done.

A unique-key violation means a retry of a message another request (or process) owns:
the caller answers with the stored reply when it is done, or `success` while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule.model import InboundMessageRow


@dataclass(frozen=True)
class Claim:
    fresh: bool  # True: this request owns the message and must run the handler
    status: str  # processing | done
    reply: str | None


async def claim(sessions: async_sessionmaker[AsyncSession], dedupe_key: str, *, now_ms: int,
                user_id: int | None = None) -> Claim:
    """Insert the dedupe row in its own short transaction; on a duplicate, report the owner's state."""
    try:
        async with sessions.begin() as session:
            await session.execute(insert(InboundMessageRow).values(
                dedupe_key=dedupe_key, user_id=user_id, received_at=now_ms, status="processing", reply=None))
        return Claim(fresh=True, status="processing", reply=None)
    except IntegrityError:
        pass
    async with sessions() as session:
        row = (await session.execute(
            select(InboundMessageRow.status, InboundMessageRow.reply).where(InboundMessageRow.dedupe_key == dedupe_key)
        )).first()
    if row is None:  # deleted between our INSERT and SELECT (purge): treat as in flight
        return Claim(fresh=False, status="processing", reply=None)
    return Claim(fresh=False, status=row.status, reply=row.reply)


async def finish(session: AsyncSession, dedupe_key: str, *, reply: str | None, user_id: int | None) -> None:
    """Mark the message done with its stored passive reply, in the caller's transaction."""
    values: dict[str, object] = {"status": "done", "reply": reply}
    if user_id is not None:
        values["user_id"] = user_id
    await session.execute(update(InboundMessageRow).where(InboundMessageRow.dedupe_key == dedupe_key).values(**values))


async def purge(session: AsyncSession, *, received_before_ms: int) -> int:
    """Forget dedupe rows older than WeChat's retry horizon (housekeeping)."""
    result = await session.execute(delete(InboundMessageRow).where(InboundMessageRow.received_at < received_before_ms))
    return int(result.rowcount)  # type: ignore[attr-defined]
