"""Reading a user's items over a time range (what chat, the page, the API and the feed list) and the overdue
tasks the page folds into one group: prebuilt statements that read items and their reminders in one trip."""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from typing import Any, TypeVar

from sqlalchemy import and_, bindparam, func, or_, select

from schedule import occurrence
from schedule.convert import ITEM_COLUMNS, ITEMS, REMINDER_COLUMNS, REMINDERS, item_of, recurrence_of
from schedule.domain import Item, ItemKind
from schedule.fastsql import Executor, Fast, orm, run_all
from schedule.occurrence import Budget, at_occurrence, in_range

_T = TypeVar("_T")
INLINE_SERIES = 50  # up to this many series a listing expands on the event loop (a few ms); more go to a thread

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
_REMINDERS_OF_ITEM = Fast(select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id == bindparam("p_id")))
_REMINDERS_OF = select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id.in_(bindparam("p_ids", expanding=True)))
# The reminders of up to 32 items, one prebuilt statement per count (an expanding IN list has no fast plan).
_REMINDERS_OF_N = [Fast(select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id.in_(
    [bindparam(f"p_id{i}") for i in range(n)]))) for n in range(33)]


@dataclass(frozen=True)
class Query:
    """What a listing asks for: the range and the rows' filter, and how a series is shown."""

    user_id: int
    start_ms: int | None = None
    end_ms: int | None = None
    kind: ItemKind | None = None
    statuses: tuple[str, ...] = ("active",)
    include_undated_tasks: bool = False
    include_reminders: bool = True
    expand: bool = False  # a series at every occurrence in the range: what chat, the page and the API list
    as_stored: bool = False  # a series as stored, from its first occurrence: what the calendar feed writes out
    first: int | None = None  # the entries wanted, earliest first: a page of the API is cut before expanding


@dataclass(frozen=True)
class Read:
    """The rows a listing reads (and their reminders), before any series is expanded."""

    rows: list[Any]
    reminders: list[Any] | None  # None: not asked for


@dataclass(frozen=True)
class Window:
    """A listing's entries, and whether they are all of them (False: cut by the expansion budget)."""

    items: list[Item]
    complete: bool


async def read(session: Executor, query: Query) -> Read:
    """The rows that may belong to the query's range, with their reminders, in one trip where it can be.
    The transaction can end right after: expanding them (`entries`) needs no connection."""
    params: dict[str, object] = {"p_uid": query.user_id, "p_statuses": list(query.statuses)}
    kind, statuses = query.kind, query.statuses
    if kind is not None:
        params["p_kind"] = kind
    shown = statuses == ("active", "completed") and kind is None
    if statuses == ("active",) or shown:
        far = 1 << 62
        params.update(p_lo=-far if query.start_ms is None else query.start_ms,
                      p_hi=far if query.end_ms is None else query.end_ms, p_undated=query.include_undated_tasks)
        statements: list[tuple[Fast, Mapping[str, Any] | None]] = [
            (_SHOWN_ITEMS_OF if shown else _ACTIVE_ITEMS_OF if kind is None else _ACTIVE_ITEMS_OF_KIND, params)]
        if query.include_reminders:  # in the same trip, for the same items
            statements.append((_SHOWN_REMINDERS_OF if shown else _ACTIVE_REMINDERS_OF if kind is None
                               else _ACTIVE_REMINDERS_OF_KIND, params))
        results = await run_all(session, statements)
        return Read(results[0].all(), results[1].all() if query.include_reminders else None)
    rows = list((await (await (await orm(session)).connection()).execute(
        _ITEMS_OF if kind is None else _ITEMS_OF_KIND, params)).all())
    return Read(rows, await _reminder_rows(session, [r.id for r in rows]) if query.include_reminders else None)


