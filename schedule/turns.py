"""Whose scheduled request runs next: at most one run at a time per user, users taken in turn (the one served
longest ago first), so one user's eighty due requests never hold back another user's one.

The claim is one short transaction of single-table statements: the due users, the users with a run in flight
(on any worker), a `FOR UPDATE SKIP LOCKED` on the chosen users' rows (so two workers never start two runs
of one user), then each chosen user's earliest due request, leased under the caller's token.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.model import ScheduledRequestRow, UserRow

R = ScheduledRequestRow
REMEMBERED = 100_000  # users whose last turn is remembered (the least recently served are forgotten first)


class Turns:
    """The order users are served in: round robin by when each was last given a run (in this process)."""

    def __init__(self) -> None:
        self._served: OrderedDict[int, int] = OrderedDict()
        self._serial = 0

    def order(self, due: Collection[tuple[int, int]]) -> list[int]:
        """`due` holds (user id, earliest due run); never served first, then longest ago, then oldest due."""
        return [user for user, _ in sorted(due, key=lambda d: (self._served.get(d[0], 0), d[1], d[0]))]

    def served(self, user_id: int) -> None:
        self._serial += 1
        self._served[user_id] = self._serial
        self._served.move_to_end(user_id)
        while len(self._served) > REMEMBERED:
            self._served.popitem(last=False)


async def claim(session: AsyncSession, turns: Turns, *, slots: int, busy: Collection[int], token: str,
                now_ms: int, lease_ms: int) -> list[int]:
    """Lease up to `slots` due requests, one per user, none for a user in `busy` or with a run in flight
    on another worker; the ids leased."""
    if slots <= 0:
        return []
    free = or_(R.locked_until.is_(None), R.locked_until <= now_ms)
    due = (await session.execute(select(R.user_id, func.min(R.run_at))
                                 .where(R.status == "active", R.run_at <= now_ms, free)
                                 .group_by(R.user_id))).all()
    if not due:
        return []
    waiting = [user for user in turns.order([(u, d) for u, d in due]) if user not in busy]
    leased: list[int] = []
    for start in range(0, len(waiting), slots):  # a user row locked elsewhere is skipped: the next in turn
        wanted = slots - len(leased)
        if wanted <= 0:
            break
        chunk = waiting[start:start + slots]
        locked = set((await session.scalars(select(UserRow.id).where(UserRow.id.in_(chunk))
                                            .with_for_update(skip_locked=True))).all())
        # read under the user locks: a run another worker claimed and committed meanwhile is seen
        running = set((await session.scalars(select(R.user_id).distinct().where(
            R.user_id.in_(sorted(locked)), R.status == "active", R.lock_token.is_not(None),
            R.locked_until > now_ms))).all()) if locked else set()
        for user in [u for u in chunk if u in locked and u not in running][:wanted]:
            request_id = await session.scalar(
                select(R.id).where(R.user_id == user, R.status == "active", R.run_at <= now_ms, free)
                .order_by(R.run_at, R.id).limit(1).with_for_update(skip_locked=True))
            if request_id is not None:
                leased.append(request_id)
                turns.served(user)
    if leased:
        await session.execute(update(R).where(R.id.in_(leased)).values(
            locked_until=now_ms + lease_ms, lock_token=token, updated_at=now_ms)
            .execution_options(synchronize_session=False))
    return leased
