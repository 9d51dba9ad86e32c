"""The webhook's hot statements straight to the driver, compiled by SQLAlchemy once per dialect.

Every chat message runs about a dozen small statements. Through SQLAlchemy's execution machinery each
costs about twice the CPU of the bare driver call, so the statements on that path are prebuilt Core
statements wrapped in `Fast`: SQLAlchemy compiles each once per dialect, and the plan is read off the
compiled statement's public attributes (`string`, `positiontup`, `bind_names`) and the column types' own
`bind_processor`/`result_processor`. `Fast.run` then only orders the parameters, sends the statement on the
unit's connection (same transaction) through the driver's public API (`schedule.trips`) and builds plain
named-tuple rows. Anything this does not cover (expanding IN lists, post-compile parameters, a
non-positional paramstyle) is left to `connection.execute`, so a statement is never run with a wrong
shape. Driver errors are raised as SQLAlchemy's own exception classes, so deadlock retries still apply.

A unit of work made only of such statements can skip the ORM session as well: `transaction` runs it on a
pooled `AsyncConnection` whose transaction it begins and commits itself (`Tx`); a session, when the unit
needs one, is bound to that same connection. The webhook's claim and finish units are such.
"""

from __future__ import annotations

import weakref
from collections import namedtuple
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import event
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession
from sqlalchemy.sql import ClauseElement, Executable

from schedule.trips import Outcome, Statement, literals, trip_for

__all__ = ["Executor", "Fast", "Rows", "Tx", "literals", "on_commit", "orm", "run_all", "run_then", "transaction"]


@dataclass(frozen=True, slots=True)
class Rows:
    """What a statement returned: rows (named tuples: attribute access and `_asdict`), rowcount, lastrowid."""

    rows: list[Any]
    rowcount: int
    lastrowid: int | None

    def first(self) -> Any | None:
        return self.rows[0] if self.rows else None

    def all(self) -> list[Any]:
        return self.rows


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]
    literals: dict[str, Any]  # values written into the statement itself (`.values(status="done")`)
    binds: dict[str, Callable[[Any], Any]]
    row: Any  # the named-tuple class of the result, or None
    results: tuple[Callable[[Any], Any] | None, ...]


