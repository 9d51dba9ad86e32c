"""Inbound dedupe: a WeChat message is claimed (INSERT on a unique key) before any work is done.

A unique-key violation means a retry of a message another request (or process) owns:
the caller answers with the stored reply when it is done, or `success` while it runs.
The same table remembers each signed (timestamp, nonce) pair (`claim_nonce_in`), so a leaked
signature cannot carry a second, forged message in any process; housekeeping purges both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import outbox
from schedule.model import InboundMessageRow

UNFINISHED_NOTICE = "抱歉，你刚才发的一条消息我没能处理完，请再发一次。"


@dataclass(frozen=True)
class Claim:
    fresh: bool  # True: this request owns the message and must run the handler
    status: str  # processing | done
    reply: str | None


_CLAIM_VALUES: dict[str, object] = {"dedupe_key": bindparam("p_key"), "user_id": bindparam("p_user"),
                 "received_at": bindparam("p_at"), "status": "processing", "reply": None}
_CLAIM = {
    "sqlite": sqlite_insert(InboundMessageRow).values(**_CLAIM_VALUES).on_conflict_do_nothing(),
    "mysql": insert(InboundMessageRow).values(**_CLAIM_VALUES).prefix_with("IGNORE"),  # MariaDB/MySQL
}
_NONCE_VALUES: dict[str, object] = {"dedupe_key": bindparam("p_key"), "user_id": None,
                                    "received_at": bindparam("p_at"), "status": "done", "reply": bindparam("p_owner")}
_NONCE = {
    "sqlite": sqlite_insert(InboundMessageRow).values(**_NONCE_VALUES).on_conflict_do_nothing(),
    "mysql": insert(InboundMessageRow).values(**_NONCE_VALUES).prefix_with("IGNORE"),
}
_OWNER = select(InboundMessageRow.status, InboundMessageRow.reply).where(
    InboundMessageRow.dedupe_key == bindparam("p_key"))
_FINISH = (update(InboundMessageRow).where(InboundMessageRow.dedupe_key == bindparam("p_key"))
           .values(status="done", reply=bindparam("p_reply"),
                   user_id=func.coalesce(bindparam("p_user"), InboundMessageRow.user_id)))


# SQLite fast path: the same statements straight to aiosqlite, one thread hop each instead of
# SQLAlchemy's three (cursor, execute, close) — they dominate the webhook's cost on SQLite.
# Keep these in step with the Core statements above (the test suite runs both backends).
_SQLITE_CLAIM = ("INSERT OR IGNORE INTO inbound_messages (dedupe_key, user_id, received_at, status, reply) "
                 "VALUES (?, ?, ?, 'processing', NULL)")
_SQLITE_NONCE = ("INSERT OR IGNORE INTO inbound_messages (dedupe_key, user_id, received_at, status, reply) "
                 "VALUES (?, NULL, ?, 'done', ?)")
_SQLITE_OWNER = "SELECT status, reply FROM inbound_messages WHERE dedupe_key = ?"
_SQLITE_FINISH = ("UPDATE inbound_messages SET status = 'done', reply = ?, user_id = coalesce(?, user_id) "
                  "WHERE dedupe_key = ?")


async def sqlite_driver(session: AsyncSession) -> Any | None:
    """The aiosqlite connection under the session's transaction, or None on other backends."""
    conn = await session.connection()
    if conn.dialect.name != "sqlite":
        return None
    return (await conn.get_raw_connection()).driver_connection


async def claim_in(session: AsyncSession, dedupe_key: str, *, now_ms: int, user_id: int | None = None) -> Claim:
    """Claim inside the caller's transaction: INSERT-or-ignore on the unique key, then read the owner's state.

    On MariaDB a concurrent INSERT of the same key waits for the first transaction and then
    inserts nothing; on SQLite writers are serialised. Either way exactly one caller wins.
    """
    driver = await sqlite_driver(session)
    if driver is not None:
        if (await driver.execute(_SQLITE_CLAIM, (dedupe_key, user_id, now_ms))).rowcount == 1:
            return Claim(fresh=True, status="processing", reply=None)
        found = await driver.execute_fetchall(_SQLITE_OWNER, (dedupe_key,))
        if not found:
            return Claim(fresh=False, status="processing", reply=None)
        return Claim(fresh=False, status=found[0][0], reply=found[0][1])
    conn = await session.connection()  # Core execution: prebuilt statements, a real rowcount
    statement = _CLAIM["sqlite" if conn.dialect.name == "sqlite" else "mysql"]
    params = {"p_key": dedupe_key, "p_user": user_id, "p_at": now_ms}
    if (await conn.execute(statement, params)).rowcount == 1:
        return Claim(fresh=True, status="processing", reply=None)
    row = (await conn.execute(_OWNER, {"p_key": dedupe_key})).first()
    if row is None:  # purged between the two statements: treat as in flight
        return Claim(fresh=False, status="processing", reply=None)
    return Claim(fresh=False, status=row.status, reply=row.reply)


