"""Digests: the next run of a daily digest at HH:MM local time (pure), and a user's subscriptions (one per kind
and channel: subscribed, re-timed, stopped, listed)."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import bindparam, select, update
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from schedule import users
from schedule.clock import to_ms
from schedule.convert import digest_of
from schedule.db import rowcount
from schedule.domain import DigestSubscription
from schedule.fastsql import Executor, Fast, run_all
from schedule.model import DigestSubscriptionRow
from schedule.recurrence import is_cn_workday, localize


def parse_local_time(value: str) -> time:
    hours, _, minutes = value.partition(":")
    return time(int(hours), int(minutes))


_BYDAY = re.compile(r"BYDAY=([A-Z,]+)")
_WEEKDAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


def digest_days(rrule: str | None) -> frozenset[int] | None:
    """The weekdays (0 = Monday) a digest's rule allows (FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR), None for every day."""
    found = _BYDAY.search((rrule or "").upper())
    if found is None:
        return None
    days = frozenset(_WEEKDAY_CODES.index(code) for code in found.group(1).split(",") if code in _WEEKDAY_CODES)
    return days or None


def next_digest_run(local_time: str, *, tz: ZoneInfo, after: datetime, workdays: str | None = None,
                    rrule: str | None = None) -> datetime:
    """The first HH:MM local strictly after `after`: on a working day when workdays == "cn", on one of the
    rule's weekdays when it has BYDAY (周末不用发: Monday to Friday)."""
    at = parse_local_time(local_time)
    day = after.astimezone(tz).date()
    weekdays = digest_days(rrule)
    for _ in range(40):
        candidate = localize(datetime.combine(day, at), tz)
        if candidate > after and (workdays != "cn" or is_cn_workday(day)) \
                and (weekdays is None or day.weekday() in weekdays):
            return candidate
        day += timedelta(days=1)
    raise ValueError("no digest run within 40 days")  # pragma: no cover - calendar has no 40-day holiday


_S = DigestSubscriptionRow
_SUBSCRIPTION = {"user_id": bindparam("p_uid"), "kind": bindparam("p_kind"), "channel": bindparam("p_channel"),
                 "local_time": bindparam("p_time"), "timezone": bindparam("p_tz"), "rrule": bindparam("p_rrule"),
                 "workdays": bindparam("p_workdays"), "status": "active", "next_run_at": bindparam("p_next"),
                 "created_at": bindparam("p_at"), "updated_at": bindparam("p_at")}
_RETIMED = ("local_time", "timezone", "rrule", "workdays", "status", "next_run_at", "updated_at")
_mysql_subscribe = mysql_insert(_S).values(**_SUBSCRIPTION)
_sqlite_subscribe = sqlite_insert(_S).values(**_SUBSCRIPTION)
_SUBSCRIBE = Fast({  # (user, kind, channel) is unique: a new row, or the existing one re-timed and active again
    "mysql": _mysql_subscribe.on_duplicate_key_update({c: _mysql_subscribe.inserted[c] for c in _RETIMED}),
    "sqlite": _sqlite_subscribe.on_conflict_do_update(
        index_elements=[_S.user_id, _S.kind, _S.channel], set_={c: _sqlite_subscribe.excluded[c] for c in _RETIMED}),
})
_DIGEST = Fast(select(_S.id, _S.user_id, _S.kind, _S.local_time, _S.timezone, _S.channel, _S.status, _S.next_run_at,
                      _S.workdays, _S.rrule).where(_S.user_id == bindparam("p_uid"), _S.kind == bindparam("p_kind"),
                                     _S.channel == bindparam("p_channel")))


async def subscribe(session: Executor, user_id: int, *, now: datetime, local_time: str, kind: str, channel: str,
                    workdays: str | None, rrule: str | None) -> DigestSubscription:
    """Subscribe (or re-time) the user's digest; next run computed in the user's timezone. There is one
    subscription per kind: subscribing again replaces its time and days. `workdays="cn"` sends on official
    working days; `rrule` with BYDAY on those weekdays only (FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR).

    One upsert on (user, kind, channel) and the row read back, sent together: a chat message asks
    for this, so it costs no ORM session (two concurrent requests cannot both insert either)."""
    timezone = await users.timezone_of(session, user_id)
    next_run = to_ms(next_digest_run(local_time, tz=ZoneInfo(timezone), after=now, workdays=workdays, rrule=rrule))
    values = {"p_uid": user_id, "p_kind": kind, "p_channel": channel, "p_time": local_time, "p_tz": timezone,
              "p_rrule": rrule or (None if workdays else "FREQ=DAILY"), "p_workdays": workdays,
              "p_next": next_run, "p_at": to_ms(now)}
    _, found = await run_all(session, [(_SUBSCRIBE, values), (_DIGEST, values)])
    return digest_of(found.rows[0])


async def unsubscribe(session: AsyncSession, user_id: int, kind: str, *, now_ms: int) -> bool:
    """Stop the digest; False when there was none active."""
    result = await session.execute(
        update(DigestSubscriptionRow)
        .where(DigestSubscriptionRow.user_id == user_id, DigestSubscriptionRow.kind == kind,
               DigestSubscriptionRow.status == "active")
        .values(status="cancelled", next_run_at=None, updated_at=now_ms)
    )
    return bool(rowcount(result))


async def listed(session: AsyncSession, user_id: int) -> list[DigestSubscription]:
    rows = await session.scalars(select(DigestSubscriptionRow).where(
        DigestSubscriptionRow.user_id == user_id, DigestSubscriptionRow.status == "active"))
    return [digest_of(r) for r in rows]