class Tx:
    """An open transaction on one pooled connection, with no session around it (`transaction`).

    A unit that needs the ORM after all (a rarer step: editing an item, subscribing a digest) asks for
    `session()`: an `AsyncSession` bound to this same connection and transaction (SQLAlchemy's "join a
    session into an external transaction"), opened on first need, which then also makes the commit
    (flushing its objects first). `info` is the unit's scratch space, like `Session.info`; `on_commit`
    callbacks run once the transaction has committed.

    Writes whose outcome nobody reads (the window, the inbound row marked done, the saved question) can
    be `defer`red: they go to the database with the next statement or with the COMMIT, in the same trip
    (MariaDB: one multi-statement query). A chat message's finish is then one round trip, not three. An
    error in one still fails the unit.
    """

    __slots__ = ("_beginning", "_committed", "_connection", "_ended", "_orm", "_pending", "_sent", "_trip", "dialect",
                 "driver", "info", "shared")

    def __init__(self, connection: AsyncConnection, driver: Any) -> None:
        self._connection = connection
        self.dialect: Dialect = connection.dialect
        self.driver = driver
        self._trip = trip_for(self.dialect)
        self.info: dict[str, Any] = {}
        self._orm: AsyncSession | None = None
        self._committed: list[Callable[[], None]] = []
        self._pending: list[Statement] = []
        self.shared = False  # several units of work in this transaction (a group commit's batch)
        self._ended = False  # committed with a unit's last statements (`execute_all(…, last=True)`)
        self._beginning = False  # SQLite: BEGIN IMMEDIATE not sent yet (`begin`)
        self._sent = False  # a statement has gone to the database in this transaction

    @property
    def lends_session(self) -> bool:
        """Whether a session has been lent (its statements may run any time: no batching around it)."""
        return self._orm is not None

    async def session(self) -> AsyncSession:
        """An ORM session in this transaction (the same connection), opened once per transaction."""
        if self._orm is None:
            if self._pending or self._beginning:  # BEGIN and the deferred writes first: the session's come after
                await self._send(self._pending)
            # The connection's transaction is begun here, on SQLAlchemy's side only (the begin event sees the
            # driver's open already and sends nothing), and the session joins it without owning it: its
            # commit only flushes and its close leaves the transaction alone, so a lent session can never
            # end the unit's transaction. The unit's own `commit` ends it, whether the session ran or not.
            if not self._connection.in_transaction():
                await self._connection.begin()
            self._orm = AsyncSession(bind=self._connection, expire_on_commit=False,
                                     join_transaction_mode="rollback_only")
        return self._orm

    def on_commit(self, callback: Callable[[], None]) -> None:
        self._committed.append(callback)

    async def defer(self, sql: str, args: Any = ()) -> None:
        """Run a write whose outcome is not needed with the next trip (see the class docstring)."""
        if self._ended:
            raise RuntimeError("this unit's last writes are committed already")
        if self._orm is not None:  # the session may run statements of its own any time: keep the order
            await self.execute(sql, args)
        else:
            self._pending.append((sql, tuple(args), False))

    async def begin(self) -> None:
        """SQLite: BEGIN IMMEDIATE, the write lock taken up front (MariaDB begins implicitly). It goes with the
        unit's first trip when that trip only reads (should the BEGIN fail, those reads ran outside any
        transaction and the unit fails), else on its own just before it: one hand-over to aiosqlite fewer."""
        self._beginning = True

    async def execute(self, sql: str, args: Any = (), *, returns_rows: bool | None = None
                      ) -> Outcome:
        """A statement straight on the driver, in this transaction: its rows, rowcount and lastrowid.
        `returns_rows` defaults to whether the SQL reads (SELECT, PRAGMA, WITH, or RETURNING)."""
        rows = _reads(sql) if returns_rows is None else returns_rows
        return (await self._send([*self._pending, (sql, tuple(args), rows)]))[-1]

    async def execute_all(self, statements: list[tuple[str, Any, bool]], *, last: bool = False
                          ) -> list[Outcome]:
        """Several statements in one trip (with any deferred ones first): each one's rows, rowcount, lastrowid.

        `last`: they are the unit's last writes, so when the unit has this transaction to itself (not
        `shared`, no session lent) its COMMIT goes in the same trip. Whatever the unit runs afterwards
        may only read: on MariaDB that opens a new transaction, committed at the end of the block; on
        SQLite it runs in autocommit mode.
        """
        sent: list[Statement] = [(sql, tuple(args), rows) for sql, args, rows in statements]
        commit = last and not self.shared and self._orm is None
        outcomes = await self._send([*self._pending, *sent, *([_COMMIT] if commit else [])])
        if commit:
            self._ended = True
            outcomes.pop()
        return outcomes[len(outcomes) - len(sent):]

    async def commit_then(self, statements: list[tuple[str, Any, bool]], then: list[tuple[str, Any, bool]]
                          ) -> tuple[list[Outcome],
                                     list[Outcome] | None]:
        """MariaDB: `statements`, COMMIT, then `then` in a new transaction on this connection, all in one
        trip; each part's outcomes. The unit goes on in that new transaction (see `schedule.handoff`). Should a
        statement of `then` fail, what was committed stands: its outcomes are None."""
        if self.dialect.name == "sqlite" or self.shared or self._orm is not None or not then:
            raise TypeError("commit_then needs a MariaDB transaction of its own, and statements after the COMMIT")
        sent: list[Statement] = [(sql, tuple(args), rows) for sql, args, rows in statements]
        after: list[Statement] = [(sql, tuple(args), rows) for sql, args, rows in then]
        ahead = len(self._pending)
        try:
            outcomes = await self._send([*self._pending, *sent, _COMMIT, *after])
            read: list[Outcome] | None = outcomes[-len(after):]
        except DBAPIError as error:  # committed already when only a statement after the COMMIT failed
            outcomes = getattr(error.orig, "schedbot_done", [])
            if len(outcomes) <= ahead + len(sent):
                raise
            read = None
        self._committed, committed = [], self._committed
        for callback in committed:
            callback()
        return outcomes[ahead:ahead + len(sent)], read

    def has_prefetched(self) -> bool:
        """Whether rows read ahead (`prefetched`) wait for their statement's `run`."""
        return bool(self.info.get(_PREFETCHED))

    def prefetched(self, fast: Fast, params: Mapping[str, Any] | None, rows: Rows) -> None:
        """Keep `rows` as what `fast` with `params` returns in this transaction: its next `run` takes them."""
        self.info.setdefault(_PREFETCHED, {})[fast] = (dict(params or {}), rows)

    def in_transaction(self) -> bool:
        """Whether the driver connection has a transaction open (SQLite's flag; MariaDB's last reply's)."""
        return self._trip.in_transaction(self.driver)

    async def _send(self, statements: list[Statement]) -> list[Outcome]:
        """Several statements in one trip, in order; the first that fails raises and stops the rest."""
        self._pending = []
        self._sent = True
        try:
            if self._beginning:
                self._beginning = False
                if statements and all(rows for _sql, _args, rows in statements):
                    return (await self._trip.run(self.driver, [_BEGIN, *statements]))[1:]
                await self._trip.run(self.driver, [_BEGIN])
            if not statements:
                return []
            return await self._trip.run(self.driver, statements)
        except self.dialect.loaded_dbapi.Error as exc:
            raise DBAPIError.instance("; ".join(sql for sql, _args, _rows in statements), (), exc,
                                      self.dialect.loaded_dbapi.Error, dialect=self.dialect) from exc

    async def commit(self) -> None:
        """COMMIT (with a lent session: its objects flushed first, then the connection's COMMIT)."""
        if self._orm is not None:
            await self._orm.flush()
            if self._pending:
                await self._send(self._pending)
            if not self._connection.in_transaction():  # a lent session rolled the unit back: nothing to commit
                raise RuntimeError("the unit's transaction was rolled back before its commit")
            await self._connection.commit()
        elif self._ended and not self._pending and (self.dialect.name == "sqlite" or not self.in_transaction()):
            pass  # committed with the unit's last statements, and nothing (or only autocommit reads) since
        elif not self._sent and not self._pending:
            pass  # nothing ran in it (a unit whose handler needed no database): nothing to commit
        elif self._pending or self.dialect.name != "sqlite" or self.in_transaction():
            await self._send([*self._pending, _COMMIT])
        for callback in self._committed:
            callback()

    async def rollback(self) -> None:
        self._pending = []
        if self._orm is not None:
            orm, self._orm = self._orm, None
            await orm.close()  # leaves the transaction alone (it joined it): roll the whole unit back here
            await self._connection.rollback()
            return
        self._beginning = False
        if self.dialect.name != "sqlite":
            await self._send([("ROLLBACK", (), False)])
            return
        # sqlite3's rollback, which does nothing outside a transaction, queued behind whatever aiosqlite's thread
        # still runs for this unit (a BEGIN that was waiting for the lock when the unit was cancelled): the
        # connection never goes back to the pool with a transaction open.
        try:
            await self.driver.rollback()
        except self.dialect.loaded_dbapi.Error as exc:
            raise DBAPIError.instance("ROLLBACK", (), exc, self.dialect.loaded_dbapi.Error,
                                      dialect=self.dialect) from exc


