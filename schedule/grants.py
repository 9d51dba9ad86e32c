"""Subscription-message grants (订阅通知): what each user consented to receive outside the 48-hour
window. A one-time grant is spent by one send (taken before the call, given back when the call surely failed);
a refusal stops the template for that user until they accept again."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.channel import parts_of
from schedule.db import rowcount
from schedule.model import OutboundMessageRow, SubscribeGrantRow

G = SubscribeGrantRow
HELD_PART = -1  # receipt part of an outbox row that holds a spent one-time grant (message parts count from 0)


async def record(session: AsyncSession, user_id: int, *, accepted: tuple[str, ...], rejected: tuple[str, ...],
                 now_ms: int) -> None:
    """A popup answered (each acceptance grants one more one-time send) or a consent changed (a refusal)."""
    for template_id, ok in [*((t, True) for t in accepted), *((t, False) for t in rejected)]:
        row = await session.scalar(select(G).where(G.user_id == user_id, G.template_id == template_id)
                                   .with_for_update())
        if row is None:
            session.add(G(user_id=user_id, template_id=template_id, status="accept" if ok else "reject",
                          remaining=1 if ok else 0, updated_at=now_ms))
            await session.flush()
            continue
        row.status, row.updated_at = ("accept" if ok else "reject"), now_ms
        row.remaining = row.remaining + 1 if ok else 0


async def ask(session: AsyncSession, user_id: int, template_id: str, *, now_ms: int) -> bool:
    """Record that the user was told how to grant `template_id` ('asked'); False when a row was there already
    (asked, granted or refused before)."""
    if await session.scalar(select(G.id).where(G.user_id == user_id, G.template_id == template_id)) is not None:
        return False
    session.add(G(user_id=user_id, template_id=template_id, status="asked", remaining=0, updated_at=now_ms))
    await session.flush()
    return True


async def take(session: AsyncSession, user_id: int, template_id: str, *, long_term: bool, now_ms: int,
               outbox_id: int | None = None) -> bool:
    """Spend one send of the user's grant (a long-term grant is not spent); False when there is none. The
    outbox row `outbox_id` is marked as holding it in the same transaction (HELD_PART): its retries and
    replays send on that grant instead of spending another."""
    where = [G.user_id == user_id, G.template_id == template_id, G.status == "accept"]
    if long_term:
        return await session.scalar(select(G.id).where(*where)) is not None
    taken = await session.execute(update(G).where(*where, G.remaining > 0)
                                  .values(remaining=G.remaining - 1, updated_at=now_ms)
                                  .execution_options(synchronize_session=False))
    if not rowcount(taken):
        return False
    row = await session.get(OutboundMessageRow, outbox_id) if outbox_id is not None else None
    if row is not None:
        parts = {**parts_of(row.receipt), HELD_PART: None}
        row.receipt = {"parts": {str(k): v for k, v in sorted(parts.items())}}
    return True


async def give_back(session: AsyncSession, user_id: int, template_id: str, *, now_ms: int) -> None:
    """The send surely did not happen: the one-time grant is the user's again."""
    await session.execute(update(G).where(G.user_id == user_id, G.template_id == template_id, G.status == "accept")
                          .values(remaining=G.remaining + 1, updated_at=now_ms)
                          .execution_options(synchronize_session=False))


async def refuse(session: AsyncSession, user_id: int, template_id: str, *, now_ms: int) -> None:
    """WeChat said the user refuses this template (43101, or a sent event 'failed:user block')."""
    await record(session, user_id, accepted=(), rejected=(template_id,), now_ms=now_ms)
