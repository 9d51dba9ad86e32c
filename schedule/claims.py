"""The outbox's lease statements, one short transaction per batch: claim, mark sending (taking the
customer-service window slots), renew, release stale leases, and commit a batch of outcomes.

Every write after the claim is fenced by the batch's token; the claim itself is single-table
(`SELECT … FOR UPDATE SKIP LOCKED` then `UPDATE` by id; SQLite serialises with BEGIN IMMEDIATE).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule import window
from schedule.channel import DeliveryFailure, Outgoing, Receipt, parts_of
from schedule.db import rowcount
from schedule.model import DeliveryLogRow, OutboundMessageRow, ReminderRow, UserRow

WINDOW_CLOSED_CODES = ("45015", "45047")  # WeChat: window closed / per-user limit reached
PUSH_KINDS = frozenset({"reminder", "digest"})  # pushes; the other kinds are answers and notices to the user
TEMPLATE_BLOCKED = "template_blocked"  # failure class of a template row the user refused

OUTBOX = cast(Table, OutboundMessageRow.__table__)
LOGS = cast(Table, DeliveryLogRow.__table__)


@dataclass(frozen=True, slots=True)
class Claimed:
    row_id: int
    token: str
    message: Outgoing
    channel: str
    attempts: int
    reminder_id: int | None
    next_attempt_at: int = 0
    failure_class: str | None = None
    window_reserved_at: int | None = None
    template_blocked: bool = False  # the user refused our template messages ("failed:user block")
    due_at: int = 0  # when the push was due: its reminder's time, else when it was queued (metrics)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt leaves on its row: the new status, receipt, rung, retry time and log line."""

    item: Claimed
    status: str  # sent | pending | failed | cancelled
    receipt: Receipt | None = None
    channel: str | None = None  # None: unchanged
    next_attempt_at: int | None = None
    failure: DeliveryFailure | None = None
    log: str | None = None  # success | failed | None (no attempt was made)


async def claim(session: AsyncSession, *, token: str, now: int, lease_ms: int, limit: int,
                held: Sequence[str] = ()) -> list[Claimed]:
    """Lease up to `limit` due rows, oldest first; rows of the `held` (paused) channels wait."""
    ids: Sequence[int] = (await session.scalars(
        select(OutboundMessageRow.id)
        .where(OutboundMessageRow.status == "pending", OutboundMessageRow.next_attempt_at <= now,
               OutboundMessageRow.channel.not_in(["inapp", *held]))
        .order_by(OutboundMessageRow.next_attempt_at, OutboundMessageRow.id)
        .limit(limit)
        .with_for_update(skip_locked=True))).all()
    if not ids:
        return []
    await session.execute(
        update(OUTBOX).where(OUTBOX.c.id.in_(ids), OUTBOX.c.status == "pending")
        .values(status="claimed", lock_token=token, locked_until=now + lease_ms,
                attempts=OUTBOX.c.attempts + 1, updated_at=now))
    o = OUTBOX.c
    rows = (await session.execute(
        select(o.id, o.user_id, o.kind, o.idempotency_key, o.payload, o.channel, o.attempts, o.receipt,
               o.reminder_id, o.next_attempt_at, o.failure_class, o.window_reserved_at, o.created_at,
               UserRow.wechat_openid, UserRow.subscribed, ReminderRow.remind_at)
        .join(UserRow, UserRow.id == o.user_id)
        .outerjoin(ReminderRow, ReminderRow.id == o.reminder_id)
        .where(o.id.in_(ids), o.lock_token == token)
        .order_by(o.next_attempt_at, o.id))).all()
    unsubscribed = [r.id for r in rows if not r.subscribed]
    if unsubscribed:  # the user stopped pushes: nothing to send, the reminder is closed too
        await session.execute(update(OUTBOX).where(o.id.in_(unsubscribed))
                              .values(status="cancelled", lock_token=None, locked_until=None, updated_at=now))
        await _close_reminders(session, "cancelled", [r.reminder_id for r in rows if not r.subscribed], now)
    blocked = await _template_blockers(session, {r.user_id for r in rows if r.subscribed and r.channel == "template"})
    return [Claimed(row_id=r.id, token=token, channel=r.channel, attempts=r.attempts,
                    reminder_id=r.reminder_id, next_attempt_at=r.next_attempt_at, failure_class=r.failure_class,
                    window_reserved_at=r.window_reserved_at, template_blocked=r.user_id in blocked,
                    due_at=r.remind_at if r.remind_at is not None else r.created_at,
                    message=Outgoing(outbox_id=r.id, user_id=r.user_id, openid=r.wechat_openid, kind=r.kind,
                                     idempotency_key=r.idempotency_key, payload=r.payload,
                                     sent_parts=parts_of(r.receipt)))
            for r in rows if r.subscribed]


