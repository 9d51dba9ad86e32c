"""Requests the bot runs later (issue 30): stored like reminders (a first run and maybe a series), run once per
occurrence whatever the number of workers, and answered by a push through the outbox.

A due run is claimed with a lease (`SELECT … FOR UPDATE SKIP LOCKED` + `UPDATE`, single-table), run outside any
transaction (an LLM may take seconds), then finished under its lock token: the answer's outbox row is keyed
`request:{id}:{run_at}`, so a run repeated after a lapsed lease still pushes once, and a request cancelled (or
a user forgotten) while its run was in flight pushes nothing. A failed run is tried once more after
`retry_after_ms`; a second failure queues a short notice and the series goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import outbox
from schedule.clock import Clock, from_ms, to_ms
from schedule.db import in_transaction
from schedule.domain import AgendaQuery, Lunar, NewRequest, Recurrence, ScheduledRequest
from schedule.model import ScheduledRequestRow
from schedule.recurrence import next_occurrence

log = logging.getLogger(__name__)
R = ScheduledRequestRow
__all__ = ["AgendaQuery", "NewRequest", "RequestRunner", "ScheduledRequest"]
ANSWER_KIND = "digest"  # the outbox kind of an answer: a scheduled push like the daily digest (template rung too)


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
async def add(session: AsyncSession, user_id: int, new: NewRequest, *, now_ms: int) -> ScheduledRequest:
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
    """Claims due requests, runs them through the `Answerer`, queues their answers. `run_once()` drains one
    pass (tests); `run()` loops until `stop()`, sleeping until the next run is due or the poll interval."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, answer: Answerer, *,
                 failed_text: FailedText, missed_text: Callable[[ScheduledRequest], str],
                 lease_ms: int = 180_000, retry_after_ms: int = 60_000, catchup_hours: int = 12,
                 batch_size: int = 8, poll_interval_s: float = 1.0,
                 on_queued: Callable[[], None] | None = None) -> None:
        self._sessions = sessions
        self._clock = clock
        self._answer = answer
        self._failed_text = failed_text
        self._missed_text = missed_text
        self._lease_ms = lease_ms  # longer than a run's whole budget (timeout × retries × tool rounds)
        self._retry_ms = retry_after_ms
        self._catchup_ms = catchup_hours * 3_600_000
        self._batch = batch_size
        self._poll_s = poll_interval_s
        self._on_queued = on_queued
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        while not self._stop.is_set():
            try:
                report = await self.run_once()
                pause = 0.0 if report.claimed >= self._batch else await self._until_next_due()
            except Exception:
                log.exception("scheduled requests: a pass failed; retrying after the poll interval")
                pause = self._poll_s
            if pause > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), timeout=pause)

    async def _until_next_due(self) -> float:
        now = to_ms(self._clock.now())

        async def work(session: AsyncSession) -> int | None:
            due = func.coalesce(R.locked_until, R.run_at)
            return await session.scalar(select(func.min(due)).where(R.status == "active"))

        due = await in_transaction(self._sessions, work)
        return self._poll_s if due is None else min(self._poll_s, max(0.05, (due - now) / 1000))

    async def run_once(self) -> RunReport:
        now = self._clock.now()
        token = str(uuid.uuid4())
        claimed = await in_transaction(self._sessions, lambda s: self._claim(s, to_ms(now), token))
        if not claimed:
            return RunReport()
        outcomes = await asyncio.gather(*(self._run(r, token) for r in claimed))
        report = RunReport(claimed=len(claimed), answered=outcomes.count("answered"),
                           retrying=outcomes.count("retrying"), failed=outcomes.count("failed"),
                           missed=outcomes.count("missed"))
        if (report.answered or report.failed or report.missed) and self._on_queued is not None:
            self._on_queued()
        return report

    async def _claim(self, session: AsyncSession, now_ms: int, token: str) -> list[ScheduledRequest]:
        ids = (await session.scalars(
            select(R.id).where(R.status == "active", R.run_at <= now_ms,
                               or_(R.locked_until.is_(None), R.locked_until <= now_ms))
            .order_by(R.run_at, R.id).limit(self._batch).with_for_update(skip_locked=True))).all()
        if not ids:
            return []
        await session.execute(update(R).where(R.id.in_(ids)).values(
            locked_until=now_ms + self._lease_ms, lock_token=token, updated_at=now_ms)
            .execution_options(synchronize_session=False))
        rows = (await session.scalars(select(R).where(R.id.in_(ids)).order_by(R.run_at, R.id))).all()
        return [request_of(r) for r in rows]

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
                                          "request_id": request.id, "due_at": request.run_at,
                                          "tz": request.timezone},
                                 channel=channel, now_ms=to_ms(now))
            return True

        done = await in_transaction(self._sessions, work)
        if not done:
            log.info("scheduled request %s: claim lost or request cancelled while it ran; nothing pushed",
                     request.id)
        return done