async def claim_nonce_in(session: AsyncSession, key: str, *, owner: str, now_ms: int) -> bool:
    """Record a signed request's (timestamp, nonce) `key` for the message `owner` (an opaque digest).

    True when the pair is new or was used by this same message before (a retry of it); False when
    it already carried another message: a replay of a leaked signature, to be refused.
    """
    driver = await sqlite_driver(session)
    if driver is not None:
        if (await driver.execute(_SQLITE_NONCE, (key, now_ms, owner))).rowcount == 1:
            return True
        found = await driver.execute_fetchall(_SQLITE_OWNER, (key,))
        return bool(found) and found[0][1] == owner
    conn = await session.connection()
    statement = _NONCE["sqlite" if conn.dialect.name == "sqlite" else "mysql"]
    if (await conn.execute(statement, {"p_key": key, "p_at": now_ms, "p_owner": owner})).rowcount == 1:
        return True
    row = (await conn.execute(_OWNER, {"p_key": key})).first()
    return row is not None and row.reply == owner


async def claim(sessions: async_sessionmaker[AsyncSession], dedupe_key: str, *, now_ms: int,
                user_id: int | None = None) -> Claim:
    """`claim_in` in its own short transaction, committed before any work starts."""
    async with sessions.begin() as session:
        return await claim_in(session, dedupe_key, now_ms=now_ms, user_id=user_id)


async def finish(session: AsyncSession, dedupe_key: str, *, reply: str | None, user_id: int | None) -> None:
    """Mark the message done with its stored passive reply, in the caller's transaction."""
    driver = await sqlite_driver(session)
    if driver is not None:
        await driver.execute(_SQLITE_FINISH, (reply, user_id, dedupe_key))
        return
    conn = await session.connection()
    await conn.execute(_FINISH, {"p_key": dedupe_key, "p_reply": reply, "p_user": user_id})


async def assign_user(session: AsyncSession, dedupe_key: str, *, user_id: int) -> None:
    """Record the sender on a claimed row (before a slow answer), so recovery can reach them."""
    await session.execute(update(InboundMessageRow).where(InboundMessageRow.dedupe_key == dedupe_key)
                          .values(user_id=user_id).execution_options(synchronize_session=False))


async def forget_replies(session: AsyncSession, user_id: int) -> None:
    """Blank the stored passive replies of a user who unsubscribed (they hold our answers to their text)."""
    await session.execute(update(InboundMessageRow).where(InboundMessageRow.user_id == user_id)
                          .values(reply=None).execution_options(synchronize_session=False))


async def recover_unfinished(session: AsyncSession, *, received_before_ms: int, now_ms: int,
                             limit: int = 500) -> int:
    """Close messages a crashed process left `processing`; their senders get a notice through the outbox.

    Run on start (and periodically) with a horizon well past the reply budget; never silently drops.
    """
    rows = (await session.execute(
        select(InboundMessageRow.dedupe_key, InboundMessageRow.user_id)
        .where(InboundMessageRow.status == "processing", InboundMessageRow.received_at < received_before_ms)
        .order_by(InboundMessageRow.received_at).limit(limit).with_for_update(skip_locked=True)
    )).all()
    for row in rows:
        if row.user_id is not None:
            await outbox.enqueue(session, user_id=row.user_id, idempotency_key=f"recover:{row.dedupe_key}"[:191],
                                 kind="notice", payload={"text": UNFINISHED_NOTICE}, now_ms=now_ms)
    if rows:
        await session.execute(
            update(InboundMessageRow)
            .where(InboundMessageRow.dedupe_key.in_([row.dedupe_key for row in rows]),
                   InboundMessageRow.status == "processing")
            .values(status="done", reply="success").execution_options(synchronize_session=False))
    return len(rows)


async def purge(session: AsyncSession, *, received_before_ms: int) -> int:
    """Forget dedupe rows older than WeChat's retry horizon (housekeeping)."""
    result = await session.execute(delete(InboundMessageRow).where(InboundMessageRow.received_at < received_before_ms))
    return int(result.rowcount)  # type: ignore[attr-defined]
