"""One thread hop per SQLite statement under SQLAlchemy's aiosqlite dialect.

aiosqlite runs every sqlite3 call on its own thread, and SQLAlchemy's cursor adapter makes one
call per step of a statement: open a cursor, execute, fetch the rows, close the cursor. Each call
is a queue hand-off to that thread, a GIL hand-over and a wake-up of the event loop, and on the
webhook those hops cost more CPU than SQLite's own work. `OneHopCursor` does the four steps in a
single call on aiosqlite's thread and keeps the results (rows, description, rowcount, lastrowid),
so the statement's semantics are unchanged. Installed per connection by `install` (the engine's
connect event), never globally.
"""

from __future__ import annotations

import collections
import sqlite3
from typing import Any

from sqlalchemy.dialects.sqlite.aiosqlite import AsyncAdapt_aiosqlite_connection, AsyncAdapt_aiosqlite_cursor
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_

_Outcome = tuple[Any, list[Any], int, int | None]  # description, rows, rowcount, lastrowid


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
            outcome: _Outcome = await driver._execute(run_statement, driver._conn, operation, parameters, many)
        self._description, rows, self._rowcount, self._lastrowid = outcome
        self._rows = collections.deque(rows)

    def nextset(self) -> None:
        return None  # sqlite3 has a single result set per statement


class _Connection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = OneHopCursor


def install(dbapi_connection: Any) -> None:
    """Give one pooled aiosqlite connection the one-hop cursor (from the engine's connect event)."""
    if type(dbapi_connection) is AsyncAdapt_aiosqlite_connection:
        dbapi_connection.__class__ = _Connection