async def _template_blockers(session: AsyncSession, user_ids: set[int]) -> set[int]:
    """Users whose template message came back "failed:user block" (TEMPLATESENDJOBFINISH) since they last
    wrote or clicked: the template rung is closed to them, so their pushes go on to the in-app queue
    instead, until they interact with the account again (they may have unblocked it)."""
    if not user_ids:
        return set()
    return set((await session.scalars(select(OUTBOX.c.user_id).distinct()
                                      .join(UserRow, UserRow.id == OUTBOX.c.user_id).where(
        OUTBOX.c.user_id.in_(sorted(user_ids)), OUTBOX.c.failure_class == TEMPLATE_BLOCKED,
        OUTBOX.c.updated_at > func.coalesce(UserRow.last_user_message_at, 0),
        OUTBOX.c.updated_at > func.coalesce(UserRow.window_opened_at, 0)))).all())


async def mark_sending(session: AsyncSession, items: Sequence[Claimed], *, windowed: frozenset[str], now: int,
                       lease_ms: int, parts: Callable[[Outgoing], int] = lambda _message: 1
                       ) -> tuple[list[Claimed], list[Claimed]]:
    """Move our claimed rows to `sending`; rows on a windowed channel take their window slots in the same
    transaction (recorded on the row, so a replay after a crash never takes them again): one per message
    the platform will count (`parts`: a long text goes out as several). Pushes (reminders, digests)
    leave the window's last slot to answers (docs/delivery.md#window).

    Returns (ready to send, window closed); rows another worker took over are in neither.
    """
    if not items:
        return [], []
    ids = [i.row_id for i in items]
    result = await session.execute(
        update(OUTBOX).where(OUTBOX.c.id.in_(ids), OUTBOX.c.lock_token == items[0].token,
                             OUTBOX.c.status == "claimed")
        .values(status="sending", locked_until=now + lease_ms, updated_at=now))
    if rowcount(result) != len(ids):
        mine = set((await session.scalars(select(OUTBOX.c.id).where(
            OUTBOX.c.id.in_(ids), OUTBOX.c.lock_token == items[0].token, OUTBOX.c.status == "sending"))).all())
        items = [i for i in items if i.row_id in mine]
    need = [i for i in items if i.channel in windowed and i.window_reserved_at is None]
    if not need:
        return list(items), []
    users = sorted({i.message.user_id for i in need})  # locked in id order: no deadlock between workers
    states = {r.id: window.WindowState(r.window_kind, r.window_opened_at, r.window_sent_count or 0)
              for r in (await session.execute(
                  select(UserRow.id, UserRow.window_kind, UserRow.window_opened_at, UserRow.window_sent_count)
                  .where(UserRow.id.in_(users)).order_by(UserRow.id).with_for_update())).all()}
    reserved: list[int] = []
    closed: list[Claimed] = []
    counts: dict[int, int] = {}
    for item in need:
        state = states.get(item.message.user_id)
        count = max(1, parts(item.message))
        kept = 1 if item.message.kind in PUSH_KINDS else 0  # the last slot waits for an answer
        if state is None or window.remaining(state, now) < count + kept:
            closed.append(item)
            continue
        state = states[item.message.user_id] = window.after_send(state, count)
        counts[item.message.user_id] = state.sent_count
        reserved.append(item.row_id)
    for count, users_at in _grouped(counts).items():  # one cached statement per count (at most 5), not a CASE
        await session.execute(update(UserRow).where(UserRow.id.in_(users_at)).values(window_sent_count=count))
    if reserved:
        await session.execute(update(OUTBOX).where(OUTBOX.c.id.in_(reserved)).values(window_reserved_at=now))
    shut, took = {i.row_id for i in closed}, set(reserved)
    return [replace(i, window_reserved_at=now) if i.row_id in took else i
            for i in items if i.row_id not in shut], closed


