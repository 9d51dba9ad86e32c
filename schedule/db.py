"""Engine and session factory: SQLite file by default, MariaDB/MySQL through aiomysql."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./schedbot.db"
T = TypeVar("T")


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str = DEFAULT_DATABASE_URL, **kwargs: Any) -> AsyncEngine:
    """Build the async engine with the per-backend settings the store relies on."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    kwargs.setdefault("json_serializer", _json_text)
    if backend == "sqlite":
        engine = create_async_engine(url, connect_args={"timeout": 30}, **kwargs)
        _configure_sqlite(engine)
        return engine
    if backend in ("mysql", "mariadb"):
        if "charset" not in parsed.query:
            parsed = parsed.update_query_dict({"charset": "utf8mb4"})
        kwargs.setdefault("pool_recycle", 3600)
        kwargs.setdefault("pool_pre_ping", True)
        kwargs.setdefault("isolation_level", "READ COMMITTED")
        return create_async_engine(parsed, **kwargs)
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
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Every transaction takes the write lock at BEGIN: no SQLITE_BUSY upgrade
        # deadlocks between concurrent sessions, and claims are serialised.
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


# MySQL/MariaDB: 1213 deadlock (InnoDB rolled the transaction back), 1205 lock wait timeout.
_RETRYABLE_MYSQL = {1213, 1205}


def is_retryable(exc: BaseException) -> bool:
    """A transaction the database aborted for concurrency reasons: running it again is safe."""
    orig = getattr(exc, "orig", None)
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()) or ())
    return isinstance(exc, OperationalError) and bool(args) and args[0] in _RETRYABLE_MYSQL


async def in_transaction(sessions: async_sessionmaker[AsyncSession], work: Callable[[AsyncSession], Awaitable[T]],
                         *, attempts: int = 5) -> T:
    """Run `work` in one transaction, running it again (with a short jittered pause) when InnoDB
    aborts it as a deadlock victim; concurrent workers claiming rows do collide now and then."""
    for attempt in range(1, attempts + 1):
        try:
            async with sessions.begin() as session:
                return await work(session)
        except OperationalError as exc:
            if not is_retryable(exc) or attempt == attempts:
                raise
            await asyncio.sleep(random.uniform(0.005, 0.02) * attempt)
    raise AssertionError("unreachable")  # pragma: no cover