_COMMIT: Statement = ("COMMIT", (), False)
_BEGIN: Statement = ("BEGIN IMMEDIATE", (), False)
_READS = ("SELECT", "PRAGMA", "WITH", "SHOW")


def _reads(sql: str) -> bool:
    head = sql.lstrip()[:6].upper()
    return head.startswith(_READS) or " RETURNING " in sql.upper()


Executor = AsyncSession | Tx  # what `Fast.run` runs on


async def orm(target: Executor) -> AsyncSession:
    """The ORM session of a unit of work: the session itself, or the one a `Tx` lends on its connection."""
    return target if isinstance(target, AsyncSession) else await target.session()


def on_commit(target: Executor, callback: Callable[[], None]) -> None:
    """Run `callback` once the unit's transaction has committed (never if it rolls back)."""
    if isinstance(target, Tx):
        target.on_commit(callback)
    else:
        event.listen(target.sync_session, "after_commit", lambda _session: callback(), once=True)


@asynccontextmanager
async def transaction(engine: AsyncEngine) -> AsyncIterator[Tx]:
    """One transaction for `Fast` statements only, on a connection from the engine's pool.

    Begun as a session's would be (SQLite: BEGIN IMMEDIATE; MariaDB: implicitly, at the pool's
    isolation level), committed when the block ends, rolled back if it raises. A connection whose
    rollback fails is invalidated, so the pool never hands out a broken or half-open one.
    """
    async with engine.connect() as connection:
        raw = await connection.get_raw_connection()
        tx = Tx(connection, raw.driver_connection)
        try:
            if tx.dialect.name == "sqlite":
                await tx.begin()
            yield tx
            await tx.commit()
        except BaseException:
            try:
                await tx.rollback()
            except BaseException:
                await connection.invalidate()
            raise


