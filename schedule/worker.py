"""The delivery worker: claims due outbox rows in batches, sends them concurrently through a Channel,
commits the batch's receipts in one transaction.

Claiming is one short transaction: `SELECT … FOR UPDATE SKIP LOCKED` + `UPDATE` on MariaDB/MySQL,
BEGIN IMMEDIATE (taken by the engine for every SQLite transaction) + the same statements on SQLite.
Each claim carries a fencing token; a receipt only commits under a matching token, so a worker
whose lease expired can never overwrite another worker's result. Leases are a few seconds long and
renewed while a batch is in flight, so a dead worker's rows go to another worker within seconds.

A crash replays little (docs/delivery.md): at most MAX_UNRECEIPTED sends are out without a committed receipt
(a send takes a slot that only its receipt's commit gives back, so new sends wait while receipts
commit), and a batch is marked `sending` LEAD rows at a time, just ahead of its sends, so a crash
leaves few rows holding window slots (at most 1.5 × LEAD a batch, plus the next batch's first LEAD).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import budget, claims, metrics, pauses
from schedule.budget import PushBudget
from schedule.channel import Channel, DeliveryFailure, Outgoing
from schedule.claims import Claimed, Outcome
from schedule.clock import Clock, from_ms, now_ms
from schedule.db import in_transaction
from schedule.firing import Scheduler
from schedule.model import DigestSubscriptionRow, OutboundMessageRow, ReminderRow
from schedule.outage import OutageLog
from schedule.retry import RetryPolicy

log = logging.getLogger(__name__)
PAUSES_REFRESH_MS = 1_000  # how often a worker reads the pauses other workers stored
FIRE_EVERY_MS = 100  # the scheduler's pace when its last pass found less than a batch
PIPELINE = 2  # batches in flight at once: one sending while the next is claimed
# A claim costs ~8 ms of CPU whatever its size on MariaDB (SQLAlchemy + aiomysql per statement), then ~0.1 ms
# a row: 256-row batches cost 0.2 ms a row less than 64-row ones. Leases are renewed while a batch sends,
# so a large batch only means more rows wait for a dead worker's 5 s lease to run out.
COALESCE_S = 0.02  # a receipt waits at most this long for others to share its commit
MAX_UNRECEIPTED = 64  # sends out without a committed receipt: what a kill -9 may replay (a crash replays little)
LEAD = 64  # rows of a batch marked `sending` ahead of their sends (the rest stay `claimed`)
# custom message → subscription message (a grant exists) → template message → in-app queue
LADDER = ("wechat", "subscribe", "template", "inapp")
ANSWER_LADDER = ("wechat", "inapp")  # answers and notices are no reminders: never a template or subscription
WINDOW_CLOSED = DeliveryFailure("window", "customer-service window closed or used up")
__all__ = ["ANSWER_LADDER", "LADDER", "Claimed", "DeliveryWorker", "TickReport"]


class Slots:
    """A FIFO bound on sends in flight with O(1) acquire and release. (asyncio.Semaphore in Python 3.11
    scans all its waiters on an acquire after a release; with a few batches queued that was ~4 % of the
    worker's CPU.)"""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def acquire(self) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # release() handed its slot straight to this waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot arrived as we were cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):  # release() may have dropped it already
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


@dataclass(frozen=True, slots=True)
class Batch:
    """A claimed batch: rows marked sending, rows whose customer-service window is closed, and rows still
    `claimed` (marked sending LEAD at a time as the sends reach them)."""

    ready: list[Claimed]
    closed: list[Claimed]
    later: list[Claimed] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ready) + len(self.closed) + len(self.later)


@dataclass(frozen=True, slots=True)
class TickReport:
    released: int = 0
    claimed: int = 0
    sent: int = 0
    failed: int = 0
    retried: int = 0
    queued: int = 0  # reminders and digests the scheduler moved into the outbox


