"""ScheduleService: the one write path for items, reminders and digests, always scoped by user id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import replace
from datetime import date, datetime, time, timedelta
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from schedule import occurrence, tokens, users
from schedule.clock import Clock, from_ms, now_ms, to_ms
from schedule.convert import (
    ITEM_COLUMNS,
    ITEMS,
    REMINDER_COLUMNS,
    REMINDERS,
    digest_of,
    item_of,
    local_date_of,
    recurrence_of,
    reminder_of,
    user_of,
)
from schedule.db import session_transaction
from schedule.digest import next_digest_run
from schedule.domain import (
    DigestSubscription,
    Item,
    ItemChanges,
    ItemKind,
    NewItem,
    NewReminder,
    Recurrence,
    Reminder,
    User,
)
from schedule.errors import InvalidChange, NotFound
from schedule.fastsql import Executor, Fast, Rows, orm, run_all, transaction
from schedule.handoff import take_offered
from schedule.model import DigestSubscriptionRow, ReminderRow, ScheduleItemRow, UserRow
from schedule.occurrence import at_occurrence, in_range, reminder_occurrence
from schedule.recurrence import localize, next_occurrence, refused

OPEN_REMINDER = ("pending", "locked")
_USERS_READ = "schedule_users_read"  # session.info: users this transaction has read (id → timezone)
# Chat reads its user and reads and writes items on every message: prebuilt statements over the columns
# `user_of` and `item_of` read, so a message costs no ORM objects and no wide rows (source_text stays put).
_USER = Fast(select(UserRow.id, UserRow.wechat_openid, UserRow.timezone, UserRow.subscribed).where(
    UserRow.id == bindparam("p_uid")))
# The per-user quota of active items, counted in the trip that inserts the next one.
_ACTIVE_COUNT = Fast(select(func.count()).select_from(ITEMS).where(ITEMS.c.user_id == bindparam("p_uid"),
                                                                  ITEMS.c.status == "active"))
MAX_ACTIVE_ITEMS = 2000
# … and what takes back the item that went over it (its reminders first), in the same transaction: a caller
# that catches the error and goes on (a unit of work that commits other changes) never keeps the item.
_UNDO_ITEM = [Fast(delete(REMINDERS).where(REMINDERS.c.item_id == bindparam("p_id"))),
              Fast(delete(ITEMS).where(ITEMS.c.id == bindparam("p_id")))]
_USER_EXISTS = Fast(select(UserRow.id).where(UserRow.id == bindparam("p_uid")))
_ITEMS_OF = (select(*ITEM_COLUMNS).where(ITEMS.c.user_id == bindparam("p_uid"),
                                         ITEMS.c.status.in_(bindparam("p_statuses", expanding=True)))
             .order_by(ITEMS.c.id))
_ITEMS_OF_KIND = _ITEMS_OF.where(ITEMS.c.kind == bindparam("p_kind"))
_I = ITEMS.c
_EVENT = _I.kind == "event"
# The active items that may belong to [p_lo, p_hi): a superset of what `in_range` keeps (it still decides),
# so a listing reads this week's items, not every past one-off that stays "active" forever.
_MAY_BE_IN_RANGE = or_(
    _I.rrule.is_not(None), _I.workdays.is_not(None), _I.lunar.is_not(None),  # recurring: expanded in Python
    and_(bindparam("p_undated"), or_(and_(_EVENT, _I.start_at.is_(None)), and_(~_EVENT, _I.due_at.is_(None)))),
    and_(_EVENT, _I.start_at < bindparam("p_hi"), or_(_I.start_at >= bindparam("p_lo"), _I.end_at > bindparam("p_lo"))),
    and_(~_EVENT, _I.due_at >= bindparam("p_lo"), _I.due_at < bindparam("p_hi")),
)
_ACTIVE_WHERE = (_I.user_id == bindparam("p_uid"), _I.status == "active", _MAY_BE_IN_RANGE)
# The page lists done items too: the same prefilter over active and completed rows, item and reminders in one trip.
_SHOWN_WHERE = (_I.user_id == bindparam("p_uid"), or_(_I.status == "active", _I.status == "completed"),  # no IN list
                _MAY_BE_IN_RANGE)
_SHOWN_ITEMS_OF = Fast(select(*ITEM_COLUMNS).where(*_SHOWN_WHERE).order_by(_I.id))
_SHOWN_REMINDERS_OF = Fast(select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id.in_(select(_I.id).where(*_SHOWN_WHERE))))
# Overdue one-off tasks: how many, and the latest few (the page folds them into one group).
_OVERDUE_WHERE = (_I.user_id == bindparam("p_uid"), _I.status == "active", _I.kind == "task",
                  _I.due_at < bindparam("p_before"), _I.rrule.is_(None), _I.workdays.is_(None), _I.lunar.is_(None))
_OVERDUE_COUNT = Fast(select(func.count()).select_from(ITEMS).where(*_OVERDUE_WHERE))
_OVERDUE_LATEST = Fast(select(*ITEM_COLUMNS).where(*_OVERDUE_WHERE).order_by(_I.due_at.desc(), _I.id.desc())
                       .limit(bindparam("p_limit")))
_ACTIVE_ITEMS_OF = Fast(select(*ITEM_COLUMNS).where(*_ACTIVE_WHERE).order_by(_I.id))  # what chat lists
_ACTIVE_ITEMS_OF_KIND = Fast(select(*ITEM_COLUMNS).where(*_ACTIVE_WHERE, _I.kind == bindparam("p_kind"))
                             .order_by(_I.id))
# … and their reminders, read in the same trip: the item ids come from the same filter as a subquery.
_ACTIVE_REMINDERS_OF = Fast(select(*REMINDER_COLUMNS).where(
    REMINDERS.c.item_id.in_(select(_I.id).where(*_ACTIVE_WHERE))))
_ACTIVE_REMINDERS_OF_KIND = Fast(select(*REMINDER_COLUMNS).where(
    REMINDERS.c.item_id.in_(select(_I.id).where(*_ACTIVE_WHERE, _I.kind == bindparam("p_kind")))))
_ITEM = Fast(select(*ITEM_COLUMNS).where(ITEMS.c.id == bindparam("p_id"), ITEMS.c.user_id == bindparam("p_uid"),
                                         ITEMS.c.status != "deleted"))
_REMINDERS_OF_ITEM = Fast(select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id == bindparam("p_id")))
# An item's reminders sent in the trip that reads the item: owned by the user, or none are returned.
_REMINDERS_OF_OWN_ITEM = Fast(select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id == bindparam("p_id"),
                                                              REMINDERS.c.user_id == bindparam("p_uid")))
_REMINDERS_OF = select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id.in_(bindparam("p_ids", expanding=True)))
# The reminders of up to 32 items, one prebuilt statement per count (an expanding IN list has no fast plan).
_REMINDERS_OF_N = [Fast(select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id.in_(
    [bindparam(f"p_id{i}") for i in range(n)]))) for n in range(33)]
_ITEM_FIELDS = ("user_id", "kind", "title", "description", "status", "start_at", "end_at", "due_at", "all_day",
                "local_date", "timezone", "location", "rrule", "workdays", "lunar", "source_channel",
                "source_message_id", "source_text", "metadata_json", "created_at", "updated_at")
_REMINDER_FIELDS = ("user_id", "item_id", "remind_at", "offset_minutes", "channel", "status", "attempts",
                    "next_attempt_at", "created_at", "updated_at")
_INSERT_ITEM = Fast(insert(ITEMS).values(
    {ITEMS.c[f]: bindparam(f"v_{f}", type_=ITEMS.c[f].type) for f in _ITEM_FIELDS}))
_INSERT_REMINDER = Fast(insert(REMINDERS).values(
    {REMINDERS.c[f]: bindparam(f"v_{f}", type_=REMINDERS.c[f].type) for f in _REMINDER_FIELDS}))
# A new item's one reminder, sent in the item INSERT's trip: its item_id is the id that INSERT just made.
_INSERT_ITS_REMINDER = Fast({
    dialect: insert(REMINDERS).values(
        {REMINDERS.c[f]: (last_id if f == "item_id" else bindparam(f"v_{f}", type_=REMINDERS.c[f].type))
         for f in _REMINDER_FIELDS})
    for dialect, last_id in (("mysql", func.last_insert_id()), ("sqlite", func.last_insert_rowid()))})
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
# Closing an item is one trip: read it, close it and its open reminders, read those back. Each statement
# carries the ownership guard itself (user, not deleted), so an item that is not the user's changes nothing.
_CLOSE_ITEM = Fast(update(ITEMS).where(ITEMS.c.id == bindparam("p_id"), ITEMS.c.user_id == bindparam("p_uid"),
                                       ITEMS.c.status != "deleted").values(
    status=bindparam("p_status"), updated_at=bindparam("p_at"), deleted_at=bindparam("p_deleted")))
_CLOSE_REMINDERS = Fast(update(REMINDERS)  # the open statuses spelled out: no IN list to expand
                        .where(REMINDERS.c.item_id == bindparam("p_id"), REMINDERS.c.user_id == bindparam("p_uid"),
                               or_(*(REMINDERS.c.status == status for status in OPEN_REMINDER)))
                        .values(status="cancelled", updated_at=bindparam("p_at"), locked_until=None))
_UNIT: ContextVar[Executor | None] = ContextVar("schedule_unit_of_work", default=None)


class ScheduleService:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *,
                 default_timezone: str = "Asia/Shanghai", max_active_items: int = MAX_ACTIVE_ITEMS) -> None:
        self._sessions = sessions
        self._max_active_items = max_active_items
        self._clock = clock
        self._default_tz = default_timezone

    # ----------------------------------------------------------- unit of work
    @asynccontextmanager
    async def unit_of_work(self) -> AsyncIterator[Executor]:
        """One transaction for several service calls (a whole chat message): every call made inside
        the block joins it, and everything commits together at the end or rolls back together.

        It runs on a bare driver transaction (`fastsql.Tx`): a chat message's usual statements are all
        `Fast` ones, and an ORM session costs about a sixth of a message's CPU. A call that needs the
        ORM gets a session lent on the same connection and transaction (`_orm_tx`)."""
        if _UNIT.get() is not None:
            raise RuntimeError("unit of work already open")
        bind = self._sessions.kw.get("bind")
        begin: AbstractAsyncContextManager[Executor]
        if isinstance(bind, AsyncEngine):  # a transaction the webhook began for this unit, else a new one
            handoff = take_offered(bind)
            begin = handoff.adopt() if handoff is not None else transaction(bind)
        else:
            begin = session_transaction(self._sessions)  # bound to a connection (a test's): a session
        async with begin as unit:
            marker = _UNIT.set(unit)
            try:
                yield unit
            finally:
                _UNIT.reset(marker)

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[Executor]:
        """The open unit of work, or a transaction of this call's own: for calls made of `Fast` statements."""
        ambient = _UNIT.get()
        if ambient is not None:
            yield ambient
            return
        async with session_transaction(self._sessions) as session:
            yield session

    @asynccontextmanager
    async def _orm_tx(self) -> AsyncIterator[AsyncSession]:
        """`_tx` for calls that use ORM objects: a unit of work's session, lent on its connection if need be."""
        async with self._tx() as target:
            yield await orm(target)

    @asynccontextmanager
    async def orm_session(self) -> AsyncIterator[AsyncSession]:
        """An ORM session in the open unit of work (or a transaction of its own), for stores beside this
        service (schedule.requests) whose writes must commit with the message."""
        async with self._orm_tx() as session:
            yield session

    # ------------------------------------------------------------------ users
    async def get_or_create_user(self, openid: str, *, timezone: str | None = None) -> User:
        async with self._orm_tx() as session:
            row = await users.get_or_create(session, openid, timezone=timezone or self._default_tz,
                                            now_ms=now_ms(self._clock))
            return user_of(row)

    @staticmethod
    def user_read(session: Executor, user_id: int, timezone: str) -> None:
        """Note that this transaction has read the user (a chat message's opening query did): creating
        an item in it then skips its own existence check, and a digest its read of the timezone."""
        session.info.setdefault(_USERS_READ, {})[user_id] = timezone

    async def find_user(self, openid: str) -> User | None:
        async with self._orm_tx() as session:
            row = await session.scalar(select(UserRow).where(UserRow.wechat_openid == openid))
            return user_of(row) if row is not None else None

    async def get_user(self, user_id: int) -> User:
        async with self._tx() as session:
            row = (await _USER.run(session, {"p_uid": user_id})).first()
            if row is None:
                raise NotFound(f"user {user_id}")
            self.user_read(session, user_id, row.timezone)
            return user_of(row)  # the row has the columns user_of reads

    async def issue_api_token(self, openid: str, *, label: str = tokens.DEFAULT_LABEL) -> tuple[User, str, bool]:
        """A fresh bearer token for the user (created if missing) under `label`; True when it replaced
        that label's previous token. Other labels keep working; only hashes are stored."""
        async with self._orm_tx() as session:
            row = await users.get_or_create(session, openid, timezone=self._default_tz, now_ms=now_ms(self._clock))
            token, replaced = await tokens.issue(session, row.id, label, now_ms=now_ms(self._clock))
            return user_of(row), token, replaced

    async def api_tokens(self, openid: str) -> list[tokens.TokenInfo]:
        async with self._orm_tx() as session:
            row = await session.scalar(select(UserRow).where(UserRow.wechat_openid == openid))
            return [] if row is None else await tokens.listed(session, row.id)

    async def revoke_api_token(self, openid: str, label: str) -> bool:
        async with self._orm_tx() as session:
            row = await session.scalar(select(UserRow).where(UserRow.wechat_openid == openid))
            return row is not None and await tokens.revoke(session, row.id, label)

    async def user_for_token(self, token: str) -> User | None:
        async with self._orm_tx() as session:
            user_id = await tokens.owner(session, token, now_ms=now_ms(self._clock))
            row = await session.get(UserRow, user_id) if user_id is not None else None
            return user_of(row) if row is not None else None

    async def forget_user(self, user_id: int) -> None:
        async with self._orm_tx() as session:
            await users.forget(session, user_id, now_ms=now_ms(self._clock))

    # ------------------------------------------------------------------ items
    async def create_item(self, user_id: int, new: NewItem) -> Item:
        _check_times(new.start_at, new.end_at)
        if new.kind == "event" and new.start_at is None:
            raise InvalidChange("an event needs start_at")
        stamp = now_ms(self._clock)
        anchor = new.start_at if new.kind == "event" else new.due_at
        end_at = new.end_at
        if new.all_day and new.kind == "event" and new.start_at is not None and end_at is None:
            end_at = _next_local_midnight(new.start_at, new.timezone)
        recurrence = new.recurrence
        refusal = refused(recurrence.rrule if recurrence else None, anchor_ms=anchor, tz=new.timezone)
        if refusal is not None:
            raise InvalidChange(refusal)
        values = {
            "user_id": user_id, "kind": new.kind, "title": new.title, "description": new.description,
            "status": "active", "start_at": new.start_at, "end_at": end_at, "due_at": new.due_at,
            "all_day": new.all_day,
            "local_date": local_date_of(anchor, new.timezone) if new.all_day and anchor is not None else None,
            "timezone": new.timezone, "location": new.location,
            "rrule": recurrence.rrule if recurrence else None,
            "workdays": recurrence.workdays if recurrence else None,
            "lunar": ({"month": recurrence.lunar.month, "day": recurrence.lunar.day, "leap": recurrence.lunar.leap}
                      if recurrence and recurrence.lunar else None),
            "source_channel": new.source_channel, "source_message_id": new.source_message_id,
            "source_text": new.source_text, "metadata_json": new.metadata,
            "created_at": stamp, "updated_at": stamp,
        }
        async with self._tx() as session:
            if user_id not in session.info.get(_USERS_READ, ()) and (
                    await _USER_EXISTS.run(session, {"p_uid": user_id})).first() is None:
                raise NotFound(f"user {user_id}")  # (a user read in this transaction exists: the FK holds it)
            # A new item has no reminders yet: plain inserts (duplicates in the request collapse to one).
            wanted = [{"user_id": user_id, "remind_at": r.remind_at, "offset_minutes": r.offset_minutes,
                       "channel": r.channel, "status": "pending", "attempts": 0, "next_attempt_at": r.remind_at,
                       "created_at": stamp, "updated_at": stamp}
                      for r in {(r.remind_at, r.channel): r for r in new.reminders}.values()]
            item_params = _prefixed(values)
            counted: list[tuple[Fast, Mapping[str, Any] | None]] = [(_ACTIVE_COUNT, {"p_uid": user_id})]
            if len(wanted) == 1:  # the usual case: item and reminder in one round trip (with the quota count)
                count, item_row, rem_row = await run_all(session, [*counted, (_INSERT_ITEM, item_params),
                                                                   (_INSERT_ITS_REMINDER, _prefixed(wanted[0]))])
                item_id = _new_id(item_row)
                rem_ids = [_new_id(rem_row)]
            else:
                count, item_row = await run_all(session, [*counted, (_INSERT_ITEM, item_params)])
                item_id = _new_id(item_row)
                rem_ids = [_new_id(await _INSERT_REMINDER.run(session, _prefixed({**rem, "item_id": item_id})))
                           for rem in wanted]
            if (count.first() or (0,))[0] >= self._max_active_items:
                await run_all(session, [(undo, {"p_id": item_id}) for undo in _UNDO_ITEM])
                raise InvalidChange(f"too many active items (at most {self._max_active_items}): "
                                    "complete or cancel some first")
            reminders = [SimpleNamespace(id=rem_id, sent_at=None, item_id=item_id, **rem)
                         for rem_id, rem in zip(rem_ids, wanted, strict=True)]
            return item_of(SimpleNamespace(id=item_id, **values), reminders)  # type: ignore[arg-type]

    async def get_item(self, user_id: int, item_id: int) -> Item:
        async with self._tx() as session:
            params = {"p_id": item_id, "p_uid": user_id}
            found, reminders = await run_all(session, [(_ITEM, params), (_REMINDERS_OF_OWN_ITEM, params)])
            row = found.first()
            if row is None:
                raise NotFound(f"item {item_id}")
            return item_of(row, reminders.all())

    async def list_items(
        self, user_id: int, *, start_ms: int | None = None, end_ms: int | None = None,
        kind: ItemKind | None = None, statuses: Sequence[str] = ("active",),
        include_undated_tasks: bool = False, include_reminders: bool = True, expand: bool = False,
        as_stored: bool = False,
    ) -> list[Item]:
        """Items in [start_ms, end_ms): events overlapping it, tasks due in it, recurring items
        with an occurrence in it (reported at that occurrence). Ordered by time.

        With `expand`, a series is listed at every occurrence in the range (`occurrence.expand`: done days
        as completed, each with its own reminders): what chat, the page and the API list. With `as_stored`,
        a series is returned as stored, from its first occurrence (what the calendar feed writes out)."""
        async with self._tx() as session:
            params: dict[str, object] = {"p_uid": user_id, "p_statuses": list(statuses)}
            if kind is not None:
                params["p_kind"] = kind
            shown = tuple(statuses) == ("active", "completed") and kind is None
            if tuple(statuses) == ("active",) or shown:
                far = 1 << 62
                params.update(p_lo=-far if start_ms is None else start_ms, p_hi=far if end_ms is None else end_ms,
                              p_undated=include_undated_tasks)
                statements: list[tuple[Fast, Mapping[str, Any] | None]] = [
                    (_SHOWN_ITEMS_OF if shown else _ACTIVE_ITEMS_OF if kind is None else _ACTIVE_ITEMS_OF_KIND, params)]
                if include_reminders:  # in the same trip, for the same items
                    statements.append((_SHOWN_REMINDERS_OF if shown else _ACTIVE_REMINDERS_OF if kind is None
                                       else _ACTIVE_REMINDERS_OF_KIND, params))
                results = await run_all(session, statements)
                rows = results[0].all()
                read: list[Any] | None = results[1].all() if include_reminders else None
            else:
                rows = list((await (await (await orm(session)).connection()).execute(
                    _ITEMS_OF if kind is None else _ITEMS_OF_KIND, params)).all())
                read = None
            found = [hit for row in rows
                     if (hit := ((row, None) if (expand or as_stored) and recurrence_of(row) is not None
                                  else in_range(row, start_ms, end_ms, include_undated_tasks))) is not None]
            by_item: dict[int, list[ReminderRow]] = {}
            if include_reminders and found:
                for rem in read if read is not None else await _reminder_rows(session, [r.id for r, _ in found]):
                    by_item.setdefault(rem.item_id, []).append(rem)
            items = []
            for row, occ in found:
                item = item_of(row, by_item.get(row.id, []) if include_reminders else None)
                if expand and item.recurrence is not None:
                    items += occurrence.expand(item, start_ms, end_ms)
                else:
                    items.append(at_occurrence(item, occ))
        last = 1 << 62
        return sorted(items, key=lambda i: (i.anchor_at if i.anchor_at is not None else last, i.id))

    async def overdue_tasks(self, user_id: int, *, before_ms: int, limit: int) -> tuple[int, list[Item]]:
        """Open one-off tasks due before `before_ms`: how many, and the latest `limit` with their reminders."""
        async with self._tx() as session:
            params = {"p_uid": user_id, "p_before": before_ms, "p_limit": limit}
            counted, latest = await run_all(session, [(_OVERDUE_COUNT, params), (_OVERDUE_LATEST, params)])
            rows = latest.all()
            by_item: dict[int, list[Any]] = {}
            for rem in await _reminder_rows(session, [r.id for r in rows]):
                by_item.setdefault(rem.item_id, []).append(rem)
            return int(counted.rows[0][0]), [item_of(row, by_item.get(row.id, [])) for row in rows]

    async def update_item(self, user_id: int, item_id: int, changes: ItemChanges) -> Item:
        """Apply a partial change; moving an event or deadline moves its open reminders (offset kept)."""
        stamp = now_ms(self._clock)
        async with self._orm_tx() as session:
            row = await _owned_item(session, user_id, item_id, include_deleted=False)
            old_anchor = row.start_at if row.kind == "event" else row.due_at
            _check_series(row, changes)  # before any change to the row: a refused change leaves it as it was
            for name in ("title", "description", "location", "start_at", "end_at", "due_at", "all_day", "timezone"):
                value = getattr(changes, name)
                if value is not None:
                    setattr(row, name, value)
            if changes.clear_end:
                row.end_at = None
            if changes.recurrence is not None or changes.clear_recurrence:
                rule = changes.recurrence
                row.rrule = rule.rrule if rule else None
                row.workdays = rule.workdays if rule else None
                row.lunar = ({"month": rule.lunar.month, "day": rule.lunar.day, "leap": rule.lunar.leap}
                             if rule and rule.lunar else None)
            if changes.start_at is not None and changes.end_at is None and row.end_at is not None \
                    and old_anchor is not None and row.kind == "event":
                row.end_at += changes.start_at - old_anchor  # keep the duration
            _check_times(row.start_at, row.end_at)
            new_anchor = row.start_at if row.kind == "event" else row.due_at
            if row.all_day and new_anchor is not None:
                row.local_date = local_date_of(new_anchor, row.timezone)
            row.updated_at = stamp
            reminders = await _reminders_of(session, [row.id])
            if old_anchor is not None and new_anchor is not None and new_anchor != old_anchor:
                def moved(rem: ReminderRow) -> int:
                    return (new_anchor - rem.offset_minutes * 60_000 if rem.offset_minutes is not None
                            else rem.remind_at + (new_anchor - old_anchor))

                for rem in reminders:
                    if rem.status == "pending":
                        rem.remind_at, rem.updated_at = moved(rem), stamp
                if not any(rem.status == "pending" for rem in reminders) and not recurrence_of(row):
                    # Its reminder went out (or is going out) for the old time: the new time gets one again,
                    # offset kept. One in flight keeps its row, so its delivery stays fenced and counted.
                    again = {(moved(rem), rem.offset_minutes, rem.channel) for rem in reminders
                             if rem.status in ("sent", "locked") and moved(rem) > stamp}
                    for remind_at, offset, channel in sorted(again):
                        await _insert_reminder(session, row, NewReminder(remind_at=remind_at, offset_minutes=offset,
                                                                         channel=channel), stamp)
                    reminders = await _reminders_of(session, [row.id]) if again else reminders
            await session.flush()
            return item_of(row, reminders)

    async def complete_item(self, user_id: int, item_id: int) -> Item:
        return await self._close(user_id, item_id, "completed")

    async def cancel_item(self, user_id: int, item_id: int) -> Item:
        return await self._close(user_id, item_id, "cancelled")

    async def delete_item(self, user_id: int, item_id: int) -> Item:
        return await self._close(user_id, item_id, "deleted")

    async def _close(self, user_id: int, item_id: int, status: str) -> Item:
        stamp = now_ms(self._clock)
        params = {"p_id": item_id, "p_uid": user_id, "p_status": status, "p_at": stamp,
                  "p_deleted": stamp if status == "deleted" else None}
        steps: list[tuple[Fast, Mapping[str, Any] | None]] = [
            (_ITEM, params), (_CLOSE_ITEM, params), (_CLOSE_REMINDERS, params), (_REMINDERS_OF_OWN_ITEM, params)]
        async with self._tx() as session:
            found, _closed, _cancelled, reminders = await run_all(session, steps)
            row = found.first()
            if row is None:  # not the user's, or deleted: the guarded updates changed nothing
                raise NotFound(f"item {item_id}")
            shown = SimpleNamespace(**{**row._asdict(), "status": status, "updated_at": stamp})
            return item_of(shown, reminders.all())  # type: ignore[arg-type]

    async def restore_recent(self, user_id: int, *, since_ms: int) -> tuple[list[Item], int]:
        """Undo the user's last cancel or complete (撤销), if it is their latest change and not older than
        `since_ms`: the items it closed are active again, and their reminders still ahead are pending again.
        Also returns how many series that change touched (one occurrence skipped): those are not undone."""
        stamp = now_ms(self._clock)
        async with self._orm_tx() as session:
            latest = await session.scalar(select(func.max(ScheduleItemRow.updated_at))
                                          .where(ScheduleItemRow.user_id == user_id))
            if latest is None or latest < since_ms:
                return [], 0
            touched = list(await session.scalars(select(ScheduleItemRow).where(
                ScheduleItemRow.user_id == user_id, ScheduleItemRow.updated_at == latest)))
            rows = [row for row in touched if row.status in ("cancelled", "completed")]
            series = sum(1 for row in touched if row.status == "active" and recurrence_of(row) is not None
                         and (row.metadata_json or {}).get("skipped"))
            if not rows:
                return [], series  # the latest change was something else (a create, a move, a skipped day)
            ids = [row.id for row in rows]
            reminders = await session.scalars(select(ReminderRow).where(
                ReminderRow.item_id.in_(ids), ReminderRow.user_id == user_id, ReminderRow.status == "cancelled",
                ReminderRow.updated_at == latest, ReminderRow.remind_at > stamp))
            for rem in reminders:
                rem.status, rem.updated_at = "pending", stamp
            for row in rows:
                row.status, row.updated_at = "active", stamp
            await session.flush()
            found = await _reminders_of(session, ids)
            items = [item_of(row, [r for r in found if r.item_id == row.id]) for row in rows]
            return sorted(items, key=lambda i: (i.anchor_at is None, i.anchor_at or 0, i.id)), series

    async def complete_occurrence(self, user_id: int, item_id: int, on: date) -> Item:
        """One occurrence of a series is done (吃药那个完成了): closed like a skipped one (its reminder moves on
        to the next occurrence) but still listed, as done; the series goes on."""
        return await self.skip_occurrence(user_id, item_id, on, done=True)

    async def skip_occurrence(self, user_id: int, item_id: int, on: date, *, done: bool = False) -> Item:
        """Cancel one occurrence of a series (an EXDATE): the series itself goes on, and a reminder
        planned for that day moves on to the next occurrence with the same lead time."""
        stamp = now_ms(self._clock)
        async with self._orm_tx() as session:
            row, recurrence, anchor = await _owned_series(session, user_id, item_id)
            zone = ZoneInfo(row.timezone)
            skipped = sorted({*recurrence.skipped, on.isoformat()})
            marked = sorted({*recurrence.done, on.isoformat()} if done else set(recurrence.done) - {on.isoformat()})
            row.metadata_json = {**(row.metadata_json or {}), "skipped": skipped, "done": marked}
            row.updated_at = stamp
            moved = replace(recurrence, skipped=tuple(skipped))
            reminders = await _reminders_of(session, [row.id])
            for rem in reminders:
                occurs = reminder_occurrence(reminder_of(rem), anchor)  # as firing counts it
                lead = occurs - rem.remind_at
                occurrence = from_ms(occurs)
                if rem.status != "pending" or occurrence.astimezone(zone).date() != on:
                    continue
                rem.status, rem.updated_at = "cancelled", stamp
                nxt = next_occurrence(moved, dtstart=from_ms(anchor), after=occurrence, tz=zone)
                if nxt is not None:  # the lead written out: the moved row belongs to its own occurrence
                    await _insert_reminder(session, row, NewReminder(remind_at=to_ms(nxt) - lead,
                                                                     offset_minutes=lead // 60_000,
                                                                     channel=rem.channel), stamp)
            await session.flush()
            return item_of(row, await _reminders_of(session, [row.id]))

    async def reopen_occurrence(self, user_id: int, item_id: int, on: date) -> Item:
        """Undo a done or skipped occurrence (the page's 撤销): the day is open again, and its reminders that
        the close cancelled and that are still ahead are pending again (the next day's, moved there by the
        close, stays: firing this one then finds it and adds no other)."""
        stamp = now_ms(self._clock)
        async with self._orm_tx() as session:
            row, recurrence, anchor = await _owned_series(session, user_id, item_id)
            day, zone = on.isoformat(), ZoneInfo(row.timezone)
            if day in recurrence.skipped:
                row.metadata_json = {**(row.metadata_json or {}),
                                     "skipped": [d for d in recurrence.skipped if d != day],
                                     "done": [d for d in recurrence.done if d != day]}
                row.updated_at = stamp
                for rem in await _reminders_of(session, [row.id]):
                    occurs = from_ms(reminder_occurrence(reminder_of(rem), anchor)).astimezone(zone).date()
                    if rem.status == "cancelled" and occurs == on and rem.remind_at > stamp:
                        rem.status, rem.updated_at, rem.attempts = "pending", stamp, 0
            await session.flush()
            return item_of(row, await _reminders_of(session, [row.id]))

    async def reopen_item(self, user_id: int, item_id: int) -> Item:
        """Undo completing or cancelling one item (the page's 撤销): active again, and the reminders that the
        close cancelled (same instant) and that are still ahead are pending again."""
        stamp = now_ms(self._clock)
        async with self._orm_tx() as session:
            row = await _owned_item(session, user_id, item_id, include_deleted=False)
            if row.status in ("completed", "cancelled"):
                closed_at = row.updated_at
                row.status, row.updated_at = "active", stamp
                for rem in await _reminders_of(session, [row.id]):
                    if rem.status == "cancelled" and rem.updated_at == closed_at and rem.remind_at > stamp:
                        rem.status, rem.updated_at, rem.attempts = "pending", stamp, 0
            await session.flush()
            return item_of(row, await _reminders_of(session, [row.id]))

    async def set_reminder_lead(self, user_id: int, item_id: int, minutes: int) -> Item:
        """Replace the item's open reminders by one `minutes` before its time (周会提醒改成提前15分钟)."""
        stamp = now_ms(self._clock)
        async with self._orm_tx() as session:
            row = await _owned_item(session, user_id, item_id, include_deleted=False)
            anchor = row.start_at if row.kind == "event" else row.due_at
            if anchor is None:
                raise InvalidChange(f"item {item_id} has no time to count back from")
            for rem in await _reminders_of(session, [row.id]):
                if rem.status in OPEN_REMINDER:
                    rem.status, rem.updated_at, rem.locked_until = "cancelled", stamp, None
            await _insert_reminder(session, row, NewReminder(remind_at=anchor - minutes * 60_000,
                                                             offset_minutes=minutes), stamp)
            await session.flush()
            return item_of(row, await _reminders_of(session, [row.id]))

    async def last_delivered_reminder(self, user_id: int, *, since_ms: int) -> tuple[Reminder, Item] | None:
        """The reminder most recently delivered to the user (sent since `since_ms`), with its item."""
        async with self._orm_tx() as session:
            rem = await session.scalar(
                select(ReminderRow).where(ReminderRow.user_id == user_id, ReminderRow.status == "sent",
                                          ReminderRow.sent_at >= since_ms)
                .order_by(ReminderRow.sent_at.desc(), ReminderRow.id.desc()).limit(1))
            if rem is None:
                return None
            row = await _owned_item(session, user_id, rem.item_id, include_deleted=False)
            return reminder_of(rem), item_of(row)

    # -------------------------------------------------------------- reminders
    async def create_reminder(self, user_id: int, item_id: int, new: NewReminder) -> Reminder:
        """Idempotent on (item, remind_at, channel): asking twice returns the same reminder."""
        stamp = now_ms(self._clock)
        async with self._orm_tx() as session:
            row = await _owned_item(session, user_id, item_id, include_deleted=False)
            if row.status != "active":
                raise InvalidChange(f"item {item_id} is {row.status}")
            return reminder_of(await _insert_reminder(session, row, new, stamp))

    async def get_reminder(self, user_id: int, reminder_id: int) -> Reminder:
        async with self._orm_tx() as session:
            rem = await session.scalar(select(ReminderRow).where(ReminderRow.id == reminder_id,
                                                                 ReminderRow.user_id == user_id))
            if rem is None:
                raise NotFound(f"reminder {reminder_id}")
            return reminder_of(rem)

    async def cancel_reminder(self, user_id: int, reminder_id: int) -> Reminder:
        async with self._orm_tx() as session:
            rem = await session.scalar(select(ReminderRow).where(ReminderRow.id == reminder_id,
                                                                 ReminderRow.user_id == user_id))
            if rem is None:
                raise NotFound(f"reminder {reminder_id}")
            if rem.status in OPEN_REMINDER:
                rem.status = "cancelled"
                rem.updated_at = now_ms(self._clock)
            return reminder_of(rem)

    # ----------------------------------------------------------------- digest
    async def subscribe_digest(self, user_id: int, *, local_time: str, kind: str = "todo_day",
                               channel: str = "wechat", workdays: str | None = None,
                               rrule: str | None = None) -> DigestSubscription:
        """Subscribe (or re-time) the user's digest; next run computed in the user's timezone. There is one
        subscription per kind: subscribing again replaces its time and days. `workdays="cn"` sends on official
        working days; `rrule` with BYDAY on those weekdays only (FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR).

        One upsert on (user, kind, channel) and the row read back, sent together: a chat message asks
        for this, so it costs no ORM session (two concurrent requests cannot both insert either)."""
        async with self._tx() as session:
            timezone = session.info.get(_USERS_READ, {}).get(user_id)
            if timezone is None:  # not read in this transaction yet
                user = (await _USER.run(session, {"p_uid": user_id})).first()
                if user is None:
                    raise NotFound(f"user {user_id}")
                timezone = user.timezone
            now = self._clock.now()
            next_run = to_ms(next_digest_run(local_time, tz=ZoneInfo(timezone), after=now, workdays=workdays,
                                             rrule=rrule))
            values = {"p_uid": user_id, "p_kind": kind, "p_channel": channel, "p_time": local_time, "p_tz": timezone,
                      "p_rrule": rrule or (None if workdays else "FREQ=DAILY"), "p_workdays": workdays,
                      "p_next": next_run, "p_at": to_ms(now)}
            _, found = await run_all(session, [(_SUBSCRIBE, values), (_DIGEST, values)])
            return digest_of(found.rows[0])

    async def unsubscribe_digest(self, user_id: int, kind: str = "todo_day") -> bool:
        """Stop the digest; False when there was none active."""
        async with self._orm_tx() as session:
            result = await session.execute(
                update(DigestSubscriptionRow)
                .where(DigestSubscriptionRow.user_id == user_id, DigestSubscriptionRow.kind == kind,
                       DigestSubscriptionRow.status == "active")
                .values(status="cancelled", next_run_at=None, updated_at=now_ms(self._clock))
            )
            return bool(getattr(result, "rowcount", 0))

    async def list_digests(self, user_id: int) -> list[DigestSubscription]:
        async with self._orm_tx() as session:
            rows = await session.scalars(select(DigestSubscriptionRow).where(
                DigestSubscriptionRow.user_id == user_id, DigestSubscriptionRow.status == "active"))
            return [digest_of(r) for r in rows]



