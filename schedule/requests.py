"""Requests the bot runs later, stored like reminders (a first run and maybe a series) and run by
`schedule.request_runner`. A user keeps at most a quota of active requests, counted under a lock on the user's
row with the insert, so concurrent adds never overshoot it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.clock import from_ms
from schedule.db import rowcount
from schedule.domain import AgendaQuery, Lunar, NewRequest, Recurrence, ScheduledRequest
from schedule.model import ScheduledRequestRow, UserRow
from schedule.recurrence import next_occurrence

R = ScheduledRequestRow
__all__ = ["AgendaQuery", "NewRequest", "ScheduledRequest"]


class QuotaReached(Exception):
    """The user already keeps `limit` active requests: nothing was stored."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} active scheduled requests")
        self.limit = limit


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
    return rowcount(result)


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
