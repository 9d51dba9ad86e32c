"""Push budgets, so no user spends the others' share: a user's pushes per day, the shortest gap between two
pushes of one series, and the account's template messages per day, in which reminders come first (digests stop
at a lower mark). A push over a budget is never dropped: it goes to the in-app queue, shown on the user's next
reply and on the page. What was spent is kept in `push_counters`, shared by every worker; days are WeChat's
(Beijing) days, as its quotas are.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.claims import OUTBOX, PUSH_KINDS, Claimed
from schedule.model import PushCounterRow
from schedule.pauses import QUOTA_DAY_TZ

log = logging.getLogger(__name__)
COUNTERS = cast(Table, PushCounterRow.__table__)
C = COUNTERS.c
SERIES_DAY = "-"  # a series' row holds its last push, whatever the day
TEMPLATE = "template"
KEEP_MS = 2 * 86_400_000


@dataclass(frozen=True, slots=True)
class PushBudget:
    per_user_daily: int = 100  # reminders pushed to one user in a day; the rest wait in the in-app queue
    series_gap_ms: int = 30 * 60_000  # an occurrence closer than this to its series' last push waits there too
    template_daily: int = 90_000  # the account's template messages a day (below WeChat's quota)
    digest_share_percent: int = 70  # digests stop at this share of the template budget: reminders keep the rest

    def template_limit(self, kind: str) -> int:
        return self.template_daily if kind == "reminder" else self.template_daily * self.digest_share_percent // 100


@dataclass(frozen=True, slots=True)
class Firing:
    """A push about to be queued: its outbox values (changed in place when held), its series, its time."""

    message: dict[str, Any]
    series: str | None  # what repeats it (`series_of`, `request_series`), else None
    remind_at: int
    read_later: Callable[[], str] | None = None  # its text when queued in-app (no "还有 N 分钟": read later)


def push_day(now_ms: int) -> str:
    return datetime.fromtimestamp(now_ms / 1000, QUOTA_DAY_TZ).date().isoformat()


def _user(user_id: int) -> str:
    return f"user:{user_id}"


def series_of(item_id: int) -> str:
    return f"series:{item_id}"


def request_series(request_id: int) -> str:
    return f"request:{request_id}"


async def hold_pushes(session: AsyncSession, firings: Sequence[Firing], budget: PushBudget, *, now_ms: int) -> int:
    """Send to the in-app queue the pushes (reminders, answers to requests run later; in due order) over their
    user's daily budget or too close to their series' last push; count the rest. How many were held."""
    pushes = [f for f in firings if f.message["channel"] != "inapp"]
    if not pushes:
        return 0
    day = push_day(now_ms)
    scopes = sorted({_user(f.message["user_id"]) for f in pushes}
                    | {f.series for f in pushes if f.series is not None})
    rows = (await session.execute(select(C.scope, C.day, C.used, C.last_at)
                                  .where(C.scope.in_(scopes), C.day.in_([day, SERIES_DAY]))
                                  .with_for_update())).all()
    used = Counter({r.scope: r.used for r in rows if r.day == day})
    last = {r.scope: r.last_at for r in rows if r.day == SERIES_DAY and r.last_at is not None}
    added: Counter[str] = Counter()
    newest: dict[str, int] = {}
    held = 0
    for firing in pushes:
        user = _user(firing.message["user_id"])
        series = firing.series
        reason = None
        if series is not None and series in last and firing.remind_at - last[series] < budget.series_gap_ms:
            reason = "series"
        elif used[user] + added[user] >= budget.per_user_daily:
            reason = "daily"
        if reason is not None:
            firing.message["channel"] = "inapp"
            text = firing.read_later() if firing.read_later is not None else firing.message["payload"]["text"]
            firing.message["payload"] = {**firing.message["payload"], "text": text, "held": reason}
            held += 1
            continue
        added[user] += 1
        if series is not None:
            last[series] = newest[series] = firing.remind_at
    await _add(session, [(scope, day, n, None) for scope, n in added.items()]
               + [(scope, SERIES_DAY, 0, at) for scope, at in newest.items()], now_ms)
    if held:
        log.info("%d pushes over a push budget went to the in-app queue", held)
    return held


async def take_template(session: AsyncSession, claimed: list[Claimed], budget: PushBudget, *,
                        now_ms: int) -> list[Claimed]:
    """The claimed rows that may go out: template pushes only while the account's daily template budget lasts
    (reminders up to all of it, digests up to their share); the others move to the in-app queue here."""
    wanted = [c for c in claimed if c.channel == TEMPLATE and c.message.kind in PUSH_KINDS and not c.template_blocked]
    if not wanted:
        return claimed
    day = push_day(now_ms)
    used = await session.scalar(select(C.used).where(C.scope == TEMPLATE, C.day == day).with_for_update()) or 0
    taken, held = 0, set()
    for item in sorted(wanted, key=lambda c: c.message.kind != "reminder"):  # reminders first
        if used + taken < budget.template_limit(item.message.kind):
            taken += 1
        else:
            held.add(item.row_id)
    if taken:
        await _add(session, [(TEMPLATE, day, taken, None)], now_ms)
    if not held:
        return claimed
    o = OUTBOX.c
    await session.execute(update(OUTBOX).where(o.id.in_(sorted(held)), o.lock_token.in_(
        sorted({c.token for c in wanted}))).values(channel="inapp", status="pending", lock_token=None,
                                                   locked_until=None, next_attempt_at=now_ms, updated_at=now_ms))
    # one WARNING when a mark is crossed (digests' share, then the whole budget); the batches after it, INFO
    crossed = any(used < budget.template_limit(c.message.kind) for c in wanted if c.row_id in held)
    log.log(logging.WARNING if crossed else logging.INFO,
            "the account's template budget for %s is spent: %d pushes went to the in-app queue", day, len(held))
    return [c for c in claimed if c.row_id not in held]


async def purge(session: AsyncSession, *, now_ms: int) -> None:
    """Forget counters nobody has touched for two days (past days, ended series)."""
    await session.execute(delete(PushCounterRow).where(PushCounterRow.updated_at < now_ms - KEEP_MS))


async def _add(session: AsyncSession, changes: list[tuple[str, str, int, int | None]], now_ms: int) -> None:
    """Add to counters in one executemany of one prebuilt upsert (rows created at need): `used` grows by the
    amount, `last_at` is replaced where given. One statement for every batch keeps SQLAlchemy's compiled cache
    warm (a multi-VALUES statement of this batch's size was compiled afresh each time)."""
    if not changes:
        return
    rows = [{"scope": scope, "day": day, "used": amount, "last_at": at, "updated_at": now_ms}
            for scope, day, amount, at in changes]
    await session.execute(_UPSERT["sqlite" if session.get_bind().dialect.name == "sqlite" else "mysql"], rows)


def _upserts() -> dict[str, Any]:
    lite = sqlite_insert(COUNTERS)
    my = mysql_insert(COUNTERS)
    return {
        "sqlite": lite.on_conflict_do_update(index_elements=[C.scope, C.day], set_={
            "used": C.used + lite.excluded.used, "last_at": func.coalesce(lite.excluded.last_at, C.last_at),
            "updated_at": lite.excluded.updated_at}),
        "mysql": my.on_duplicate_key_update({
            "used": C.used + my.inserted.used, "last_at": func.coalesce(my.inserted.last_at, C.last_at),
            "updated_at": my.inserted.updated_at}),
    }


_UPSERT = _upserts()