async def renew(session: AsyncSession, items: Sequence[Claimed], *, now: int, lease_ms: int) -> None:
    """Extend the lease of a batch still in flight, rows sending or waiting their turn (fenced: rows
    taken over are left alone)."""
    if items:
        await session.execute(
            update(OUTBOX).where(OUTBOX.c.id.in_([i.row_id for i in items]), OUTBOX.c.lock_token == items[0].token,
                                 OUTBOX.c.status.in_(("claimed", "sending")))
            .values(locked_until=now + lease_ms))


async def release_stale(session: AsyncSession, *, now: int) -> int:
    """Expired claims go back to pending; expired sends become unknown and are replayed (at-least-once)."""
    # Pick rows first, skipping those another worker holds, then update by primary key:
    # a range UPDATE over the status index would wait on (and deadlock with) live claims.
    expired = (await session.execute(
        select(OUTBOX.c.id, OUTBOX.c.status)
        .where(or_(and_(OUTBOX.c.status.in_(("claimed", "sending")), OUTBOX.c.locked_until < now),
                   OUTBOX.c.status == "unknown"))
        .with_for_update(skip_locked=True))).all()
    back = [row.id for row in expired if row.status == "claimed"]
    # A custom message cannot be reconciled with WeChat: an expired send is `unknown`, and the parts
    # without a receipt are replayed (a duplicate beats a lost reminder). Its window slot is kept.
    replay = [row.id for row in expired if row.status in ("sending", "unknown")]
    if back:
        await session.execute(update(OUTBOX).where(OUTBOX.c.id.in_(back))
                              .values(status="pending", lock_token=None, locked_until=None, updated_at=now))
    if replay:
        await session.execute(update(OUTBOX).where(OUTBOX.c.id.in_(replay))
                              .values(status="pending", failure_class="unknown", lock_token=None, locked_until=None,
                                      next_attempt_at=now, updated_at=now))
    return sum(1 for row in expired if row.status != "unknown")


_FINISH = (
    update(OUTBOX)
    .where(OUTBOX.c.id == bindparam("b_id"), OUTBOX.c.lock_token == bindparam("b_token"))
    .values(status=bindparam("b_status"), receipt=bindparam("b_receipt"), channel=bindparam("b_channel"),
            next_attempt_at=bindparam("b_next"), failure_class=bindparam("b_failure"),
            window_reserved_at=bindparam("b_reserved"), attempts=bindparam("b_attempts"), lock_token=None,
            locked_until=None,
            updated_at=bindparam("b_now"))
)


class FencedOut(Exception):
    """`finish(assume_mine=True)` met a row another worker took over: roll back, then finish with the lookup."""


