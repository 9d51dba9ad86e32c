"""The outbox: every user-visible push is written here, in the caller's transaction, before any send."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Executable, Table, select, update
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.model import OutboundMessageRow

OUTBOX = cast(Table, OutboundMessageRow.__table__)
OUTBOX_KINDS = frozenset({"reminder", "digest", "agent_reply", "notice"})


async def enqueue(
    session: AsyncSession,
    *,
    user_id: int,
    idempotency_key: str,
    kind: str,
    payload: dict[str, Any],
    now_ms: int,
    channel: str = "wechat",
    reminder_id: int | None = None,
    deliver_at_ms: int | None = None,
) -> OutboundMessageRow:
    """Add a pending message unless one with the same idempotency key exists (then return that one).

    Runs inside the caller's transaction, so the push is durable exactly when the
    business change that caused it commits (transactional outbox).
    """
    if kind not in OUTBOX_KINDS:
        raise ValueError(f"unknown outbox kind {kind!r}")
    existing = await session.scalar(
        select(OutboundMessageRow).where(OutboundMessageRow.idempotency_key == idempotency_key)
    )
    if existing is not None:
        return existing
    row = OutboundMessageRow(
        user_id=user_id,
        idempotency_key=idempotency_key,
        kind=kind,
        payload=payload,
        channel=channel,
        status="pending",
        attempts=0,
        next_attempt_at=deliver_at_ms if deliver_at_ms is not None else now_ms,
        reminder_id=reminder_id,
        created_at=now_ms,
        updated_at=now_ms,
    )
    session.add(row)
    await session.flush()
    return row


async def enqueue_many(session: AsyncSession, messages: Sequence[dict[str, Any]], *, now_ms: int) -> None:
    """Queue many pending messages in one multi-row INSERT (the scheduler's bursts); keys already in
    the outbox are skipped, as `enqueue` does. Each dict carries user_id, idempotency_key, kind,
    payload, channel and optionally reminder_id."""
    if not messages:
        return
    if bad := {m["kind"] for m in messages} - OUTBOX_KINDS:
        raise ValueError(f"unknown outbox kind {sorted(bad)!r}")
    rows = [{"reminder_id": None, "channel": "wechat", **m, "status": "pending", "attempts": 0,
             "next_attempt_at": now_ms, "created_at": now_ms, "updated_at": now_ms} for m in messages]
    # The unique key does the dedupe in the INSERT itself (no SELECT of hundreds of keys first).
    await (await session.connection()).execute(_insert_new(session), rows)


def _insert_new(session: AsyncSession) -> Executable:
    """INSERT that skips rows whose idempotency key is already queued, in the session's dialect."""
    if session.get_bind().dialect.name == "sqlite":
        return sqlite_insert(OUTBOX).on_conflict_do_nothing(index_elements=["idempotency_key"])
    statement = mysql_insert(OUTBOX)
    return statement.on_duplicate_key_update(id=statement.table.c.id)  # a no-op update: the row is kept


async def release(session: AsyncSession, idempotency_key: str, *, now_ms: int) -> None:
    """A message queued to wait (`deliver_at_ms`) is due now."""
    await session.execute(update(OUTBOX).where(OUTBOX.c.idempotency_key == idempotency_key,
                                               OUTBOX.c.status == "pending", OUTBOX.c.next_attempt_at > now_ms)
                          .values(next_attempt_at=now_ms, updated_at=now_ms))


async def prepend(session: AsyncSession, idempotency_key: str, head: str, *, now_ms: int) -> bool:
    """Put `head` before the text of a queued message none of which went out yet, due now (so the two go
    out in order, as one message's parts); False when there is no such message."""
    row = await session.scalar(select(OutboundMessageRow).where(
        OutboundMessageRow.idempotency_key == idempotency_key, OutboundMessageRow.status == "pending")
        .with_for_update())
    if row is None or row.receipt:
        return False
    row.payload = {**row.payload, "text": head + str(row.payload.get("text", ""))}
    row.next_attempt_at, row.updated_at = now_ms, now_ms
    await session.flush()
    return True
