"""User rows: get-or-create by openid (race-safe), API tokens (hash only), reachability, forgetting a user."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.fastsql import Executor, Fast
from schedule.model import (
    AgentMessageRow,
    ApiTokenRow,
    DeliveryLogRow,
    DialogStateRow,
    DigestSubscriptionRow,
    InboundMessageRow,
    OutboundMessageRow,
    PageShareRow,
    ReminderRow,
    ScheduledRequestRow,
    ScheduleItemRow,
    SubscribeGrantRow,
    UserRow,
)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return "sb_" + secrets.token_urlsafe(32)


async def get_or_create(session: AsyncSession, openid: str, *, timezone: str, now_ms: int) -> UserRow:
    """The user with this openid, created if missing; concurrent creators end with one row."""
    row = await session.scalar(select(UserRow).where(UserRow.wechat_openid == openid))
    if row is not None:
        return row
    try:
        async with session.begin_nested():
            row = UserRow(wechat_openid=openid, timezone=timezone, subscribed=True, window_sent_count=0,
                          created_at=now_ms)
            session.add(row)
    except IntegrityError:
        row = await session.scalar(select(UserRow).where(UserRow.wechat_openid == openid))
        if row is None:  # pragma: no cover - the unique key said it exists
            raise
    return row


_REACHABLE = Fast(update(UserRow).where(UserRow.id == bindparam("p_uid"), UserRow.subscribed.is_(False))
                  .values(subscribed=True))


async def mark_reachable(session: Executor, user_id: int) -> None:
    """The user wrote to us, so pushes reach them again (a 43004/43019 had marked them unreachable).

    Runs on every user message: one UPDATE by primary key that changes nothing in the common case.
    """
    await _REACHABLE.defer(session, {"p_uid": user_id})


async def is_subscribed(session: AsyncSession, user_id: int) -> bool:
    """Whether pushes may reach the user, read under a lock on their row (an unsubscribe waits or went first)."""
    return bool(await session.scalar(select(UserRow.subscribed).where(UserRow.id == user_id).with_for_update()))


async def forget(session: AsyncSession, user_id: int, *, now_ms: int) -> None:
    """Unsubscribe: stop every push to the user and delete their schedule data (WeChat's rule)."""
    await session.execute(
        update(OutboundMessageRow)
        .where(OutboundMessageRow.user_id == user_id, OutboundMessageRow.status.in_(("pending", "claimed")))
        .values(status="cancelled", updated_at=now_ms)
    )
    await session.execute(delete(ReminderRow).where(ReminderRow.user_id == user_id))
    await session.execute(delete(ScheduleItemRow).where(ScheduleItemRow.user_id == user_id))
    await session.execute(delete(DigestSubscriptionRow).where(DigestSubscriptionRow.user_id == user_id))
    await session.execute(delete(ScheduledRequestRow).where(ScheduledRequestRow.user_id == user_id))  # issue 30
    await session.execute(delete(SubscribeGrantRow).where(SubscribeGrantRow.user_id == user_id))
    await session.execute(delete(DialogStateRow).where(DialogStateRow.user_id == user_id))
    await session.execute(delete(AgentMessageRow).where(AgentMessageRow.user_id == user_id))
    await session.execute(delete(PageShareRow).where(PageShareRow.user_id == user_id))  # public links stop working
    await session.execute(delete(ApiTokenRow).where(ApiTokenRow.user_id == user_id))
    # What stays for bookkeeping (outbox idempotency keys, dedupe keys) keeps none of the user's words.
    await session.execute(update(OutboundMessageRow).where(OutboundMessageRow.user_id == user_id)
                          .values(payload={"forgotten": True}, receipt=None))
    await session.execute(delete(DeliveryLogRow).where(DeliveryLogRow.user_id == user_id))
    await session.execute(update(InboundMessageRow).where(InboundMessageRow.user_id == user_id).values(reply=None))
    await session.execute(
        update(UserRow).where(UserRow.id == user_id)
        .values(subscribed=False, api_token_hash=None, link_epoch=UserRow.link_epoch + 1)  # old links answer 410
    )
