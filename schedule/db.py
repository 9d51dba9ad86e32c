"""Engine and session factory: SQLite file by default, MariaDB/MySQL through aiomysql."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import CursorResult, Result, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from schedule import fastsql
from schedule.clock import SystemClock
from schedule.retry import CONTENTION_ATTEMPTS, retry_contention

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./schedbot.db"
SQLITE_SWITCH_INTERVAL_S = 0.0005  # the process's GIL switch interval with an aiosqlite engine (below)
BUSY_TIMEOUT_MS = 30_000  # how long a SQLite connection waits for another's write lock (on aiosqlite's thread)
T = TypeVar("T")


def private_file(path: str) -> None:
    """The SQLite file readable by its owner only (0600), created so if missing and tightened if not: it holds
    `app_secrets.secret_key`, the cached access token and every schedule. SQLite gives its -wal, -shm and
    -journal files the database file's mode. A path that cannot be touched is left for the connection to
    report."""
    with contextlib.suppress(OSError):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
                os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & 0o700)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str = DEFAULT_DATABASE_URL, **kwargs: Any) -> AsyncEngine:
    """Build the async engine with the per-backend settings the store relies on."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    kwargs.setdefault("json_serializer", _json_text)
    if backend == "sqlite":
        kwargs.setdefault("pool_reset_on_return", None)  # `_reset_when_needed` does it
        if parsed.database and parsed.database != ":memory:" and "memory" not in str(parsed.query.get("mode", "")):
            # Every transaction takes the write lock (BEGIN IMMEDIATE below), so a second connection in
            # the same process can only wait for it, and SQLite's busy handler waits by sleeping with
            # back-off (1, 2, 5 … 100 ms): under load most of a message's latency. One connection per
            # engine makes those waits a FIFO queue on the event loop instead; other processes still
            # meet the busy timeout.
            kwargs.setdefault("pool_size", 1)
            kwargs.setdefault("max_overflow", 0)
            if not parsed.database.startswith("file:"):
                private_file(parsed.database)
        # Every sqlite3 call runs on aiosqlite's thread (a wait for another process's write lock waits there),
        # and a call's hand-over needs the GIL: while the event loop computes, the thread waits for the
        # interpreter's switch interval (5 ms by default) before it may run. A shorter interval makes each
        # statement's hop that much shorter (webhook bench, SQLite at 100 req/s: p99 22 → 13 ms).
        sys.setswitchinterval(min(sys.getswitchinterval(), SQLITE_SWITCH_INTERVAL_S))
        engine = create_async_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000}, **kwargs)
        _configure_sqlite(engine)
        _reset_when_needed(engine)
        return engine
    if backend in ("mysql", "mariadb"):
        if "charset" not in parsed.query:
            parsed = parsed.update_query_dict({"charset": "utf8mb4"})
        kwargs.setdefault("pool_recycle", 3600)
        # The webhook holds a connection only for a transaction's few round trips, but at a few hundred
        # messages a second dozens are in flight; beyond the pool's size each one is a fresh connection
        # (handshake, authentication, session setup), opened and closed again: 2.5 % of the webhook's CPU
        # at 250 req/s with the default 5. Kept connections cost the server little; 10 + 20 stays far
        # below MariaDB's default 151 with a web process and a few workers.
        kwargs.setdefault("pool_size", 10)
        kwargs.setdefault("max_overflow", 20)
        kwargs.setdefault("isolation_level", "READ COMMITTED")
        kwargs.setdefault("pool_reset_on_return", None)
        engine = create_async_engine(parsed, **kwargs)
        _reset_when_needed(engine)
        if not kwargs.get("pool_pre_ping"):
            _ping_when_idle(engine)
        return engine
    raise ValueError(f"unsupported database backend {backend!r}: use sqlite+aiosqlite:// or mysql+aiomysql://")


