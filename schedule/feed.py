"""A user's calendar feed summed up without reading its items: a version that changes whenever anything the
feed shows changes, and the moment that version was first served (the feed's Last-Modified).

One statement reads it: the user's timezone; aggregates over the items the feed is made of (how many, the
newest id, the sum of their change counts, the latest change; a one-off item behind the feed's history
horizon is not one of them, so its leaving changes the count); aggregates over the user's reminders (how
many, the newest id, the latest change, how many are pending); and the version stored at the last poll.
Every change of an item adds one to its change count, so even two changes within one millisecond give two
versions; a reminder added, cancelled, re-led or sent moves the reminder aggregates. A new version is
stored with the time it was first seen, kept strictly increasing in whole seconds, so an If-Modified-Since
never matches a later version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, and_, bindparam, case, func, or_, select
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.sql import Select

from schedule.convert import ITEMS, REMINDERS
from schedule.fastsql import Fast
from schedule.model import CalendarFeedRow, UserRow

SHOWN = ("active", "completed")  # the statuses a feed shows


@dataclass(frozen=True, slots=True)
class FeedVersion:
    timezone: str
    tag: str  # hex digest of everything the feed is made of (and the caller's salt)
    modified_at: int  # epoch ms, a whole second: when this version was first served


def _state() -> Select[Any]:
    """The one statement of a poll (prebuilt: compiled once per backend, run straight on the driver)."""
    i, r = ITEMS.c, REMINDERS.c
    user_id, horizon_ms = bindparam("p_uid", type_=BigInteger()), bindparam("p_horizon", type_=BigInteger())
    anchor = case((i.kind == "event", i.start_at), else_=i.due_at)
    repeats = or_(func.coalesce(i.rrule, "") != "", func.coalesce(i.workdays, "") != "", i.lunar.is_not(None))
    # a one-off item the feed leaves out: it ended (or was due) before the horizon
    behind = and_(~repeats, anchor.is_not(None), func.coalesce(func.nullif(i.end_at, 0), anchor) < horizon_ms)
    items = (select(i.user_id, func.count().label("n"), func.max(i.id).label("last_id"),
                    func.sum(i.sequence).label("changes"), func.max(i.updated_at).label("changed_at"))
             .where(i.user_id == user_id, or_(*(i.status == status for status in SHOWN)), ~behind)
             .group_by(i.user_id).subquery())
    reminders = (select(r.user_id, func.count().label("n"), func.max(r.id).label("last_id"),
                        func.max(r.updated_at).label("changed_at"),
                        func.sum(case((r.status == "pending", 1), else_=0)).label("pending"))
                 .where(r.user_id == user_id).group_by(r.user_id).subquery())
    return (select(UserRow.timezone, CalendarFeedRow.etag, CalendarFeedRow.modified_at,
                   *(c for c in items.c if c.name != "user_id"), *(c for c in reminders.c if c.name != "user_id"))
            .select_from(UserRow.__table__.outerjoin(CalendarFeedRow.__table__, CalendarFeedRow.user_id == UserRow.id)
                         .outerjoin(items, items.c.user_id == UserRow.id)
                         .outerjoin(reminders, reminders.c.user_id == UserRow.id))
            .where(UserRow.id == user_id))


_STATE = Fast(_state())


async def version(sessions: async_sessionmaker[AsyncSession], user_id: int, *, salt: str, horizon_ms: int,
                  now_ms: int) -> FeedVersion | None:
    """The feed's current version (None: no such user); a version not served before is stored, dated now."""
    async with sessions.begin() as session:
        row = (await _STATE.run(session, {"p_uid": user_id, "p_horizon": horizon_ms})).first()
        if row is None:
            return None
        parts = (salt, row.timezone, *(int(value or 0) for value in row[3:]))
        tag = hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:32]
        if row.etag == tag and row.modified_at is not None:
            return FeedVersion(row.timezone, tag, row.modified_at)
        modified = now_ms // 1000 * 1000
        if row.modified_at is not None and modified <= row.modified_at:
            modified = row.modified_at // 1000 * 1000 + 1000  # a new version within the second: the next second
        await _store(session, user_id, tag, modified)
    return FeedVersion(row.timezone, tag, modified)


async def _store(session: AsyncSession, user_id: int, tag: str, modified_at: int) -> None:
    """Record the version (the row made at need; a feed generation is never touched)."""
    values = {"user_id": user_id, "epoch": 0, "etag": tag, "modified_at": modified_at}
    if session.get_bind().dialect.name == "sqlite":
        lite = sqlite_insert(CalendarFeedRow).values(values)
        await session.execute(lite.on_conflict_do_update(
            index_elements=[CalendarFeedRow.user_id],
            set_={"etag": lite.excluded.etag, "modified_at": lite.excluded.modified_at}))
    else:
        my = mysql_insert(CalendarFeedRow).values(values)
        await session.execute(my.on_duplicate_key_update({"etag": my.inserted.etag,
                                                          "modified_at": my.inserted.modified_at}))


async def revoke(session: AsyncSession, user_id: int, *, now_ms: int) -> None:
    """关闭日历订阅: the user's feed generation moves on (the row made at need, in one statement, so a poll
    storing its version at the same moment cannot make it fail)."""
    values = {"user_id": user_id, "epoch": 1, "revoked_at": now_ms}
    row = CalendarFeedRow.__table__.c
    if session.get_bind().dialect.name == "sqlite":
        lite = sqlite_insert(CalendarFeedRow).values(values)
        await session.execute(lite.on_conflict_do_update(
            index_elements=[CalendarFeedRow.user_id], set_={"epoch": row.epoch + 1, "revoked_at": now_ms}))
    else:
        my = mysql_insert(CalendarFeedRow).values(values)
        await session.execute(my.on_duplicate_key_update({"epoch": row.epoch + 1, "revoked_at": now_ms}))