_OPEN = "schedule_fastsql_connection"  # session.info: (its transaction, connection, driver connection)
_PREFETCHED = "schedule_fastsql_prefetched"  # Tx.info: {Fast: (params, Rows)} read ahead (`Tx.prefetched`)


async def _connection(target: Executor) -> tuple[AsyncConnection | None, Tx]:
    """The connection (None outside a session) and a `Tx` view of its driver connection. A session's are
    looked up once per transaction (a chat message runs a dozen statements in one; each lookup is a trip
    through the session's greenlet machinery)."""
    if isinstance(target, Tx):
        return None, target
    transaction = target.sync_session.get_transaction()
    known = target.info.get(_OPEN)
    if transaction is not None and known is not None and known[0] is transaction:
        return known[1], known[2]
    conn = await target.connection()
    # The pooled connection is open now: read it off the sync side (no trip through the greenlet bridge).
    sync = conn.sync_connection
    assert sync is not None  # session.connection() returns a started connection
    tx = Tx(conn, sync.connection.driver_connection)
    target.info[_OPEN] = (target.sync_session.get_transaction(), conn, tx)
    return conn, tx


class Fast:
    """A prebuilt Core statement run on the session's driver connection (see the module docstring).

    `statement` may be one statement or one per dialect ({"sqlite": …, "mysql": …}; MariaDB uses "mysql")
    for upserts and INSERT-or-ignore, which each backend spells its own way.
    """

    def __init__(self, statement: Executable | Mapping[str, Executable]) -> None:
        self._statements = statement if isinstance(statement, Mapping) else None
        self._statement = None if isinstance(statement, Mapping) else statement
        # Per dialect object (an engine's): its JSON serializer and server version shape the plan.
        self._compiled: weakref.WeakKeyDictionary[Dialect, _Compiled | None] = weakref.WeakKeyDictionary()
        self._last: tuple[Dialect, _Compiled | None] | None = None

    def statement(self, dialect: Dialect) -> Executable:
        if self._statements is None:
            assert self._statement is not None
            return self._statement
        return self._statements[dialect.name if dialect.name in self._statements else "mysql"]

    def plan(self, dialect: Dialect) -> _Compiled | None:
        """The statement compiled for `dialect` once (None: a shape the fast path leaves to SQLAlchemy)."""
        last = self._last
        if last is not None and last[0] is dialect:  # one engine per process: skip the weak-key lookup
            return last[1]
        if dialect in self._compiled:
            self._last = (dialect, self._compiled[dialect])
            return self._last[1]
        statement = self.statement(dialect)
        compiled: Any = cast(ClauseElement, statement).compile(dialect=dialect)
        plan: _Compiled | None = None
        if compiled.positional and compiled.positiontup is not None and "POSTCOMPILE" not in compiled.string \
                and not compiled.literal_execute_params and not compiled.post_compile_params:
            binds = {name: bind for bind, name in compiled.bind_names.items()}  # as named in positiontup
            literals = {name: bind.value for name, bind in binds.items()
                        if not bind.required and bind.callable is None}
            processors = {name: process for name, bind in binds.items()
                          if (process := bind.type.dialect_impl(dialect).bind_processor(dialect)) is not None}
            exported = getattr(statement, "exported_columns", None)  # SELECT's columns, or RETURNING's
            columns = list(exported.items()) if exported is not None else []
            row = namedtuple("Row", [key for key, _ in columns], rename=True) if columns else None
            results = tuple(c.type.dialect_impl(dialect).result_processor(dialect, None) for _, c in columns)
            plan = _Compiled(compiled.string, tuple(compiled.positiontup), literals, processors, row, results)
        self._compiled[dialect] = plan
        self._last = (dialect, plan)
        return plan

    async def defer(self, target: Executor, params: Mapping[str, Any] | None = None) -> None:
        """A write whose outcome is not needed: on a `Tx`, sent with its next trip (`Tx.defer`); else run now."""
        if isinstance(target, Tx) and (plan := self.plan(target.dialect)) is not None:
            await target.defer(plan.sql, _args(plan, params))
        else:
            await self.run(target, params)

    async def run(self, target: Executor, params: Mapping[str, Any] | None = None) -> Rows:
        if type(target) is Tx and _PREFETCHED in target.info:  # read already, in the trip that began it
            kept = target.info[_PREFETCHED].pop(self, None)
            if kept is not None and kept[0] == dict(params or {}):
                return cast(Rows, kept[1])
        conn, tx = await _connection(target)
        dialect = tx.dialect
        plan = self.plan(dialect)
        if plan is None:  # not a shape the fast path handles: SQLAlchemy runs it
            if conn is None:
                assert isinstance(target, Tx)
                conn = await (await target.session()).connection()  # TypeError on a Tx that cannot lend one
            result: Any = await conn.execute(self.statement(dialect), dict(params or {}))
            found = result.all() if result.returns_rows else []
            return Rows(list(found), result.rowcount if not result.returns_rows else -1,
                        getattr(result, "lastrowid", None))
        return _rows(plan, *await tx.execute(plan.sql, _args(plan, params), returns_rows=plan.row is not None))


