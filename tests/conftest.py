"""Shared fixtures: a fresh database per test on every backend, and a frozen clock.

Backends: SQLite (a temp file) always; MariaDB when reachable at SCHEDBOT_TEST_MARIADB_URL
(default mysql+aiomysql://root@127.0.0.1:3306). With CI=true an unreachable MariaDB fails
the run instead of skipping.

Secrets: every log record of the session and the failure text each test database keeps are searched for a
token the run issued (tests/secret_scan.py); a test during which one leaked fails.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from schedule.db import create_engine, session_factory
from schedule.model import Base
from schedule.testing import FrozenClock
from tests.secret_scan import SecretWatch, stored_leaks

MARIADB_SERVER_URL = os.environ.get("SCHEDBOT_TEST_MARIADB_URL", "mysql+aiomysql://root@127.0.0.1:3306")
BACKENDS = ["sqlite", pytest.param("mariadb", marks=pytest.mark.mariadb)]
_mariadb_state: dict[str, bool] = {}
_secret_watch = SecretWatch()
_reported_leaks = 0


def pytest_sessionstart(session: pytest.Session) -> None:
    _secret_watch.install()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Tokens logged outside any test (a session fixture, the last teardowns) fail the session."""
    late = _secret_watch.found[_reported_leaks:]
    if late:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("secret(s) in the session's log lines:\n  " + "\n  ".join(late), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def no_secret_in_logs() -> Iterator[None]:
    """Fails the test during which (setup and teardown included) a log line held a token."""
    global _reported_leaks
    _secret_watch.install()
    start = len(_secret_watch.found)
    yield
    found = _secret_watch.found[start:]
    _reported_leaks = len(_secret_watch.found)
    if found:
        pytest.fail("secret(s) in log lines:\n  " + "\n  ".join(found), pytrace=False)


async def _mariadb_reachable() -> bool:
    if "ok" not in _mariadb_state:
        engine = create_engine(MARIADB_SERVER_URL + "/")
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            _mariadb_state["ok"] = True
        except Exception:
            _mariadb_state["ok"] = False
        finally:
            await engine.dispose()
    return _mariadb_state["ok"]


@pytest.fixture(params=BACKENDS)
async def database_url(request: pytest.FixtureRequest, tmp_path: object) -> AsyncIterator[str]:
    """The URL of a fresh, empty database on the requested backend."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path}/test.db"
        return
    if not await _mariadb_reachable():
        if os.environ.get("CI") == "true":
            pytest.fail(f"MariaDB not reachable at {MARIADB_SERVER_URL} (required in CI)")
        pytest.skip("MariaDB not reachable")
    name = f"schedbot_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(MARIADB_SERVER_URL + "/")
    async with admin.begin() as conn:
        await conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"))
    try:
        yield f"{MARIADB_SERVER_URL}/{name}"
    finally:
        async with admin.begin() as conn:
            await conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
        await admin.dispose()


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on a fresh database holding the current schema."""
    eng = create_engine(database_url)
    async with eng.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    try:
        yield eng
        stored = await stored_leaks(eng)
        if stored:
            pytest.fail(f"secret(s) in the database's failure text: {stored}", pytrace=False)
    finally:
        await eng.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return session_factory(engine)


@pytest.fixture
def clock() -> FrozenClock:
    # 2026-06-18 10:00 in Asia/Shanghai, a Thursday — the dev set's reference time.
    return FrozenClock(datetime(2026, 6, 18, 2, 0, tzinfo=UTC))


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Round trips that bare transactions (`fastsql.Tx`: claims, chat units, finishes) make to the database,
    as the start of what each sent; a statement that carries deferred writes along is one trip."""
    from schedule.fastsql import Tx

    sent: list[str] = []
    send = Tx._send  # every statement of a Tx reaches the database through it, once per trip

    async def counted_send(tx: Tx, statements: Any) -> Any:
        sent.append("; ".join(sql for sql, _args, _rows in statements)[:60])
        return await send(tx, statements)

    monkeypatch.setattr(Tx, "_send", counted_send)
    return sent
