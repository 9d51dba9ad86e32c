"""The delivery worker: claims due outbox rows, sends them through a Channel, commits receipts.

Claiming is one short transaction: `SELECT … FOR UPDATE SKIP LOCKED` + `UPDATE` on MariaDB/MySQL,
BEGIN IMMEDIATE (taken by the engine for every SQLite transaction) + the same statements on SQLite.
Each claim carries a fencing token; a receipt only commits under a matching token, so a worker
whose lease expired can never overwrite another worker's result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import window
from schedule.channel import Channel, DeliveryFailure, Outgoing, Receipt, parts_of
from schedule.clock import Clock, now_ms
from schedule.db import in_transaction
from schedule.firing import Scheduler
from schedule.model import DeliveryLogRow, OutboundMessageRow, ReminderRow, UserRow
from schedule.retry import RetryPolicy

log = logging.getLogger(__name__)
LADDER = ("wechat", "template", "inapp")  # custom message → template message → in-app queue


@dataclass(frozen=True, slots=True)
class Claimed:
    row_id: int
    token: str
    message: Outgoing
    channel: str
    attempts: int
    timezone: str
    reminder_id: int | None


@dataclass(frozen=True, slots=True)
class TickReport:
    released: int = 0
    claimed: int = 0
    sent: int = 0
    failed: int = 0
    retried: int = 0


class DeliveryWorker:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, channels: dict[str, Channel], *,
                 policy: RetryPolicy | None = None, lease_ms: int = 60_000, batch_size: int = 20,
                 poll_interval_s: float = 1.0, rand: random.Random | None = None,
                 scheduler: Scheduler | None = None) -> None:
        self._sessions = sessions
        self._clock = clock
        self._channels = channels
        self._policy = policy or RetryPolicy()
        self._lease_ms = lease_ms
        self._batch = batch_size
        self._poll_s = poll_interval_s
        self._rand = rand or random.Random()
        self._scheduler = scheduler
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()

    def notify(self) -> None:
        """Wake the loop now (called after a commit that queued something)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    async def run(self) -> None:
        """Loop until stopped: each tick reads the clock once, then waits for a wake-up or the poll interval."""
        while not self._stop.is_set():
            try:
                report = await self.run_once()
            except Exception:
                log.exception("delivery tick failed; retrying after the poll interval")
                report = TickReport()
            if report.claimed >= self._batch:
                continue  # more may be waiting
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._poll_s)
            self._wake.clear()

    async def run_once(self) -> TickReport:
        """One pass: queue due reminders/digests, release stale leases, claim a batch, deliver it.

        Tests drain the worker with this instead of waiting for real time to pass.
        """
        if self._scheduler is not None:
            await self._scheduler.tick()
        released = await self.release_stale()
        claimed = await self.claim()
        sent = failed = retried = 0
        for item in claimed:
            outcome = await self._deliver(item)
            sent += outcome == "sent"
            failed += outcome == "failed"
            retried += outcome == "retry"
        return TickReport(released=released, claimed=len(claimed), sent=sent, failed=failed, retried=retried)

    # ---------------------------------------------------------------- claiming
    async def release_stale(self) -> int:
        """Expired claims go back to pending; expired sends become unknown and are replayed (at-least-once)."""
        now = now_ms(self._clock)

        async def work(session: AsyncSession) -> int:
            # Pick rows first, skipping those another worker holds, then update by primary key:
            # a range UPDATE over the status index would wait on (and deadlock with) live claims.
            expired = (await session.execute(
                select(OutboundMessageRow.id, OutboundMessageRow.status)
                .where(or_(and_(OutboundMessageRow.status.in_(("claimed", "sending")),
                                OutboundMessageRow.locked_until < now),
                           OutboundMessageRow.status == "unknown"))
                .with_for_update(skip_locked=True))).all()
            back = [row.id for row in expired if row.status == "claimed"]
            # A custom message cannot be reconciled with WeChat: an expired send is `unknown`, and the
            # parts without a receipt are replayed (a duplicate beats a lost reminder).
            replay = [row.id for row in expired if row.status in ("sending", "unknown")]
            if back:
                await session.execute(
                    update(OutboundMessageRow).where(OutboundMessageRow.id.in_(back))
                    .values(status="pending", lock_token=None, locked_until=None, updated_at=now))
            if replay:
                await session.execute(
                    update(OutboundMessageRow).where(OutboundMessageRow.id.in_(replay))
                    .values(status="pending", failure_class="unknown", lock_token=None, locked_until=None,
                            next_attempt_at=now, updated_at=now))
            return sum(1 for row in expired if row.status != "unknown")

        return await in_transaction(self._sessions, work)

    async def claim(self) -> list[Claimed]:
        now = now_ms(self._clock)
        token = str(uuid.uuid4())

        async def work(session: AsyncSession) -> list[Any]:
            ids: Sequence[int] = (await session.scalars(
                select(OutboundMessageRow.id)
                .where(OutboundMessageRow.status == "pending", OutboundMessageRow.next_attempt_at <= now,
                       OutboundMessageRow.channel != "inapp")
                .order_by(OutboundMessageRow.next_attempt_at, OutboundMessageRow.id)
                .limit(self._batch)
                .with_for_update(skip_locked=True))).all()
            if not ids:
                return []
            await session.execute(
                update(OutboundMessageRow)
                .where(OutboundMessageRow.id.in_(ids), OutboundMessageRow.status == "pending")
                .values(status="claimed", lock_token=token, locked_until=now + self._lease_ms,
                        attempts=OutboundMessageRow.attempts + 1, updated_at=now))
            return list((await session.execute(
                select(OutboundMessageRow, UserRow.wechat_openid, UserRow.timezone, UserRow.subscribed)
                .join(UserRow, UserRow.id == OutboundMessageRow.user_id)
                .where(OutboundMessageRow.id.in_(ids), OutboundMessageRow.lock_token == token))).all())

        rows = await in_transaction(self._sessions, work)
        claimed = []
        for row, openid, timezone, subscribed in rows:
            if not subscribed:
                await self._finish(row.id, token, status="cancelled", reminder_id=row.reminder_id)
                continue
            claimed.append(Claimed(
                row_id=row.id, token=token, channel=row.channel, attempts=row.attempts, timezone=timezone,
                reminder_id=row.reminder_id,
                message=Outgoing(outbox_id=row.id, user_id=row.user_id, openid=openid, kind=row.kind,
                                 idempotency_key=row.idempotency_key, payload=row.payload,
                                 sent_parts=parts_of(row.receipt))))
        return claimed

    # ---------------------------------------------------------------- sending
    async def _deliver(self, item: Claimed) -> str:
        if not await self._mark_sending(item):
            return "lost"  # our lease was taken over; the other worker owns the row now
        channel = self._channels.get(item.channel)
        try:
            if channel is None:
                raise DeliveryFailure("window", f"channel {item.channel!r} is not configured")
            if getattr(channel, "needs_window", False) and not await self._reserve_window(item):
                raise DeliveryFailure("window", "customer-service window closed or used up")
            receipt = await channel.send(item.message)
        except DeliveryFailure as failure:
            return await self._failed(item, failure)
        except Exception as exc:  # a bug or an unexpected library error: classify as unknown, keep the row
            log.exception("channel %s raised unexpectedly for outbox %s", item.channel, item.row_id)
            return await self._failed(item, DeliveryFailure("unknown", type(exc).__name__))
        parts = {**item.message.sent_parts, **receipt.parts}
        await self._finish(item.row_id, item.token, status="sent", receipt=Receipt(parts),
                           reminder_id=item.reminder_id, log=("success", item, None))
        return "sent"

    async def _reserve_window(self, item: Claimed) -> bool:
        """Count this send against the user's customer-service window (5 per 48 h, 3 per click minute)."""
        stamp = now_ms(self._clock)
        return await in_transaction(self._sessions,
                                    lambda session: window.record_send(session, item.message.user_id, stamp))

    async def _mark_sending(self, item: Claimed) -> bool:
        now = now_ms(self._clock)

        async def work(session: AsyncSession) -> bool:
            result = await session.execute(
                update(OutboundMessageRow)
                .where(OutboundMessageRow.id == item.row_id, OutboundMessageRow.lock_token == item.token,
                       OutboundMessageRow.status == "claimed")
                .values(status="sending", locked_until=now + self._lease_ms, updated_at=now))
            return bool(getattr(result, "rowcount", 0))

        return await in_transaction(self._sessions, work)

    async def _failed(self, item: Claimed, failure: DeliveryFailure) -> str:
        now = now_ms(self._clock)
        decision = self._policy.decide(failure, attempts=item.attempts, now_ms=now, tz=item.timezone, rand=self._rand)
        receipt = Receipt({**item.message.sent_parts, **failure.sent_parts})
        if decision.fallback:
            rung = LADDER.index(item.channel) + 1 if item.channel in LADDER else len(LADDER) - 1
            next_channel = next((c for c in LADDER[rung:] if c in self._channels or c == "inapp"), "inapp")
            await self._finish(item.row_id, item.token, status="pending", receipt=receipt, channel=next_channel,
                               next_attempt_at=now, failure=failure.failure, log=("failed", item, failure))
            return "retry"
        if decision.retry_at_ms is not None:
            await self._finish(item.row_id, item.token, status="pending", receipt=receipt,
                               next_attempt_at=decision.retry_at_ms, failure=failure.failure,
                               log=("failed", item, failure))
            return "retry"
        await self._finish(item.row_id, item.token, status="failed", receipt=receipt, failure=failure.failure,
                           reminder_id=item.reminder_id, log=("failed", item, failure))
        if failure.failure == "gone":
            await self._stop_user(item.message.user_id)
        return "failed"

    async def _finish(self, row_id: int, token: str, *, status: str, receipt: Receipt | None = None,
                      channel: str | None = None, next_attempt_at: int | None = None, failure: str | None = None,
                      reminder_id: int | None = None,
                      log: tuple[str, Claimed, DeliveryFailure | None] | None = None) -> None:
        """Commit the outcome only under our fencing token, with its delivery log, in one transaction."""
        now = now_ms(self._clock)
        values: dict[str, object] = {"status": status, "lock_token": None, "locked_until": None, "updated_at": now}
        if receipt is not None:
            values["receipt"] = receipt.as_json()
        if channel is not None:
            values["channel"] = channel
        if next_attempt_at is not None:
            values["next_attempt_at"] = next_attempt_at
        if failure is not None:
            values["failure_class"] = failure
        await in_transaction(self._sessions, lambda session: self._commit_outcome(
            session, row_id, token, values, status=status, receipt=receipt, reminder_id=reminder_id, log=log,
            now=now))

    async def _commit_outcome(self, session: AsyncSession, row_id: int, token: str, values: dict[str, object], *,
                              status: str, receipt: Receipt | None, reminder_id: int | None,
                              log: tuple[str, Claimed, DeliveryFailure | None] | None, now: int) -> None:
        result = await session.execute(
            update(OutboundMessageRow)
            .where(OutboundMessageRow.id == row_id, OutboundMessageRow.lock_token == token)
            .values(**values))
        if not getattr(result, "rowcount", 0):
            return  # fenced out: another worker holds the row
        if log is not None:
            outcome, item, error = log
            session.add(DeliveryLogRow(
                outbox_id=row_id, reminder_id=item.reminder_id, user_id=item.message.user_id,
                channel=item.channel, status=outcome,
                provider_message_id=_first_id(receipt) if outcome == "success" else None,
                error_code=(error.code or error.failure) if error else None,
                error_message=str(error)[:500] if error else None, created_at=now))
        if reminder_id is not None and status in ("sent", "failed", "cancelled"):
            await session.execute(
                update(ReminderRow).where(ReminderRow.id == reminder_id)
                .values(status=status, sent_at=now if status == "sent" else None, updated_at=now))

    async def _stop_user(self, user_id: int) -> None:
        """The user is unreachable (unfollowed/blocked): stop every queued push to them."""
        now = now_ms(self._clock)

        async def work(session: AsyncSession) -> None:
            await session.execute(update(UserRow).where(UserRow.id == user_id).values(subscribed=False))
            await session.execute(
                update(OutboundMessageRow)
                .where(OutboundMessageRow.user_id == user_id, OutboundMessageRow.status == "pending")
                .values(status="cancelled", updated_at=now))

        await in_transaction(self._sessions, work)


def _first_id(receipt: Receipt | None) -> str | None:
    if receipt is None:
        return None
    return next((v for _, v in sorted(receipt.parts.items()) if v), None)