def _json_text(value: Any) -> str:
    """JSON columns as compact UTF-8 text: Chinese stays 3 bytes a character instead of a 6-byte \\uXXXX."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # pysqlite's own transaction handling would defer BEGIN; take control so that
        # BEGIN IMMEDIATE (writer lock up front) is possible where claiming needs it.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Every transaction takes the write lock at BEGIN: no SQLITE_BUSY upgrade
        # deadlocks between concurrent sessions, and claims are serialised. Sent straight to the
        # driver as SQLAlchemy's pysqlite notes show. A session lent by a `fastsql.Tx` joins the
        # transaction that Tx has begun already.
        if not conn.connection.driver_connection.in_transaction:
            conn.exec_driver_sql("BEGIN IMMEDIATE")


IDLE_PING_S = 10.0  # a pooled MariaDB connection idle this long is pinged before use
_ERRORED = "schedbot_errored"
_CHECKED_IN = "schedbot_checked_in"
_monotonic = SystemClock().monotonic  # pool housekeeping, not calendar time


def _reset_when_needed(engine: AsyncEngine) -> None:
    """Roll a returned connection back only when something may still be open on it.

    SQLAlchemy's default rolls back on every return to the pool, even right after the COMMIT that
    closed the unit of work: one more round trip (MariaDB) or thread hop (aiosqlite) per transaction,
    on a webhook that runs three of them per message. A connection is returned with no SQLAlchemy
    transaction only after that transaction ended by commit or rollback (a statement after it would
    have begun another, and a transaction still open at close is rolled back by SQLAlchemy, which then
    says so in `transaction_was_reset`), so a rollback is needed only when that end may have failed:
    an error was raised on the connection, or the driver itself reports a transaction in progress.
    """

    @event.listens_for(engine.sync_engine, "handle_error")
    def _on_error(context: Any) -> None:
        if context.connection is not None and not context.connection.closed:
            context.connection.info[_ERRORED] = True

    @event.listens_for(engine.sync_engine, "reset")
    def _on_reset(dbapi_connection: Any, record: Any, state: Any) -> None:
        if state.terminate_only or not state.asyncio_safe or state.transaction_was_reset:
            return  # the pool only closes it, or SQLAlchemy has just rolled back
        info = record.info if record is not None else {}
        if info.pop(_ERRORED, False) or _driver_in_transaction(dbapi_connection):
            dbapi_connection.rollback()


def _driver_in_transaction(dbapi_connection: Any) -> bool:
    driver: Any = getattr(dbapi_connection, "driver_connection", None)
    if hasattr(driver, "get_transaction_status"):  # aiomysql: the server's IN_TRANS flag of the last OK
        return bool(driver.get_transaction_status())
    in_transaction = getattr(driver, "in_transaction", None)  # aiosqlite: sqlite3's own flag
    return True if in_transaction is None else bool(in_transaction)


def _ping_when_idle(engine: AsyncEngine) -> None:
    """`pool_pre_ping`, but only for a connection that sat idle: a ping on every checkout is one more
    round trip per transaction. A server that went away meanwhile fails the first statement instead,
    which invalidates the whole pool (SQLAlchemy's disconnect handling) and the caller retries."""

    @event.listens_for(engine.sync_engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info[_CHECKED_IN] = _monotonic()

    @event.listens_for(engine.sync_engine, "checkout")
    def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get(_CHECKED_IN)
        if since is None or _monotonic() - since < IDLE_PING_S:
            return
        try:
            dbapi_connection.ping(False)
        except Exception as exc:
            raise DisconnectionError("idle connection failed its ping") from exc  # the pool reconnects


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


@asynccontextmanager
async def session_transaction(sessions: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """`sessions.begin()`, leaner: the transaction begins with the first statement, commits at the end of
    the block, and on failure the session is closed, which rolls back and gives the connection back.

    A committed session is left to the garbage collector instead of closed: its connection went back
    to the pool with the commit, and `begin()`'s explicit start and final close cost two more trips
    through SQLAlchemy's greenlet bridge (measured: 1.2 ms of CPU for a one-statement unit here
    against 0.9 ms this way).
    """
    session = sessions()
    try:
        yield session
        await session.commit()
    except BaseException:
        await session.close()
        raise


def unit_of_work(sessions: async_sessionmaker[AsyncSession]) -> AbstractAsyncContextManager[fastsql.Executor]:
    """A new transaction for a unit of work: a bare driver transaction (`fastsql.transaction`) on the factory's
    engine, or a session where the factory is bound to something else (a test's connection). Committed when
    the block ends, rolled back if it raises."""
    bind = sessions.kw.get("bind")
    if isinstance(bind, AsyncEngine):
        return fastsql.transaction(bind)
    return session_transaction(sessions)


def rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE or DELETE matched. `execute` is typed as returning a `Result`; for those statements
    it is a `CursorResult`, which carries the count (any other result matched nothing)."""
    return int(result.rowcount) if isinstance(result, CursorResult) else 0


async def in_transaction(sessions: async_sessionmaker[AsyncSession], work: Callable[[AsyncSession], Awaitable[T]],
                         *, attempts: int = CONTENTION_ATTEMPTS) -> T:
    """Run `work` in one transaction, running it again (with a short jittered pause) when InnoDB
    aborts it as a deadlock victim; concurrent workers claiming rows do collide now and then. A database
    that fails it otherwise, or every time, raises DatabaseUnavailable (`retry_contention`)."""
    return await _retrying(partial(session_transaction, sessions), work, attempts)


async def in_fast_transaction(engine: AsyncEngine, work: Callable[[fastsql.Tx], Awaitable[T]], *,
                              attempts: int = CONTENTION_ATTEMPTS) -> T:
    """`in_transaction` for a unit made only of `Fast` statements: on a pooled driver connection, no session."""
    return await _retrying(partial(fastsql.transaction, engine), work, attempts)


async def _retrying(begin: Callable[[], AbstractAsyncContextManager[Any]], work: Callable[[Any], Awaitable[T]],
                    attempts: int) -> T:
    async def once() -> T:
        async with begin() as target:
            return await work(target)

    return await retry_contention(once, attempts=attempts)