async def finish(session: AsyncSession, outcomes: Sequence[Outcome], *, now: int,
                 assume_mine: bool = False) -> list[Outcome]:
    """Commit a batch's outcomes under its fencing token, with their delivery logs; returns those committed.

    `assume_mine`: when every outcome is a send, skip the look-up of the rows still ours (a locking SELECT a
    commit, the receipt's hot path) and let the fenced UPDATE tell: if it matched fewer rows than it named, a
    lease was lost and FencedOut is raised before anything else is written; the caller rolls back and calls
    again without it."""
    if not outcomes:
        return []
    token = outcomes[0].item.token
    optimistic = assume_mine and all(o.status == "sent" for o in outcomes)
    if optimistic:
        done = list(outcomes)
    else:
        mine = set((await session.scalars(
            select(OUTBOX.c.id).where(OUTBOX.c.id.in_([o.item.row_id for o in outcomes]),
                                      OUTBOX.c.lock_token == token)
            .with_for_update())).all())
        done = [o for o in outcomes if o.item.row_id in mine]  # the rest were fenced out: another worker owns them
    if not done:
        return []
    conn = await session.connection()
    # The common case in a statement per distinct receipt (custom messages carry no msgid, so most share
    # one): executemany is a round trip per row on aiomysql, and a CASE is compiled anew every time.
    receipts: dict[str, tuple[Any, list[int]]] = {}
    for o in done:
        if o.status == "sent":
            receipt = _receipt(o)
            receipts.setdefault(json.dumps(receipt, sort_keys=True), (receipt, []))[1].append(o.item.row_id)
    for receipt, ids in receipts.values():
        result = await conn.execute(update(OUTBOX).where(OUTBOX.c.id.in_(ids), OUTBOX.c.lock_token == token)
                                    .values(status="sent", lock_token=None, locked_until=None, updated_at=now,
                                            receipt=receipt))
        if optimistic and rowcount(result) != len(ids):
            raise FencedOut(f"{len(ids) - rowcount(result)} of {len(ids)} rows are no longer this batch's")
    others = [_values(o, now) for o in done if o.status != "sent"]
    if others:
        await conn.execute(_FINISH, others)
    logs = [_log(o, now) for o in done if o.log is not None]
    if logs:
        await conn.execute(insert(LOGS), logs)
    for status in ("sent", "failed", "cancelled"):
        await _close_reminders(session, status, [o.item.reminder_id for o in done if o.status == status], now)
    closed = sorted({o.item.message.user_id for o in done if o.failure is not None and o.failure.failure == "window"
                     and o.failure.code in WINDOW_CLOSED_CODES})
    if closed:
        await window.close(session, closed)
    gone = sorted({o.item.message.user_id for o in done if o.failure is not None and o.failure.failure == "gone"
                   and o.status == "failed"})
    if gone:  # unreachable (unfollowed/blocked): stop every queued push to them
        await session.execute(update(UserRow).where(UserRow.id.in_(gone)).values(subscribed=False))
        await session.execute(update(OUTBOX).where(OUTBOX.c.user_id.in_(gone), OUTBOX.c.status == "pending")
                              .values(status="cancelled", updated_at=now))
    return done


def _receipt(o: Outcome) -> dict[str, Any] | None:
    """Every part delivered so far: earlier attempts', this one's, and those a failing attempt got out."""
    parts = {**o.item.message.sent_parts, **(o.receipt.parts if o.receipt else {}),
             **(o.failure.sent_parts if o.failure else {})}
    return Receipt(parts).as_json() if parts or o.receipt else None


def _values(o: Outcome, now: int) -> dict[str, Any]:
    item = o.item
    channel = o.channel or item.channel
    return {"b_id": item.row_id, "b_token": item.token, "b_status": o.status,
            "b_receipt": _receipt(o), "b_channel": channel,
            "b_next": o.next_attempt_at if o.next_attempt_at is not None else item.next_attempt_at,
            "b_failure": o.failure.failure if o.failure else item.failure_class,
            # a slot belongs to the rung that took it: moving down the ladder gives it up
            "b_reserved": item.window_reserved_at if channel == item.channel else None,
            "b_attempts": item.attempts, "b_now": now}  # one less than claimed when the attempt was given back


def _log(o: Outcome, now: int) -> dict[str, Any]:
    error = o.failure
    first = next((v for _, v in sorted(o.receipt.parts.items()) if v), None) if o.receipt else None
    return {"outbox_id": o.item.row_id, "reminder_id": o.item.reminder_id, "user_id": o.item.message.user_id,
            "channel": o.item.channel, "status": o.log, "provider_message_id": first if o.log == "success" else None,
            "error_code": (error.code or error.failure) if error else None,
            "error_message": str(error)[:500] if error else None, "created_at": now}


def _grouped(values: dict[int, int]) -> dict[int, list[int]]:
    """{id: value} → {value: [ids]}, for a cached UPDATE per value instead of a CASE over ids."""
    groups: dict[int, list[int]] = {}
    for key, value in values.items():
        groups.setdefault(value, []).append(key)
    return groups


async def _close_reminders(session: AsyncSession, status: str, ids: Sequence[int | None], now: int) -> None:
    wanted = [i for i in ids if i is not None]
    if wanted:
        await session.execute(update(ReminderRow).where(ReminderRow.id.in_(wanted))
                              .values(status=status, sent_at=now if status == "sent" else None, updated_at=now))
