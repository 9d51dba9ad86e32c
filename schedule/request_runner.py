"""Running requests the bot was asked to do later: due runs are claimed in turns (schedule.turns: one at a time
per user, users in round robin, `concurrency` per process) with a lease, run outside any transaction (an LLM may
take seconds), then finished under the lock token. The answer's outbox row is keyed `request:{id}:{run_at}`, so a
run repeated after a lapsed lease still pushes once, and a request cancelled (or a user forgotten) while its run
was in flight pushes nothing. A failed run is tried once more after `retry_after_ms`; a second failure queues a
short notice and the series goes on. Answers count against the user's push budget (schedule.budget).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import budget, outbox
from schedule.budget import Firing, PushBudget
from schedule.clock import Clock, from_ms, to_ms
from schedule.db import in_transaction, rowcount
from schedule.domain import ScheduledRequest
from schedule.outage import OutageLog
from schedule.requests import R, next_run, request_of
from schedule.turns import Turns, claim

log = logging.getLogger(__name__)
ANSWER_KIND = "digest"  # the outbox kind of an answer: a scheduled push like the daily digest (template rung too)


class RequestFailed(Exception):
    """A run that produced no answer (the LLM failed or timed out): retried once, then a notice."""


class Answerer(Protocol):
    async def __call__(self, request: ScheduledRequest, *, run_at: datetime) -> str:
        """The answer to push; raises RequestFailed (or anything) when there is none."""
        ...


FailedText = Callable[[ScheduledRequest, "datetime | None"], str]
"""`failed_text(request, next_run)`: the short notice after a run failed twice."""


@dataclass(frozen=True, slots=True)
class RunReport:
    claimed: int = 0
    answered: int = 0
    retrying: int = 0
    failed: int = 0
    missed: int = 0


class RequestRunner:
    """Claims due requests in turns, runs them through the `Answerer`, queues their answers. `run_once()` runs
    one round (tests); `run()` keeps up to `concurrency` runs going until `stop()`, starting the next one as a
    run ends, else sleeping until the next run is due or the poll interval."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, answer: Answerer, *,
                 failed_text: FailedText, missed_text: Callable[[ScheduledRequest], str],
                 lease_ms: int = 180_000, retry_after_ms: int = 60_000, catchup_hours: int = 12,
                 concurrency: int = 2, poll_interval_s: float = 1.0, push_budget: PushBudget | None = None,
                 on_queued: Callable[[], None] | None = None) -> None:
        self._sessions = sessions
        self._clock = clock
        self._answer = answer
        self._failed_text = failed_text
        self._missed_text = missed_text
        self._lease_ms = lease_ms  # longer than a run's whole budget (timeout × retries × tool rounds)
        self._retry_ms = retry_after_ms
        self._catchup_ms = catchup_hours * 3_600_000
        self._concurrency = concurrency
        self._poll_s = poll_interval_s
        self._on_queued = on_queued
        self._turns = Turns()
        self._budget = push_budget or PushBudget()
        self._stop = asyncio.Event()
        self._outage = OutageLog(log, "scheduled requests pass", clock)

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        running: dict[asyncio.Task[str], int] = {}  # run → its user
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            while not self._stop.is_set():
                pause = self._poll_s
                try:
                    started = await self._start(running)
                    if not running:
                        pause = await self._until_next_due()
                    elif started and len(running) < self._concurrency:
                        pause = 0.0  # slots left: other users may be due now
                    self._outage.recovered()
                except Exception as exc:
                    self._outage.failed(exc)
                if pause > 0:
                    done, _ = await asyncio.wait([stopping, *running], timeout=pause,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    self._landed(running, done)
        finally:
            stopping.cancel()
            if running:  # runs in flight finish; cancelled (stop timed out), they are cut short with the loop
                try:
                    self._landed(running, (await asyncio.wait(running))[0])
                except asyncio.CancelledError:
                    for task in running:
                        task.cancel()
                    raise

    async def _start(self, running: dict[asyncio.Task[str], int]) -> int:
        claimed, token = await self._claim(self._concurrency - len(running), set(running.values()))
        for request in claimed:
            running[asyncio.create_task(self._run(request, token))] = request.user_id
        return len(claimed)

    def _landed(self, running: dict[asyncio.Task[str], int], done: set[Any]) -> None:
        queued = False
        for task in done:
            if task in running:
                del running[task]
                if task.cancelled():
                    continue
                if task.exception() is not None:
                    log.error("scheduled request run failed; it runs again after its lease",
                              exc_info=task.exception())
                else:
                    queued = queued or task.result() in ("answered", "failed", "missed")
        if queued and self._on_queued is not None:
            self._on_queued()

    async def _until_next_due(self) -> float:
        now = to_ms(self._clock.now())

        due = await in_transaction(self._sessions, lambda session: session.scalar(
            select(func.min(func.coalesce(R.locked_until, R.run_at))).where(R.status == "active")))
        return self._poll_s if due is None else min(self._poll_s, max(0.05, (due - now) / 1000))

    async def run_once(self) -> RunReport:
        """One round: up to `concurrency` due requests (one per user, in turns), run together."""
        claimed, token = await self._claim(self._concurrency, set())
        if not claimed:
            return RunReport()
        outcomes = await asyncio.gather(*(self._run(r, token) for r in claimed))
        report = RunReport(claimed=len(claimed), answered=outcomes.count("answered"),
                           retrying=outcomes.count("retrying"), failed=outcomes.count("failed"),
                           missed=outcomes.count("missed"))
        if (report.answered or report.failed or report.missed) and self._on_queued is not None:
            self._on_queued()
        return report

    async def _claim(self, slots: int, busy: set[int]) -> tuple[list[ScheduledRequest], str]:
        now_ms, token = to_ms(self._clock.now()), str(uuid.uuid4())

        async def work(session: AsyncSession) -> list[ScheduledRequest]:
            ids = await claim(session, self._turns, slots=slots, busy=busy, token=token, now_ms=now_ms,
                              lease_ms=self._lease_ms)
            if not ids:
                return []
            rows = (await session.scalars(select(R).where(R.id.in_(ids)).order_by(R.run_at, R.id))).all()
            return [request_of(r) for r in rows]

        return await in_transaction(self._sessions, work), token

    async def _run(self, request: ScheduledRequest, token: str) -> str:
        run_at = from_ms(request.run_at)
        if to_ms(self._clock.now()) - request.run_at > self._catchup_ms:
            log.info("scheduled request %s missed its run (downtime); reported in the in-app queue", request.id)
            await self._finish(request, token, key=f"request-missed:{request.id}:{request.run_at}", kind="notice",
                               text=self._missed_text(request), channel="inapp")
            return "missed"
        try:
            answer = await self._answer(request, run_at=run_at)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:200]
            if request.attempts < 1:  # one retry, after a pause
                log.info("scheduled request %s failed (%s); one retry", request.id, type(exc).__name__)
                await in_transaction(self._sessions, lambda s: self._retry(s, request, token, error))
                return "retrying"
            log.warning("scheduled request %s failed twice (%s); the user gets a notice", request.id,
                        type(exc).__name__)
            upcoming = next_run(request, after=max(run_at, self._clock.now()))
            await self._finish(request, token, key=f"request-failed:{request.id}:{request.run_at}", kind="notice",
                               text=self._failed_text(request, upcoming), error=error)
            return "failed"
        if not await self._finish(request, token, key=f"request:{request.id}:{request.run_at}", kind=ANSWER_KIND,
                                  text=answer):
            return "lost"
        return "answered"

    async def _retry(self, session: AsyncSession, request: ScheduledRequest, token: str, error: str) -> None:
        now = to_ms(self._clock.now())
        await session.execute(update(R).where(R.id == request.id, R.lock_token == token).values(
            attempts=request.attempts + 1, locked_until=now + self._retry_ms, lock_token=None, last_error=error,
            updated_at=now).execution_options(synchronize_session=False))

    async def _finish(self, request: ScheduledRequest, token: str, *, key: str, kind: str, text: str,
                      channel: str = "wechat", error: str | None = None) -> bool:
        """Move the request on to its next run and queue the push, in one transaction, only while the claim
        is still ours and the request still active (cancelled meanwhile: nothing is pushed)."""
        now = self._clock.now()
        upcoming = next_run(request, after=max(from_ms(request.run_at), now))
        values: dict[str, Any] = {"attempts": 0, "locked_until": None, "lock_token": None, "last_error": error,
                                  "updated_at": to_ms(now)}
        values.update({"run_at": to_ms(upcoming)} if upcoming is not None else {"status": "done"})

        async def work(session: AsyncSession) -> bool:
            moved = await session.execute(update(R).where(R.id == request.id, R.lock_token == token,
                                                          R.status == "active")
                                          .values(**values).execution_options(synchronize_session=False))
            if not rowcount(moved):
                return False
            when = from_ms(request.run_at).astimezone(ZoneInfo(request.timezone)).strftime("%Y-%m-%d %H:%M")
            push: dict[str, Any] = {"user_id": request.user_id, "channel": channel, "payload": {
                "text": text, "title": request.title[:20], "when": when, "request_id": request.id,
                "due_at": request.run_at, "tz": request.timezone}}
            if kind == ANSWER_KIND:  # an answer is a push like a reminder: within the user's budgets
                series = budget.request_series(request.id) if request.recurrence is not None else None
                await budget.hold_pushes(session, [Firing(push, series, request.run_at)], self._budget,
                                         now_ms=to_ms(now))
            await outbox.enqueue(session, user_id=request.user_id, idempotency_key=key, kind=kind,
                                 payload=push["payload"], channel=push["channel"], now_ms=to_ms(now))
            return True

        done = await in_transaction(self._sessions, work)
        if not done:
            log.info("scheduled request %s: claim lost or request cancelled while it ran; nothing pushed",
                     request.id)
        return done