async def entries(read: Read, query: Query) -> Window:
    """Items in [start_ms, end_ms): events overlapping it, tasks due in it, recurring items with an occurrence
    in it (reported at that occurrence, or at every one with `expand`: done days as completed, each with its
    own reminders). Ordered by time.

    The expansion has a budget per call (`occurrence.MAX_PER_REQUEST`): the answer is then the earliest
    entries in time order, as it is with `first`; `Window.complete` says which."""
    budget = Budget()
    rows = read.rows
    series = sum(1 for row in rows if row.rrule or row.workdays or row.lunar)
    found = await _off_loop(series, _kept, rows, query.start_ms, query.end_ms, query.include_undated_tasks,
                            query.expand or query.as_stored, budget)
    by_item: dict[int, list[Any]] = {}
    for rem in read.reminders or ():
        by_item.setdefault(rem.item_id, []).append(rem)
    items = await _off_loop(series, _entries, found, by_item if read.reminders is not None else None,
                            query.start_ms, query.end_ms, query.expand, query.first, budget)
    return Window(items, complete=not budget.exhausted)


async def _off_loop(series: int, call: Callable[..., _T], *args: Any) -> _T:
    """Run an expansion on a worker thread when it may be long (many series), so it never holds the event loop;
    a few series are cheaper to expand in place than to hand over."""
    if series > INLINE_SERIES:
        return await asyncio.to_thread(call, *args)
    return call(*args)


def _kept(rows: Sequence[Any], start_ms: int | None, end_ms: int | None, include_undated: bool, every_series: bool,
          budget: Budget) -> list[tuple[Any, int | None]]:
    """The rows that belong to the range, each with the occurrence it is shown at (None: as stored)."""
    return [hit for row in rows
            if (hit := ((row, None) if every_series and recurrence_of(row) is not None
                        else in_range(row, start_ms, end_ms, include_undated, budget))) is not None]


def _entries(found: list[tuple[Any, int | None]], reminders: dict[int, list[Any]] | None, start_ms: int | None,
             end_ms: int | None, expand: bool, first: int | None, budget: Budget) -> list[Item]:
    """The entries in time order: every series expanded lazily and merged, so at most `first` entries (and
    what the budget allows) are ever built, and a cut keeps the earliest ones."""
    last = 1 << 62
    streams: list[Iterable[tuple[int, int, Callable[[int], Item]]]] = []
    for row, occ in found:
        item = item_of(row, reminders.get(row.id, []) if reminders is not None else None)
        if expand and item.recurrence is not None and item.anchor_at is not None:
            times, build = occurrence.occurrence_plan(item, start_ms, end_ms, budget)
            streams.append(zip(times, repeat(item.id), repeat(build)))  # bound now, not when pulled
        else:
            shown = at_occurrence(item, occ)
            anchor = shown.anchor_at
            streams.append(((anchor if anchor is not None else last, shown.id, partial(_same, shown)),))
    items: list[Item] = []
    for at, _, build in heapq.merge(*streams, key=lambda entry: (entry[0], entry[1])):
        if budget.exhausted or (first is not None and len(items) >= first):
            break  # every entry kept came before the cut, in time order: a prefix of the full listing
        items.append(build(at))  # built only when kept
    return items


def _same(item: Item, _: int) -> Item:
    return item


async def overdue_tasks(session: Executor, user_id: int, *, before_ms: int, limit: int) -> tuple[int, list[Item]]:
    """Open one-off tasks due before `before_ms`: how many, and the latest `limit` with their reminders."""
    params = {"p_uid": user_id, "p_before": before_ms, "p_limit": limit}
    counted, latest = await run_all(session, [(_OVERDUE_COUNT, params), (_OVERDUE_LATEST, params)])
    rows = latest.all()
    by_item: dict[int, list[Any]] = {}
    for rem in await _reminder_rows(session, [r.id for r in rows]):
        by_item.setdefault(rem.item_id, []).append(rem)
    return int(counted.rows[0][0]), [item_of(row, by_item.get(row.id, [])) for row in rows]


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
