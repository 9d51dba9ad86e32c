"""Requests the bot runs later (issue 30): stored like reminders (a first run and maybe a series), run once per
occurrence whatever the number of workers, and answered by a push through the outbox.

A user keeps at most a quota of active requests, counted under a lock on the user's row with the insert. Due
runs are claimed in turns (schedule.turns: one at a time per user, users in round robin, `concurrency` per
process) with a lease, run outside any transaction (an LLM may take seconds), then finished under the lock
token: the answer's outbox row is keyed `request:{id}:{run_at}`, so a run repeated after a lapsed lease still
pushes once, and a request cancelled (or a user forgotten) while its run was in flight pushes nothing. A failed
run is tried once more after `retry_after_ms`; a second failure queues a short notice and the series goes on.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import outbox
from schedule.clock import Clock, from_ms, to_ms
from schedule.db import in_transaction
from schedule.domain import AgendaQuery, Lunar, NewRequest, Recurrence, ScheduledRequest
from schedule.model import ScheduledRequestRow, UserRow
from schedule.recurrence import next_occurrence
from schedule.turns import Turns, claim

log = logging.getLogger(__name__)
R = ScheduledRequestRow
__all__ = ["AgendaQuery", "NewRequest", "RequestRunner", "ScheduledRequest"]
ANSWER_KIND = "digest"  # the outbox kind of an answer: a scheduled push like the daily digest (template rung too)


class QuotaReached(Exception):
    """The user already keeps `limit` active requests: nothing was stored."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} active scheduled requests")
        self.limit = limit


class RequestFailed(Exception):
    """A run that produced no answer (the LLM failed or timed out): retried once, then a notice."""


class Answerer(Protocol):
    async def __call__(self, request: ScheduledRequest, *, run_at: datetime) -> str:
        """The answer to push; raises RequestFailed (or anything) when there is none."""
        ...


FailedText = Callable[[ScheduledRequest, "datetime | None"], str]
"""`failed_text(request, next_run)`: the short notice after a run failed twice."""


def request_of(row: ScheduledRequestRow) -> ScheduledRequest:
    query = AgendaQuery(**row.query) if row.query else None
    recurrence = None
    if row.rrule or row.workdays or row.lunar:
        recurrence = Recurrence(rrule=row.rrule, workdays=row.workdays, lunar=Lunar(**row.lunar) if row.lunar else None)
    return ScheduledRequest(id=row.id, user_id=row.user_id, text=row.text, title=row.title, remind=row.remind,
                            query=query, timezone=row.timezone, first_at=row.first_at, recurrence=recurrence,
                            status=row.status, run_at=row.run_at, attempts=row.attempts)


# ------------------------------------------------------------------ the store (inside the caller's transaction)
async def add(session: AsyncSession, user_id: int, new: NewRequest, *, now_ms: int,
              limit: int | None = None) -> ScheduledRequest:
    """Store a request; with `limit`, only while the user keeps fewer active ones (else QuotaReached). The
    count runs under a lock on the user's row, so concurrent adds never overshoot."""
    if limit is not None:
        await session.scalar(select(UserRow.id).where(UserRow.id == user_id).with_for_update())
        held = await session.scalar(select(func.count()).select_from(R).where(R.user_id == user_id,
                                                                              R.status == "active"))
        if (held or 0) >= limit:
            raise QuotaReached(limit)
    rec = new.recurrence
    lunar = None
    if rec is not None and rec.lunar is not None:
        lunar = {"month": rec.lunar.month, "day": rec.lunar.day, "leap": rec.lunar.leap}
    row = R(user_id=user_id, text=new.text, title=new.title[:100], remind=(new.remind or None) and new.remind[:200],
            query=new.query.to_json() if new.query else None, timezone=new.timezone, first_at=new.first_at,
            rrule=rec.rrule if rec else None, workdays=rec.workdays if rec else None, lunar=lunar, status="active",
            run_at=new.first_at, attempts=0, created_at=now_ms, updated_at=now_ms)
    session.add(row)
    await session.flush()
    return request_of(row)


async def active(session: AsyncSession, user_id: int) -> list[ScheduledRequest]:
    rows = (await session.scalars(select(R).where(R.user_id == user_id, R.status == "active")
                                  .order_by(R.run_at, R.id))).all()
    return [request_of(r) for r in rows]


async def cancel(session: AsyncSession, user_id: int, ids: Sequence[int], *, now_ms: int) -> int:
    """Cancel the user's requests `ids` (a run in flight then pushes nothing); how many were active."""
    if not ids:
        return 0
    result = await session.execute(update(R).where(R.user_id == user_id, R.id.in_(list(ids)), R.status == "active")
                                   .values(status="cancelled", updated_at=now_ms)
                                   .execution_options(synchronize_session=False))
    return int(getattr(result, "rowcount", 0) or 0)


async def retime(session: AsyncSession, user_id: int, request_id: int, *, first_at: int, run_at: int,
                 recurrence: Recurrence | None, now_ms: int) -> ScheduledRequest:
    """A new time (and maybe series) for the user's request; the next run is `run_at`."""
    row = await session.scalar(select(R).where(R.id == request_id, R.user_id == user_id))
    if row is None:
        raise LookupError(request_id)
    row.first_at, row.run_at, row.attempts, row.updated_at = first_at, run_at, 0, now_ms
    if recurrence is not None:
        row.rrule, row.workdays = recurrence.rrule, recurrence.workdays
        row.lunar = ({"month": recurrence.lunar.month, "day": recurrence.lunar.day, "leap": recurrence.lunar.leap}
                     if recurrence.lunar else None)
    await session.flush()
    return request_of(row)


def next_run(request: ScheduledRequest, *, after: datetime) -> datetime | None:
    """The series' next run strictly after `after`; None for a one-off or an ended series."""
    if request.recurrence is None:
        return None
    return next_occurrence(request.recurrence, dtstart=from_ms(request.first_at), after=after,
                           tz=ZoneInfo(request.timezone))


# ------------------------------------------------------------------ running
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
                 concurrency: int = 2, poll_interval_s: float = 1.0,
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
        self._stop = asyncio.Event()

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
                except Exception:
                    log.exception("scheduled requests: a pass failed; retrying after the poll interval")
                if pause > 0:
                    done, _ = await asyncio.wait([stopping, *running], timeout=pause,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    self._landed(running, done)
        finally:
            stopping.cancel()
            if running:
                self._landed(running, (await asyncio.wait(running))[0])

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
            if not getattr(moved, "rowcount", 0):
                return False
            when = from_ms(request.run_at).astimezone(ZoneInfo(request.timezone)).strftime("%Y-%m-%d %H:%M")
            await outbox.enqueue(session, user_id=request.user_id, idempotency_key=key, kind=kind,
                                 payload={"text": text, "title": request.title[:20], "when": when,
                                          "request_id": request.id},
                                 channel=channel, now_ms=to_ms(now))
            return True

        done = await in_transaction(self._sessions, work)
        if not done:
            log.info("scheduled request %s: claim lost or request cancelled while it ran; nothing pushed",
                     request.id)
        return done