# ---------------------------------------------------------------------- helpers
def _check_series(row: ScheduleItemRow, changes: ItemChanges) -> None:
    """A series whose rule or first day changes must still occur (a rule that never does is refused)."""
    rule = row.rrule
    if changes.recurrence is not None or changes.clear_recurrence:
        rule = changes.recurrence.rrule if changes.recurrence else None
    anchor = (changes.start_at or row.start_at) if row.kind == "event" else (changes.due_at or row.due_at)
    if rule is not None and (rule != row.rrule or changes.start_at or changes.due_at or changes.timezone):
        refusal = refused(rule, anchor_ms=anchor, tz=changes.timezone or row.timezone)
        if refusal is not None:
            raise InvalidChange(refusal)


async def _owned_series(session: AsyncSession, user_id: int, item_id: int
                        ) -> tuple[ScheduleItemRow, Recurrence, int]:
    """The user's series row, its rule and its first instant; InvalidChange when the item does not repeat."""
    row = await _owned_item(session, user_id, item_id, include_deleted=False)
    recurrence = recurrence_of(row)
    anchor = row.start_at if row.kind == "event" else row.due_at
    if recurrence is None or anchor is None:
        raise InvalidChange(f"item {item_id} is not recurring")
    return row, recurrence, anchor


def _check_times(start_at: int | None, end_at: int | None) -> None:
    if start_at is not None and end_at is not None and end_at < start_at:
        raise InvalidChange("end_at is before start_at")


