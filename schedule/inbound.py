"""Inbound dedupe: a WeChat message is claimed (INSERT on a unique key) before any work is done.

A unique-key violation means a retry of a message another request (or process) owns:
the caller answers with the stored reply when it is done, or `success` while it runs.
The same table remembers each signed (timestamp, nonce) pair (`claim_signed_in`), so a leaked
signature cannot carry a second, forged message in any process; housekeeping purges both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, String, bindparam, delete, exists, func, insert, literal, null, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import outbox
from schedule.db import rowcount
from schedule.fastsql import Executor, Fast, Tx, run_all, run_then
from schedule.model import InboundMessageRow

UNFINISHED_NOTICE = "抱歉，你刚才发的一条消息我没能处理完，请再发一次。"


@dataclass(frozen=True)
class Claim:
    fresh: bool  # True: this request owns the message and must run the handler
    status: str  # processing | done
    reply: str | None
    received_at: int | None = None  # when the owning request arrived (a claim read back, not a fresh one)


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
_R = InboundMessageRow
# The claim, written only when the signed (timestamp, nonce) pair is this message's: a replayed signature
# carrying another message claims nothing, so the claim can go in the same trip as the nonce, and commit.
_NONCE_IS_OURS = exists().where(_R.dedupe_key == bindparam("p_nonce"), _R.reply == bindparam("p_owner"))
_CLAIM_ROW = select(bindparam("p_key", type_=String), bindparam("p_user", type_=BigInteger),
                    bindparam("p_at", type_=BigInteger), literal("processing"), null()).where(_NONCE_IS_OURS)
_CLAIM_COLUMNS = ["dedupe_key", "user_id", "received_at", "status", "reply"]
_CLAIM_IF_OURS = {
    "sqlite": sqlite_insert(_R).from_select(_CLAIM_COLUMNS, _CLAIM_ROW).on_conflict_do_nothing(),
    "mysql": insert(_R).from_select(_CLAIM_COLUMNS, _CLAIM_ROW).prefix_with("IGNORE"),
}
_OWNER = select(InboundMessageRow.status, InboundMessageRow.reply, InboundMessageRow.received_at).where(
    InboundMessageRow.dedupe_key == bindparam("p_key"))
_FINISH = (update(InboundMessageRow).where(InboundMessageRow.dedupe_key == bindparam("p_key"))
           .values(status="done", reply=bindparam("p_reply"),
                   user_id=func.coalesce(bindparam("p_user"), InboundMessageRow.user_id)))


_CLAIM_FAST = Fast(_CLAIM)
_CLAIM_IF_OURS_FAST = Fast(_CLAIM_IF_OURS)
_NONCE_FAST = Fast(_NONCE)
_OWNER_FAST = Fast(_OWNER)
_FINISH_FAST = Fast(_FINISH)


async def claim_in(session: Executor, dedupe_key: str, *, now_ms: int, user_id: int | None = None) -> Claim:
    """Claim inside the caller's transaction: INSERT-or-ignore on the unique key, then read the owner's state.

    On MariaDB a concurrent INSERT of the same key waits for the first transaction and then
    inserts nothing; on SQLite writers are serialised. Either way exactly one caller wins.
    """
    params = {"p_key": dedupe_key, "p_user": user_id, "p_at": now_ms}
    return await _claimed(session, dedupe_key, (await _CLAIM_FAST.run(session, params)).rowcount)


async def _claimed(session: Executor, dedupe_key: str, inserted: int) -> Claim:
    if inserted == 1:
        return Claim(fresh=True, status="processing", reply=None)
    row = (await _OWNER_FAST.run(session, {"p_key": dedupe_key})).first()
    if row is None:  # purged between the two statements: treat as in flight
        return Claim(fresh=False, status="processing", reply=None)
    return Claim(fresh=False, status=row.status, reply=row.reply, received_at=row.received_at)


async def claim_signed_in(target: Executor, dedupe_key: str, *, nonce_key: str, owner: str, now_ms: int,
                          user_id: int | None = None, then: Sequence[tuple[Fast, Mapping[str, Any]]] = ()
                          ) -> Claim | None:
    """The signed request's (timestamp, nonce) pair `nonce_key` recorded for the message `owner` (an opaque
    digest), then `claim_in`, as one unit of work, in one trip with its COMMIT where the unit has its
    transaction to itself; None when the nonce already carried another message (a replay of a leaked
    signature). A retry of the same message finds the pair its own.

    The claim is conditional on the nonce row being this message's, so a replay writes nothing and the
    two INSERTs are the unit's last writes; the usual fresh message needs nothing more. Only a retry
    or a replay reads on, to tell which it is.

    `then` (a MariaDB `Tx` of its own only): statements sent in the same trip after the COMMIT, in a new
    transaction that the caller hands on (`schedule.handoff`); their rows wait for their own `run`.
    """
    statements: list[tuple[Fast, Mapping[str, Any] | None]] = [
        (_NONCE_FAST, {"p_key": nonce_key, "p_at": now_ms, "p_owner": owner}),
        (_CLAIM_IF_OURS_FAST, {"p_key": dedupe_key, "p_user": user_id, "p_at": now_ms, "p_nonce": nonce_key,
                               "p_owner": owner})]
    if then:
        assert isinstance(target, Tx)
        nonce, claimed = await run_then(target, statements, list(then))
    else:
        nonce, claimed = await run_all(target, statements, last=True)
    if claimed.rowcount == 1:
        return Claim(fresh=True, status="processing", reply=None)
    if nonce.rowcount != 1:
        row = (await _OWNER_FAST.run(target, {"p_key": nonce_key})).first()
        if row is None or row.reply != owner:
            return None
    return await _claimed(target, dedupe_key, 0)


async def claim(sessions: async_sessionmaker[AsyncSession], dedupe_key: str, *, now_ms: int,
                user_id: int | None = None) -> Claim:
    """`claim_in` in its own short transaction, committed before any work starts."""
    async with sessions.begin() as session:
        return await claim_in(session, dedupe_key, now_ms=now_ms, user_id=user_id)


async def finish(session: Executor, dedupe_key: str, *, reply: str | None, user_id: int | None) -> None:
    """Mark the message done with its stored passive reply, in the caller's transaction."""
    await _FINISH_FAST.defer(session, {"p_key": dedupe_key, "p_reply": reply, "p_user": user_id})


async def assign_user(session: AsyncSession, dedupe_key: str, *, user_id: int) -> None:
    """Record the sender on a claimed row (before a slow answer), so recovery can reach them."""
    await session.execute(update(InboundMessageRow).where(InboundMessageRow.dedupe_key == dedupe_key)
                          .values(user_id=user_id).execution_options(synchronize_session=False))


async def received_since(session: AsyncSession, user_id: int, *, since_ms: int, key_like: str) -> bool:
    """Whether a message of the user whose dedupe key matches `key_like` arrived at or after `since_ms`."""
    return bool(await session.scalar(select(InboundMessageRow.dedupe_key).where(
        InboundMessageRow.user_id == user_id, InboundMessageRow.received_at >= since_ms,
        InboundMessageRow.dedupe_key.like(key_like)).limit(1)))


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
    return rowcount(result)