class DeliveryWorker:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, channels: dict[str, Channel], *,
                 policy: RetryPolicy | None = None, lease_ms: int = 5_000, batch_size: int = 256,
                 poll_interval_s: float = 1.0, rand: random.Random | None = None,
                 scheduler: Scheduler | None = None, max_in_flight: int = 32,
                 max_unreceipted: int = MAX_UNRECEIPTED, lead: int = LEAD,
                 push_budget: PushBudget | None = None) -> None:
        self._sessions = sessions
        self._budget = push_budget or PushBudget()  # the account's template messages a day
        self._clock = clock
        self._channels = channels
        self._windowed = frozenset(name for name, c in channels.items() if getattr(c, "needs_window", False))
        self._policy = policy or RetryPolicy()
        self._lease_ms = lease_ms
        self._batch = batch_size
        self._poll_s = poll_interval_s
        self._rand = rand or random.Random()
        self._scheduler = scheduler
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._in_flight = max_in_flight
        self._pauses: dict[str, pauses.Pause] = {}
        self._new_pauses: dict[str, pauses.Pause] = {}
        self._pauses_read_at = -(1 << 62)
        self._fired_at = -(1 << 62)
        self._fire_again = False
        self._bound = Slots(max_in_flight)  # sends of all batches; matches the HTTP keep-alive pool
        self._unreceipted = Slots(max(max_unreceipted, max_in_flight))  # given back by the receipt's commit
        self._lead = lead
        # a commit starts once this many receipts wait (or COALESCE_S passed): sends go on meanwhile
        self._coalesce = max(1, max_unreceipted * 3 // 4)
        self._released_at = -(1 << 62)
        self._outage = OutageLog(log, "delivery tick", clock)  # a database outage: one traceback, not one a poll

    def notify(self) -> None:
        """Wake the loop now (called after a commit that queued something)."""
        self._fire_again = True
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    async def run(self) -> None:
        """Loop until stopped: straight on while there is work, else sleep until the next row, reminder
        or digest is due (at most the poll interval) or a wake-up.

        Batches are pipelined: the next one is fired and claimed while up to PIPELINE earlier ones are
        still sending (their sends share one bound), so the database round trips hide behind the API's
        latency. On stop, batches in flight finish and commit their receipts.
        """
        batches: set[asyncio.Task[list[Outcome]]] = set()

        def landed(task: asyncio.Task[list[Outcome]]) -> None:
            batches.discard(task)
            self._wake.set()  # retries and fallbacks it left may be due now; a slot is free
            if not task.cancelled() and task.exception() is not None:
                log.error("delivery batch failed; its rows go back after their lease",
                          exc_info=task.exception())

        try:
            while not self._stop.is_set():
                self._wake.clear()
                try:
                    queued = await self._fire()
                    await self._release_now_and_then()
                    claimed = await self._claim_batch() if len(batches) < PIPELINE else Batch([], [])
                    self._outage.recovered()
                    if claimed:
                        task = asyncio.create_task(self._deliver(claimed))
                        batches.add(task)
                        task.add_done_callback(landed)
                    if claimed or queued:
                        if len(batches) >= PIPELINE:
                            await asyncio.wait(batches, return_when=asyncio.FIRST_COMPLETED)
                        continue  # more may be waiting
                    pause = await self._until_next_due()
                except Exception as exc:
                    self._outage.failed(exc)
                    pause = self._poll_s
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=pause)
        finally:
            if batches:
                await asyncio.wait(batches)

    async def _until_next_due(self) -> float:
        now = now_ms(self._clock)
        held = self._held(now)

        async def work(session: AsyncSession) -> list[int | None]:
            return [
                await session.scalar(select(func.min(OutboundMessageRow.next_attempt_at)).where(
                    OutboundMessageRow.status == "pending", OutboundMessageRow.channel.not_in(["inapp", *held]))),
                min((p.until for p in self._pauses.values() if p.channel in held), default=None),
                await session.scalar(select(func.min(ReminderRow.remind_at)).where(ReminderRow.status == "pending")),
                await session.scalar(select(func.min(DigestSubscriptionRow.next_run_at)).where(
                    DigestSubscriptionRow.status == "active")) if self._scheduler is not None else None,
            ]

        due = [d for d in await in_transaction(self._sessions, work) if d is not None]
        if due and self._scheduler is None:
            due = due[:1]  # without a scheduler only the outbox is ours to watch
        gap = (min(due) - now) / 1000 if due else self._poll_s
        return min(self._poll_s, max(0.02, gap))

    async def run_once(self) -> TickReport:
        """One pass: queue due reminders/digests, release stale leases, claim a batch, deliver it.

        Tests drain the worker with this instead of waiting for real time to pass.
        """
        queued = await self._fire(force=True)
        released = await self._release_now_and_then()
        batch = await self._claim_batch()
        outcomes = await self._deliver(batch)
        return TickReport(released=released, claimed=len(batch), queued=queued,
                          sent=sum(o.status == "sent" for o in outcomes),
                          failed=sum(o.status == "failed" for o in outcomes),
                          retried=sum(o.status == "pending" for o in outcomes))

    async def _fire(self, *, force: bool = False) -> int:
        """Queue due reminders and digests: straight on while a pass fills its batch, else at most every
        FIRE_EVERY_MS (the claiming loop spins much faster than that under load)."""
        if self._scheduler is None:
            return 0
        now = now_ms(self._clock)
        if not (force or self._fire_again or now - self._fired_at >= FIRE_EVERY_MS or now < self._fired_at):
            return 0
        self._fired_at = now
        fired = await self._scheduler.tick()
        self._fire_again = fired.full
        return fired.reminders_queued + fired.digests_queued

    async def _release_now_and_then(self) -> int:
        if now_ms(self._clock) - self._released_at >= self._lease_ms // 3:  # stale leases are rare: look now and then
            return await self.release_stale()
        return 0

    # ---------------------------------------------------------------- claiming
    async def release_stale(self) -> int:
        now = self._released_at = now_ms(self._clock)
        return await in_transaction(self._sessions, lambda session: claims.release_stale(session, now=now))

    async def _claim_batch(self) -> Batch:
        """Lease a batch and mark its first LEAD rows sending, taking window slots, in one transaction."""
        now, token = now_ms(self._clock), str(uuid.uuid4())
        await self._read_pauses(now)
        held = self._held(now)

        async def work(session: AsyncSession) -> Batch:
            claimed = await claims.claim(session, token=token, now=now, lease_ms=self._lease_ms, limit=self._batch,
                                         held=held)
            claimed = await budget.take_template(session, claimed, self._budget, now_ms=now)  # the rest: in-app
            ready, closed = await claims.mark_sending(session, claimed[:self._lead], windowed=self._windowed,
                                                      now=now, lease_ms=self._lease_ms, parts=self._parts)
            return Batch(ready, closed, claimed[self._lead:])

        return await in_transaction(self._sessions, work)

    async def _mark_sending(self, items: list[Claimed]) -> tuple[list[Claimed], list[Claimed]]:
        now = now_ms(self._clock)
        return await in_transaction(self._sessions, lambda session: claims.mark_sending(
            session, items, windowed=self._windowed, now=now, lease_ms=self._lease_ms, parts=self._parts))

    def _parts(self, message: Outgoing) -> int:
        """Messages the platform will count for this row (a channel with `parts()` says; else one)."""
        counter = getattr(self._channels.get("wechat"), "parts", None)
        return int(counter(message)) if counter is not None else 1

    # ---------------------------------------------------------------- pauses shared by every worker
    def _held(self, now: int) -> list[str]:
        """Channels whose rows wait: rate-limited ones (a daily pause lets rows move down the ladder)."""
        return sorted(c for c, p in self._pauses.items() if p.until > now and not p.daily)

    async def _read_pauses(self, now: int) -> None:
        if now - self._pauses_read_at < PAUSES_REFRESH_MS:
            return
        self._pauses_read_at = now
        try:
            stored = await in_transaction(self._sessions, lambda session: pauses.active(session, now))
        except Exception as exc:  # deliveries go on under the pauses this worker knows of
            if not self._outage.failing:  # a database outage is the tick's to report, once
                log.warning("channel pauses could not be read (%s); using this worker's own", type(exc).__name__)
            return
        mine = {c: p for c, p in self._pauses.items() if p.until > now}
        self._pauses = {c: max((p for p in (stored.get(c), mine.get(c)) if p is not None), key=lambda p: p.until)
                        for c in {*stored, *mine}}

    def _paused(self, channel: str, failure: DeliveryFailure) -> None:
        """The platform said stop: stop this process's sends now; the database tells the other workers."""
        now = now_ms(self._clock)
        pause = pauses.pause_for(channel, failure, now)
        current = self._pauses.get(channel)
        if pause is None or (current is not None and current.until >= pause.until):
            return
        self._pauses[channel] = pause
        self._new_pauses[channel] = pause
        if failure.failure == "config":
            # one ERROR line per pause (an account-wide incident is also named by the WeChat client's line)
            log.log(logging.ERROR if failure.ladder else logging.WARNING,
                    "channel %s paused for every worker until %s: configuration incident (code %s), fix %s; %s",
                    channel, from_ms(pause.until).isoformat(), pause.code or "-", failure.setting or "the setup",
                    "rows go down the ladder" if pause.ladder else "rows wait without spending attempts")
            return
        log.warning("channel %s paused for every worker until %s (code %s: %s)", channel,
                    from_ms(pause.until).isoformat(), pause.code or "-",
                    "daily quota used up: rows go down the ladder" if pause.daily else "rate limited: rows wait")

    async def _share_pauses(self) -> None:
        if not self._new_pauses:
            return
        new, self._new_pauses = list(self._new_pauses.values()), {}
        now = now_ms(self._clock)

        async def record() -> None:
            await in_transaction(self._sessions, lambda session: pauses.record(session, new, now))

        try:
            try:
                await record()
            except IntegrityError:  # another worker inserted the same channel meanwhile: now it updates
                await record()
        except Exception as exc:  # the pause still holds in this process; the receipts are committed
            log.warning("channel pause not stored (%s); this worker keeps it and tries again", exc)
            self._new_pauses.update({p.channel: p for p in new if p.channel not in self._new_pauses})

    # ---------------------------------------------------------------- sending
    async def _deliver(self, batch: Batch) -> list[Outcome]:
        """Send the batch concurrently; receipts are group-committed as sends complete (whatever finished
        while the previous commit ran). A send first takes one of the MAX_UNRECEIPTED slots, which its
        receipt's commit gives back: a crash replays at most those sends."""
        if not batch:
            return []
        buffer = [self._failed(i, WINDOW_CLOSED) for i in batch.closed]
        taken = given = holding = 0  # unreceipted slots taken, given back, held by outcomes in `buffer`
        arrived, full = asyncio.Event(), asyncio.Event()

        async def send(item: Claimed) -> None:
            nonlocal holding
            await self._bound.acquire()
            try:
                outcome = await self._send(item)
            finally:
                self._bound.release()
            buffer.append(outcome)
            holding += 1
            arrived.set()
            if len(buffer) >= self._coalesce:
                full.set()

        async def feed() -> None:
            """Start the sends in order, each once it has an unreceipted slot. The next LEAD rows are marked
            sending while the last half of the marked ones start (the transaction hides behind their sends),
            so at most 1.5 × LEAD rows of the batch are `sending` without having gone out."""
            nonlocal taken
            ready, later, started = list(batch.ready), list(batch.later), []
            marking: asyncio.Task[tuple[list[Claimed], list[Claimed]]] | None = None
            try:
                while ready or later or marking is not None:
                    await self._unreceipted.acquire()
                    taken += 1
                    while not ready and (later or marking is not None):
                        if marking is None:
                            marking = asyncio.create_task(self._mark_sending(later[:self._lead]))
                            later = later[self._lead:]
                        marked, closed = await marking
                        marking = None
                        ready.extend(marked)
                        if closed:
                            buffer.extend(self._failed(i, WINDOW_CLOSED) for i in closed)
                            arrived.set()
                    if not ready:  # the rest were window-closed or taken over
                        break
                    started.append(asyncio.create_task(send(ready.pop(0))))
                    if marking is None and later and len(ready) <= self._lead // 2:
                        marking = asyncio.create_task(self._mark_sending(later[:self._lead]))
                        later = later[self._lead:]
                await asyncio.gather(*started)
            finally:
                if marking is not None:
                    marking.cancel()
                for task in started:
                    task.cancel()

        renewal = asyncio.create_task(self._renew([*batch.ready, *batch.later]))
        sends = asyncio.ensure_future(feed())
        committed: list[Outcome] = []
        try:
            while buffer or not sends.done():
                if not buffer:
                    arrived.clear()
                    waiter = asyncio.ensure_future(arrived.wait())
                    await asyncio.wait((sends, waiter), return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                    continue
                if not sends.done() and len(buffer) < self._coalesce:  # more receipts join this commit
                    full.clear()
                    waiter = asyncio.ensure_future(full.wait())
                    await asyncio.wait((sends, waiter), timeout=COALESCE_S, return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                chunk, buffer[:], held, holding = list(buffer), [], holding, 0
                committed += await self._finish(chunk)
                for _ in range(held):
                    self._unreceipted.release()
                given += held
            await sends
        finally:
            renewal.cancel()
            sends.cancel()
            for _ in range(taken - given):  # sends cut short or receipts not committed: replayed after the lease
                self._unreceipted.release()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
        return committed

    async def _finish(self, outcomes: list[Outcome]) -> list[Outcome]:
        now = now_ms(self._clock)
        try:  # a lease lost meanwhile is rare: first without looking up which rows are still ours
            done = await in_transaction(self._sessions, lambda session: claims.finish(
                session, outcomes, now=now, assume_mine=True))
        except claims.FencedOut:
            done = await in_transaction(self._sessions, lambda session: claims.finish(session, outcomes, now=now))
        await self._share_pauses()
        _count(done, now)
        return done

    async def _renew(self, items: Sequence[Claimed]) -> None:
        """Keep the batch's lease while its sends are in flight (a slow API never lets it lapse)."""
        while items:
            await asyncio.sleep(self._lease_ms / 3000)
            now = now_ms(self._clock)
            try:
                await in_transaction(self._sessions, lambda session, at=now: claims.renew(  # type: ignore[misc]
                    session, items, now=at, lease_ms=self._lease_ms))
            except Exception:
                log.warning("lease renewal failed; retrying", exc_info=True)

    async def _send(self, item: Claimed) -> Outcome:
        channel = self._channels.get(item.channel)
        try:
            if channel is None:
                raise DeliveryFailure("window", f"channel {item.channel!r} is not configured")
            if item.channel == "template" and item.template_blocked:
                raise DeliveryFailure("window", "the user blocks template messages")
            if item.channel == "template" and item.message.kind not in claims.PUSH_KINDS:
                raise DeliveryFailure("window", "an answer never goes through the reminder template")
            pause, now = self._pauses.get(item.channel), now_ms(self._clock)
            if pause is not None and pause.until > now:
                return self._failed(item, pause.failure(now), called=False)  # no call: it would be refused
            try:
                receipt = await channel.send(item.message)
            except DeliveryFailure as failure:
                self._paused(item.channel, failure)
                raise
        except DeliveryFailure as failure:
            return self._failed(item, failure)
        except Exception as exc:  # a bug or an unexpected library error: classify as unknown, keep the row
            log.exception("channel %s raised unexpectedly for outbox %s", item.channel, item.row_id)
            return self._failed(item, DeliveryFailure("unknown", type(exc).__name__))
        return Outcome(item, "sent", receipt=receipt, log="success")

    def _failed(self, item: Claimed, failure: DeliveryFailure, *, called: bool = True) -> Outcome:
        now = now_ms(self._clock)
        decision = self._policy.decide(failure, attempts=item.attempts, now_ms=now, rand=self._rand,
                                       due_ms=item.due_at, called=called)
        if decision.refund:
            item = replace(item, attempts=item.attempts - 1)  # given back: a pause or an incident is no try
        if decision.fallback:
            ladder = LADDER if item.message.kind in claims.PUSH_KINDS else ANSWER_LADDER
            rung = ladder.index(item.channel) + 1 if item.channel in ladder else len(ladder) - 1
            next_channel = next((c for c in ladder[rung:] if c in self._channels or c == "inapp"), "inapp")
            log.info("outbox %s fell back from %s to %s (%s)", item.row_id, item.channel, next_channel,
                     failure.code or failure.failure)
            return Outcome(item, "pending", channel=next_channel, next_attempt_at=now, failure=failure, log="failed")
        if decision.retry_at_ms is not None:
            return Outcome(item, "pending", next_attempt_at=decision.retry_at_ms, failure=failure, log="failed")
        if failure.failure == "gone":
            log.info("user %s is unreachable: pushes stopped", item.message.user_id)
        else:
            log.warning("outbox %s failed for good after %d attempts (%s %s)", item.row_id, item.attempts,
                        failure.failure, failure.code or "-")
        return Outcome(item, "failed", failure=failure, log="failed")


def _count(done: Sequence[Outcome], now: int) -> None:
    """Metrics of committed outcomes (attempts, failures, fallbacks, due→sent)."""
    for o in done:
        if o.log is not None:
            metrics.ATTEMPTS.labels(o.item.channel, "sent" if o.status == "sent" else "failed").inc()
        if o.failure is not None:
            metrics.FAILURES.labels(o.item.channel, o.failure.failure).inc()
        if o.channel is not None and o.channel != o.item.channel:
            metrics.FELL_BACK.labels(o.item.channel).inc()
        if o.status == "sent":
            metrics.DUE_TO_SENT.observe(max(0, now - o.item.due_at) / 1000)
