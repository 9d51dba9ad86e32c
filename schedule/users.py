"""User rows: get-or-create by openid (race-safe), the users a transaction has read, API token hashes,
reachability, forgetting a user."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.errors import NotFound
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

_USERS_READ = "schedule_users_read"  # session.info: users this transaction has read (id → timezone)
_USERS_LOCKED = "schedule_users_locked"  # session.info: users whose row this transaction holds FOR UPDATE
# Chat reads its user on every message: a prebuilt statement over the columns `user_of` reads.
_USER = Fast(select(UserRow.id, UserRow.wechat_openid, UserRow.timezone, UserRow.subscribed).where(
    UserRow.id == bindparam("p_uid")))
_USER_EXISTS = Fast(select(UserRow.id).where(UserRow.id == bindparam("p_uid")))


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return "sb_" + secrets.token_urlsafe(32)


async def get_or_create(session: AsyncSession, openid: str, *, timezone: str, now_ms: int) -> UserRow:
    """The user with this openid, created if missing; concurrent creators end with one row."""
    row = await find(session, openid)
    if row is not None:
        return row
    try:
        async with session.begin_nested():
            row = UserRow(wechat_openid=openid, timezone=timezone, subscribed=True, window_sent_count=0,
                          created_at=now_ms)
            session.add(row)
    except IntegrityError:
        row = await find(session, openid)
        if row is None:  # pragma: no cover - the unique key said it exists
            raise
    return row



async def find(session: AsyncSession, openid: str) -> UserRow | None:
    return await session.scalar(select(UserRow).where(UserRow.wechat_openid == openid))


def note_read(session: Executor, user_id: int, timezone: str, *, locked: bool = False) -> None:
    """Note that this transaction has read the user (a chat message's opening query did): creating
    an item in it then skips its own existence check, and a digest its read of the timezone. `locked`: the
    read locked the user's row (FOR UPDATE), so the item quota needs no lock of its own."""
    session.info.setdefault(_USERS_READ, {})[user_id] = timezone
    if locked:
        session.info.setdefault(_USERS_LOCKED, set()).add(user_id)


def holds_lock(session: Executor, user_id: int) -> bool:
    """Does this transaction hold the user's row FOR UPDATE (noted by `note_read(locked=True)`)?"""
    return user_id in session.info.get(_USERS_LOCKED, ())


async def get(session: Executor, user_id: int) -> Any:
    """The user's row (the columns `user_of` reads), noted as read; NotFound when there is none."""
    row = (await _USER.run(session, {"p_uid": user_id})).first()
    if row is None:
        raise NotFound(f"user {user_id}")
    note_read(session, user_id, row.timezone)
    return row


async def timezone_of(session: Executor, user_id: int) -> str:
    """The user's timezone, as noted when this transaction read the user, else read now."""
    timezone: str | None = session.info.get(_USERS_READ, {}).get(user_id)
    if timezone is None:  # not read in this transaction yet
        user = (await _USER.run(session, {"p_uid": user_id})).first()
        if user is None:
            raise NotFound(f"user {user_id}")
        timezone = user.timezone
    return timezone


async def check_exists(session: Executor, user_id: int) -> None:
    """NotFound unless the user exists (a user read in this transaction does: the foreign keys hold it)."""
    if user_id not in session.info.get(_USERS_READ, ()) and (
            await _USER_EXISTS.run(session, {"p_uid": user_id})).first() is None:
        raise NotFound(f"user {user_id}")


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
    await session.execute(delete(ScheduledRequestRow).where(ScheduledRequestRow.user_id == user_id))  # requests
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