async def run_all(target: Executor, statements: list[tuple[Fast, Mapping[str, Any] | None]], *,
                  last: bool = False) -> list[Rows]:
    """Several `Fast` statements in order; on a `Tx`, in one trip to the database (`Tx.execute_all`, where
    `last` is explained: the unit's last writes, committed in the same trip when it can be)."""
    if isinstance(target, Tx) and not target.lends_session:
        plans = [fast.plan(target.dialect) for fast, _ in statements]
        if all(plan is not None for plan in plans):
            ready = cast(list[_Compiled], plans)
            outcomes = await target.execute_all([_statement(plan, params)
                                                 for plan, (_, params) in zip(ready, statements, strict=True)],
                                                last=last)
            return [_rows(plan, *outcome) for plan, outcome in zip(ready, outcomes, strict=True)]
    return [await fast.run(target, params) for fast, params in statements]


async def run_then(tx: Tx, statements: list[tuple[Fast, Mapping[str, Any] | None]],
                   then: list[tuple[Fast, Mapping[str, Any] | None]]) -> list[Rows]:
    """`statements`, their COMMIT and `then` in one trip on a MariaDB `Tx` (`Tx.commit_then`): the rows of
    `statements`; those of `then` are kept for their own `run` in the new transaction (`Tx.prefetched`),
    unless one of them failed (`Tx.has_prefetched` is then False)."""
    plans = [fast.plan(tx.dialect) for fast, _ in statements]
    after = [fast.plan(tx.dialect) for fast, _ in then]
    if any(plan is None for plan in (*plans, *after)):
        raise TypeError("run_then takes statements with a fast plan only")
    done, read = await tx.commit_then(
        [_statement(plan, params) for plan, (_, params) in zip(cast(list[_Compiled], plans), statements,
                                                                       strict=True)],
        [_statement(plan, params) for plan, (_, params) in zip(cast(list[_Compiled], after), then,
                                                                       strict=True)])
    if read is not None:
        for plan, (fast, params), outcome in zip(cast(list[_Compiled], after), then, read, strict=True):
            tx.prefetched(fast, params, _rows(plan, *outcome))
    return [_rows(plan, *outcome) for plan, outcome in zip(cast(list[_Compiled], plans), done, strict=True)]


def _rows(plan: _Compiled, raw: list[Any], rowcount: int, lastrowid: int | None) -> Rows:
    """The driver's result as `Rows`: values through the types' result processors, named-tuple rows."""
    rows: list[Any] = []
    if plan.row is not None:
        processors = plan.results
        if any(processors):
            raw = [tuple(p(v) if p is not None else v for p, v in zip(processors, r, strict=True)) for r in raw]
        rows = [plan.row._make(r) for r in raw]
    return Rows(rows, rowcount, lastrowid)


def _statement(plan: _Compiled, params: Mapping[str, Any] | None) -> tuple[str, list[Any], bool]:
    return plan.sql, _args(plan, params), plan.row is not None


def _args(plan: _Compiled, params: Mapping[str, Any] | None) -> list[Any]:
    """The driver's positional arguments, through the types' bind processors."""
    given = params or {}
    args = []
    for name in plan.names:
        value = given[name] if name in given else plan.literals[name]
        process = plan.binds.get(name)
        args.append(process(value) if process is not None else value)  # None too: JSON stores null
    return args
