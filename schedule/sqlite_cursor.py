"""One thread hop per SQLite statement under SQLAlchemy's aiosqlite dialect.

aiosqlite runs every sqlite3 call on its own thread, and SQLAlchemy's cursor adapter makes one
call per step of a statement: open a cursor, execute, fetch the rows, close the cursor. Each call
is a queue hand-off to that thread, a GIL hand-over and a wake-up of the event loop, and on the
webhook those hops cost more CPU than SQLite's own work. `OneHopCursor` does the four steps in a
single call on aiosqlite's thread and keeps the results (rows, description, rowcount, lastrowid),
so the statement's semantics are unchanged. Installed per connection by `install` (the engine's
connect event), never globally.

Most statements need no hop at all. Every transaction here begins with BEGIN IMMEDIATE, so a connection
inside one holds the database's write lock: in WAL mode nothing it runs then can wait on another
connection (readers never block a writer; COMMIT appends to the log; the automatic checkpoint is
passive), and its statements take microseconds of SQLite's time against ~110 µs of CPU for the hop
(measured). `run` therefore calls sqlite3 right on the event loop's thread while the connection is in a
transaction, and hops only outside one. BEGIN IMMEDIATE itself is the one statement that can wait (for
another connection's or process's write lock): `begin_immediate` tries it on the loop's thread with no
busy wait and, if the lock is taken, waits for it on aiosqlite's thread as before, so the loop never
blocks on a lock.

So a connection's SQLite busy timeout is 0 (nothing on the loop's thread ever waits), and whatever runs on
aiosqlite's thread turns the connection's own timeout (`BUSY_TIMEOUT_MS`, or `set_busy_timeout`) on for
its call and off after it, in the same hop. Turning it off and on around every BEGIN on the loop's thread
instead cost three more statements a transaction: ~70 µs of CPU at a server's idle gaps, twice a message.
"""

from __future__ import annotations

import collections
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.dialects.sqlite.aiosqlite import AsyncAdapt_aiosqlite_connection, AsyncAdapt_aiosqlite_cursor
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_

T = TypeVar("T")
_Outcome = tuple[Any, list[Any], int, int | None]  # description, rows, rowcount, lastrowid
BUSY_TIMEOUT_MS = 30_000  # how long a connection waits for another's write lock (the engine sets it)
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_WAIT = "_schedbot_busy_timeout_ms"  # the connection's own busy timeout, on aiosqlite's connection object


def run_statement(conn: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> _Outcome:
    """Runs on aiosqlite's thread: the whole statement, cursor opened and closed."""
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


def run_statements(conn: sqlite3.Connection, statements: list[tuple[str, Any]]) -> list[_Outcome]:
    """Runs on aiosqlite's thread: several statements in order, in one hop (the first error stops them)."""
    return [run_statement(conn, operation, parameters, False) for operation, parameters in statements]


async def run(driver: Any, fn: Callable[..., T], *args: Any) -> T:
    """`fn(sqlite3 connection, *args)`: on the event loop's thread when the connection holds the write lock
    (in a transaction: see the module docstring), else on aiosqlite's thread with its busy timeout on."""
    conn: sqlite3.Connection = driver._conn
    if conn.in_transaction:
        return fn(conn, *args)
    return await _on_thread(driver, fn, *args)


async def _on_thread(driver: Any, fn: Callable[..., T], *args: Any) -> T:
    outcome: T = await driver._execute(_waiting, driver._conn, getattr(driver, _WAIT, BUSY_TIMEOUT_MS), fn, *args)
    return outcome


def _waiting(conn: sqlite3.Connection, timeout_ms: int, fn: Callable[..., T], *args: Any) -> T:
    """On aiosqlite's thread: `fn` allowed to wait `timeout_ms` for a lock; no wait again afterwards."""
    conn.execute(f"PRAGMA busy_timeout={int(timeout_ms)}")
    try:
        return fn(conn, *args)
    finally:
        conn.execute("PRAGMA busy_timeout=0")


async def begin_immediate(driver: Any) -> None:
    """BEGIN IMMEDIATE: at once on the loop's thread when the write lock is free, else waited for (up to the
    busy timeout) on aiosqlite's thread."""
    try:
        driver._conn.execute("BEGIN IMMEDIATE")  # the busy timeout is 0 here: taken or refused at once
        return
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode & 0xFF not in _BUSY:
            raise
    await _on_thread(driver, run_statement, "BEGIN IMMEDIATE", None, False)


def set_busy_timeout(driver: Any, timeout_ms: int) -> None:
    """How long this connection waits for another's write lock (on aiosqlite's thread; never on the loop's)."""
    setattr(driver, _WAIT, int(timeout_ms))


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """A buffered cursor whose execute is one call on aiosqlite's thread (see the module docstring)."""

    __slots__ = ("_arraysize", "_description", "_lastrowid", "_rowcount")

    def __init__(self, adapt_connection: Any) -> None:  # no aiosqlite cursor: nothing to open or close
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._cursor = None  # type: ignore[assignment]
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: int | None = None
        self._arraysize = 1

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> int:
        return self._lastrowid  # type: ignore[return-value]

    @property
    def arraysize(self) -> int:
        return self._arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._arraysize = value

    async def _async_soft_close(self) -> None:
        return None  # the rows are already buffered and the sqlite3 cursor closed

    def close(self) -> None:
        self._rows.clear()

    def execute(self, operation: Any, parameters: Any = None) -> Any:
        try:
            return await_(self._run(operation, parameters, many=False))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    def executemany(self, operation: Any, seq_of_parameters: Any) -> Any:
        try:
            return await_(self._run(operation, seq_of_parameters, many=True))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    async def _run(self, operation: Any, parameters: Any, *, many: bool) -> None:
        driver = self._connection
        async with self._adapt_connection._execute_mutex:
            outcome: _Outcome = await run(driver, run_statement, operation, parameters, many)
        self._description, rows, self._rowcount, self._lastrowid = outcome
        self._rows = collections.deque(rows)

    def nextset(self) -> None:
        return None  # sqlite3 has a single result set per statement


class _Connection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = OneHopCursor

    def commit(self) -> None:
        conn = self._connection._conn
        if not conn.in_transaction:
            return  # nothing to commit (what sqlite3's own commit does then too)
        try:
            conn.commit()  # holds the write lock: no wait, no hop (module docstring)
        except Exception as error:
            self._handle_exception(error)

    def rollback(self) -> None:
        conn = self._connection._conn
        if not conn.in_transaction:
            return
        try:
            conn.rollback()
        except Exception as error:
            self._handle_exception(error)


def install(dbapi_connection: Any) -> None:
    """Give one pooled aiosqlite connection the one-hop cursor and no busy wait outside aiosqlite's thread
    (from the engine's connect event, once its PRAGMAs have run)."""
    if type(dbapi_connection) is AsyncAdapt_aiosqlite_connection:
        dbapi_connection.__class__ = _Connection
        driver = dbapi_connection._connection
        set_busy_timeout(driver, BUSY_TIMEOUT_MS)
        driver._conn.execute("PRAGMA busy_timeout=0")  # nothing else uses the new connection yet
