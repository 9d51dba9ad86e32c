"""ScheduleService: the one write path for items, reminders and digests, always scoped by user id.

A thin facade: it owns the unit of work (which transaction a call runs in) and the clock, and hands each
call to the module of its concept (users, tokens, items, listing, series, reminders, digest).

Each call runs in a transaction of its own, unless the service is bound to a unit of work (`within(unit)`):
then every call of that bound service runs in that transaction, and commits or rolls back with it. Which
transaction a call joins is always in the caller's hands, never picked up from the surrounding task."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import date, datetime
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import digest, items, listing, reminders, series, tokens, users
from schedule.clock import Clock, now_ms
from schedule.convert import user_of
from schedule.db import session_transaction, unit_of_work
from schedule.domain import DigestSubscription, Item, ItemChanges, ItemKind, NewItem, NewReminder, Reminder, User
from schedule.fastsql import Executor, orm
from schedule.items import MAX_ACTIVE_ITEMS

_P = ParamSpec("_P")
_T = TypeVar("_T")


class ScheduleService:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *,
                 default_timezone: str = "Asia/Shanghai", max_active_items: int = MAX_ACTIVE_ITEMS,
                 unit: Executor | None = None) -> None:
        self._sessions = sessions
        self._max_active_items = max_active_items
        self._clock = clock
        self._default_tz = default_timezone
        self._unit = unit  # the transaction every call runs in (`within`), or None: a transaction per call

    # ----------------------------------------------------------- unit of work
    @asynccontextmanager
    async def unit_of_work(self) -> AsyncIterator[Executor]:
        """One transaction for several service calls (a whole chat message): the calls of `within(unit)`
        join it, and everything commits together at the end or rolls back together.

        It runs on a bare driver transaction (`fastsql.Tx`): a chat message's usual statements are all
        `Fast` ones, and an ORM session costs about a sixth of a message's CPU. A call that needs the
        ORM gets a session lent on the same connection and transaction (`_orm_tx`)."""
        if self._unit is not None:
            raise RuntimeError("this service runs in a unit of work already")
        async with unit_of_work(self._sessions) as unit:
            yield unit

    def within(self, unit: Executor) -> ScheduleService:
        """This service with every call run in `unit` (a transaction its opener commits or rolls back)."""
        return ScheduleService(self._sessions, self._clock, default_timezone=self._default_tz,
                               max_active_items=self._max_active_items, unit=unit)

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[Executor]:
        """The bound unit of work, or a transaction of this call's own: for calls made of `Fast` statements."""
        if self._unit is not None:
            yield self._unit
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

    async def _fast(self, call: Callable[Concatenate[Executor, _P], Awaitable[_T]], /,
                    *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """`call(session, …)` in `_tx`."""
        async with self._tx() as session:
            return await call(session, *args, **kwargs)

    async def _orm(self, call: Callable[Concatenate[AsyncSession, _P], Awaitable[_T]], /,
                   *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """`call(session, …)` in `_orm_tx`."""
        async with self._orm_tx() as session:
            return await call(session, *args, **kwargs)

    def _now_ms(self) -> int:
        return now_ms(self._clock)

    # ------------------------------------------------------------------ users
    async def get_or_create_user(self, openid: str, *, timezone: str | None = None) -> User:
        return user_of(await self._orm(users.get_or_create, openid, timezone=timezone or self._default_tz,
                                       now_ms=self._now_ms()))

    @staticmethod
    def user_read(session: Executor, user_id: int, timezone: str, *, locked: bool = False) -> None:
        """Note that this transaction has read the user (`users.note_read`); `locked`: FOR UPDATE."""
        users.note_read(session, user_id, timezone, locked=locked)

    async def find_user(self, openid: str) -> User | None:
        row = await self._orm(users.find, openid)
        return user_of(row) if row is not None else None

    async def get_user(self, user_id: int) -> User:
        return user_of(await self._fast(users.get, user_id))  # the row has the columns user_of reads

    async def forget_user(self, user_id: int) -> None:
        await self._orm(users.forget, user_id, now_ms=self._now_ms())

    # ------------------------------------------------------------- API tokens
    async def issue_api_token(self, openid: str, *, label: str = tokens.DEFAULT_LABEL) -> tuple[User, str, bool]:
        """A fresh bearer token for the user (created if missing) under `label`; True when it replaced
        that label's previous token. Other labels keep working; only hashes are stored."""
        row, token, replaced = await self._orm(tokens.issue_for, openid, label, timezone=self._default_tz,
                                               now_ms=self._now_ms())
        return user_of(row), token, replaced

    async def api_tokens(self, openid: str) -> list[tokens.TokenInfo]:
        return await self._orm(tokens.listed_for, openid)

    async def revoke_api_token(self, openid: str, label: str) -> bool:
        return await self._orm(tokens.revoke_for, openid, label)

    async def user_for_token(self, token: str) -> User | None:
        row = await self._orm(tokens.user_for, token, now_ms=self._now_ms())
        return user_of(row) if row is not None else None

    # ------------------------------------------------------------------ items
    @property
    def max_active_items(self) -> int:
        """The per-user quota of active items (creates and reopens past it are refused)."""
        return self._max_active_items

    async def create_item(self, user_id: int, new: NewItem) -> Item:
        return await self._fast(items.create, user_id, new, now_ms=self._now_ms(), max_active=self._max_active_items)

    async def get_item(self, user_id: int, item_id: int) -> Item:
        return await self._fast(items.get, user_id, item_id)

    async def list_items(
        self, user_id: int, *, start_ms: int | None = None, end_ms: int | None = None,
        kind: ItemKind | None = None, statuses: Sequence[str] = ("active",),
        include_undated_tasks: bool = False, include_reminders: bool = True, expand: bool = False,
        as_stored: bool = False,
    ) -> list[Item]:
        """Items in [start_ms, end_ms), ordered by time (`listing.entries`)."""
        return (await self.list_window(user_id, start_ms=start_ms, end_ms=end_ms, kind=kind, statuses=statuses,
                                       include_undated_tasks=include_undated_tasks,
                                       include_reminders=include_reminders, expand=expand,
                                       as_stored=as_stored)).items

    async def list_window(
        self, user_id: int, *, start_ms: int | None = None, end_ms: int | None = None, kind: ItemKind | None = None,
        statuses: Sequence[str] = ("active",), include_undated_tasks: bool = False, include_reminders: bool = True,
        expand: bool = False, as_stored: bool = False, first: int | None = None,
    ) -> listing.Window:
        """`list_items` cut to the `first` entries in time order, saying whether the expansion budget cut it.
        The rows are read in a transaction, and the series expanded after it: a long expansion holds no
        connection (SQLite has one for the whole process)."""
        query = listing.Query(user_id, start_ms=start_ms, end_ms=end_ms, kind=kind, statuses=tuple(statuses),
                              include_undated_tasks=include_undated_tasks, include_reminders=include_reminders,
                              expand=expand, as_stored=as_stored, first=first)
        return await listing.entries(await self._fast(listing.read, query), query)

    async def overdue_tasks(self, user_id: int, *, before_ms: int, limit: int) -> tuple[int, list[Item]]:
        """Open one-off tasks due before `before_ms`: how many, and the latest `limit` with their reminders."""
        return await self._fast(listing.overdue_tasks, user_id, before_ms=before_ms, limit=limit)

    async def update_item(self, user_id: int, item_id: int, changes: ItemChanges) -> Item:
        """Apply a partial change; moving an event or deadline moves its open reminders (offset kept)."""
        return await self._orm(items.change, user_id, item_id, changes, now_ms=self._now_ms())

    async def complete_item(self, user_id: int, item_id: int) -> Item:
        return await self._fast(items.close, user_id, item_id, "completed", now_ms=self._now_ms())

    async def cancel_item(self, user_id: int, item_id: int) -> Item:
        return await self._fast(items.close, user_id, item_id, "cancelled", now_ms=self._now_ms())

    async def delete_item(self, user_id: int, item_id: int) -> Item:
        return await self._fast(items.close, user_id, item_id, "deleted", now_ms=self._now_ms())

    async def reopen_item(self, user_id: int, item_id: int) -> Item:
        """Undo completing or cancelling one item (the page's 撤销)."""
        return await self._orm(items.reopen, user_id, item_id, now_ms=self._now_ms(),
                               max_active=self._max_active_items)

    async def restore_recent(self, user_id: int, *, since_ms: int) -> tuple[list[Item], int]:
        """Undo the user's last cancel or complete (撤销), with how many series it touched (`items.restore_recent`)."""
        return await self._orm(items.restore_recent, user_id, since_ms=since_ms, now_ms=self._now_ms(),
                               max_active=self._max_active_items)

    # ------------------------------------------------------------ occurrences
    async def complete_occurrence(self, user_id: int, item_id: int, on: date | datetime) -> Item:
        """One occurrence of a series is done (吃药那个完成了): closed like a skipped one (its reminder moves on
        to the next occurrence) but still listed, as done; the series goes on."""
        return await self.skip_occurrence(user_id, item_id, on, done=True)

    async def skip_occurrence(self, user_id: int, item_id: int, on: date | datetime, *, done: bool = False
                              ) -> Item:
        """Cancel one occurrence of a series (an EXDATE): the series itself goes on, and a reminder
        planned for that day moves on to the next occurrence with the same lead time."""
        return await self._orm(series.skip_occurrence, user_id, item_id, on, done=done, now_ms=self._now_ms())

    async def reopen_occurrence(self, user_id: int, item_id: int, on: date | datetime) -> Item:
        """Undo a done or skipped occurrence (the page's 撤销)."""
        return await self._orm(series.reopen_occurrence, user_id, item_id, on, now_ms=self._now_ms())

    # -------------------------------------------------------------- reminders
    async def set_reminder_lead(self, user_id: int, item_id: int, minutes: int) -> Item:
        """Replace the item's open reminders by one `minutes` before its time (周会提醒改成提前15分钟)."""
        return await self._orm(reminders.set_lead, user_id, item_id, minutes, now_ms=self._now_ms())

    async def drop_reminders(self, user_id: int, item_id: int) -> Item:
        """Cancel the item's open reminders and keep the item (不用提醒我了)."""
        return await self._orm(reminders.drop_open, user_id, item_id, now_ms=self._now_ms())

    async def last_delivered_reminder(self, user_id: int, *, since_ms: int) -> tuple[Reminder, Item] | None:
        """The reminder most recently delivered to the user (sent since `since_ms`), with its item."""
        return await self._orm(reminders.last_delivered, user_id, since_ms=since_ms)

    async def create_reminder(self, user_id: int, item_id: int, new: NewReminder) -> Reminder:
        """Idempotent on (item, remind_at, channel): asking twice returns the same reminder."""
        return await self._orm(reminders.create, user_id, item_id, new, now_ms=self._now_ms())

    async def get_reminder(self, user_id: int, reminder_id: int) -> Reminder:
        return await self._orm(reminders.get, user_id, reminder_id)

    async def cancel_reminder(self, user_id: int, reminder_id: int) -> Reminder:
        return await self._orm(reminders.cancel, user_id, reminder_id, now_ms=self._now_ms())

    # ----------------------------------------------------------------- digest
    async def subscribe_digest(self, user_id: int, *, local_time: str, kind: str = "todo_day",
                               channel: str = "wechat", workdays: str | None = None,
                               rrule: str | None = None) -> DigestSubscription:
        """Subscribe (or re-time) the user's digest: one per kind (`digest.subscribe`)."""
        return await self._fast(digest.subscribe, user_id, now=self._clock.now(), local_time=local_time, kind=kind,
                                channel=channel, workdays=workdays, rrule=rrule)

    async def unsubscribe_digest(self, user_id: int, kind: str = "todo_day") -> bool:
        """Stop the digest; False when there was none active."""
        return await self._orm(digest.unsubscribe, user_id, kind, now_ms=self._now_ms())

    async def list_digests(self, user_id: int) -> list[DigestSubscription]:
        return await self._orm(digest.listed, user_id)