def _next_local_midnight(ms: int, tz: str) -> int:
    zone = ZoneInfo(tz)
    following = from_ms(ms).astimezone(zone).date() + timedelta(days=1)
    return to_ms(localize(datetime.combine(following, time()), zone))


async def _owned_item(session: AsyncSession, user_id: int, item_id: int, *, include_deleted: bool) -> ScheduleItemRow:
    query = select(ScheduleItemRow).where(ScheduleItemRow.id == item_id, ScheduleItemRow.user_id == user_id)
    if not include_deleted:
        query = query.where(ScheduleItemRow.status != "deleted")
    row = await session.scalar(query)
    if row is None:
        raise NotFound(f"item {item_id}")
    return row


async def _reminders_of(session: AsyncSession, item_ids: Iterable[int]) -> list[ReminderRow]:
    ids = list(item_ids)
    if not ids:
        return []
    return list((await session.scalars(select(ReminderRow).where(ReminderRow.item_id.in_(ids)))).all())


def _prefixed(values: dict[str, Any]) -> dict[str, Any]:
    """Column values as the prebuilt INSERTs' parameters (`v_<column>`)."""
    return {f"v_{k}": v for k, v in values.items()}


def _new_id(result: Rows) -> int:
    assert result.lastrowid  # a single-row INSERT into a table with an autoincrement id
    return int(result.lastrowid)


