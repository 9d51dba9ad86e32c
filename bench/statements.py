"""Statements and commits a bench server process sends to its database, and GET /bench/counts to read them.

Two ways out of the process exist and both are counted through public hooks:
- SQLAlchemy's own execution (`Connection.execute`, the ORM): the `before_cursor_execute` and `commit` events,
  listened for on the `Engine` class so every engine of the process is counted;
- `schedule.fastsql`, which hands prebuilt statements straight to the driver a trip at a time: its trips are
  wrapped (`trip_for`, the factory each unit of work asks), each statement of a trip counted, a COMMIT as a
  commit.
An executemany counts as one statement; BEGIN is no statement (SQLite's is sent, MariaDB's is implicit).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Dialect, Engine
from starlette.types import ASGIApp, Receive, Scope, Send

from schedule import fastsql
from schedule.trips import Outcome, Statement, Trip

_CONTROL = ("BEGIN", "SAVEPOINT", "RELEASE")


class StatementCounter:
    def __init__(self) -> None:
        self.statements = 0
        self.commits = 0

    def install(self) -> None:
        event.listen(Engine, "before_cursor_execute", self._executed)
        event.listen(Engine, "commit", self._committed)
        original = fastsql.trip_for

        def counted_trip(dialect: Dialect) -> Trip:
            return _CountedTrip(original(dialect), self)

        fastsql.trip_for = counted_trip  # type: ignore[assignment]  # a bench process's own instrument

    def seen(self, sql: str) -> None:
        word = sql.lstrip()[:9].upper()
        if word.startswith("COMMIT"):
            self.commits += 1
        elif not word.startswith(_CONTROL) and not word.startswith("ROLLBACK"):
            self.statements += 1

    def _executed(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        self.seen(statement)

    def _committed(self, _conn: Any) -> None:
        self.commits += 1

    def as_json(self) -> bytes:
        return json.dumps({"statements": self.statements, "commits": self.commits}).encode()


class _CountedTrip:
    def __init__(self, inner: Trip, counter: StatementCounter) -> None:
        self._inner, self._counter = inner, counter

    async def run(self, driver: Any, statements: Sequence[Statement]) -> list[Outcome]:
        for sql, _args, _rows in statements:
            self._counter.seen(sql)
        return await self._inner.run(driver, statements)

    def in_transaction(self, driver: Any) -> bool:
        return self._inner.in_transaction(driver)


def counts_app(app: ASGIApp, counter: StatementCounter) -> ASGIApp:
    """`app`, with GET /bench/counts answering the counter's figures as JSON."""

    async def counted(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/bench/counts":
            body = counter.as_json()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return counted