async def _reminder_rows(session: Executor, item_ids: list[int]) -> list[Any]:
    """The items' reminders as plain rows of the columns `reminder_of` reads (read-only uses)."""
    if not item_ids:
        return []
    if len(item_ids) == 1:
        return (await _REMINDERS_OF_ITEM.run(session, {"p_id": item_ids[0]})).all()
    if len(item_ids) < len(_REMINDERS_OF_N):
        params = {f"p_id{i}": item_id for i, item_id in enumerate(item_ids)}
        return (await _REMINDERS_OF_N[len(item_ids)].run(session, params)).all()
    conn = await (await orm(session)).connection()
    return list((await conn.execute(_REMINDERS_OF, {"p_ids": item_ids})).all())


def _new_reminder(item: ScheduleItemRow, new: NewReminder, stamp: int) -> ReminderRow:
    return ReminderRow(user_id=item.user_id, item_id=item.id, remind_at=new.remind_at,
                       offset_minutes=new.offset_minutes, channel=new.channel, status="pending", attempts=0,
                       next_attempt_at=new.remind_at, created_at=stamp, updated_at=stamp)


async def _insert_reminder(session: AsyncSession, item: ScheduleItemRow, new: NewReminder, stamp: int) -> ReminderRow:
    key = and_(ReminderRow.item_id == item.id, ReminderRow.remind_at == new.remind_at,
               ReminderRow.channel == new.channel)
    existing = await session.scalar(select(ReminderRow).where(key))
    if existing is None:
        try:
            async with session.begin_nested():
                existing = _new_reminder(item, new, stamp)
                session.add(existing)
        except IntegrityError:
            # A concurrent session created the same reminder first; that one is ours too.
            existing = await session.scalar(select(ReminderRow).where(key))
            if existing is None:  # pragma: no cover
                raise
    elif existing.status == "cancelled":  # asking again re-arms a cancelled reminder
        existing.status, existing.updated_at, existing.attempts = "pending", stamp, 0
    return existing
