"""The SKIP LOCKED probe (claiming): real on MariaDB, not applicable on SQLite, and it catches a server that
accepts the syntax without honouring it — stood for on MariaDB by statements that take no lock."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from schedule import locking
from schedule.db import create_engine
from schedule.migrate import upgrade


@pytest.fixture
async def migrated(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await upgrade(engine)
    yield engine
    await engine.dispose()


async def test_skip_locked_is_real_on_mariadb_and_not_needed_on_sqlite(migrated: AsyncEngine) -> None:
    assert await locking.skip_locked_problem(migrated) is None
    assert await locking.skip_locked_problem(migrated) is None  # the probe released its lock and its connections


@pytest.mark.mariadb
@pytest.mark.parametrize("database_url", ["mariadb"], indirect=True)
@pytest.mark.parametrize(("constant", "statement", "observed"), [
    # TiDB's way: the SKIP LOCKED read takes no lock and reads the row another connection holds
    ("SKIP_LOCKED_READ", "SELECT version_num FROM alembic_version", "it returned a row another connection holds"),
    # or the holder's FOR UPDATE took no lock (an optimistic transaction locks nothing until commit)
    ("HOLD_ROW", "SELECT version_num FROM alembic_version", "it returned a row another connection holds"),
    # a server that ignores SKIP LOCKED but honours the lock: waits (1 s here), never hangs
    ("SKIP_LOCKED_READ", "SELECT version_num FROM alembic_version FOR UPDATE", "it waited for the locked row"),
    # a server without the syntax at all (MariaDB < 10.6, MySQL 5.7)
    ("SKIP_LOCKED_READ", "SELECT version_num FROM alembic_version FOR UPDATE SKIP LOKED", "a syntax error"),
])
async def test_a_skip_locked_that_is_not_real_is_named(migrated: AsyncEngine, monkeypatch: pytest.MonkeyPatch,
                                                       constant: str, statement: str, observed: str) -> None:
    monkeypatch.setattr(locking, constant, statement)
    problem = await locking.skip_locked_problem(migrated)
    assert problem is not None and problem.startswith("FOR UPDATE SKIP LOCKED is not real on this server (")
    assert observed in problem and "MariaDB" in problem
    assert "several workers would claim and send the same reminder; use MariaDB ≥ 10.6 or MySQL ≥ 8.0" in problem
    monkeypatch.undo()
    assert await locking.skip_locked_problem(migrated) is None  # nothing left locked or changed in the pool


@pytest.mark.mariadb
@pytest.mark.parametrize("database_url", ["mariadb"], indirect=True)
async def test_tidb_is_named_as_the_cause(migrated: AsyncEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locking, "SERVER_VERSION", "SELECT '8.0.11-TiDB-v7.5.1'")
    monkeypatch.setattr(locking, "SKIP_LOCKED_READ", "SELECT version_num FROM alembic_version")
    assert await locking.skip_locked_problem(migrated) == (
        "FOR UPDATE SKIP LOCKED is not real on this server (8.0.11-TiDB-v7.5.1: TiDB accepts the syntax and takes "
        "no lock) — several workers would claim and send the same reminder; use MariaDB ≥ 10.6 or MySQL ≥ 8.0")


@pytest.mark.mariadb
@pytest.mark.parametrize("database_url", ["mariadb"], indirect=True)
async def test_an_empty_alembic_version_is_not_taken_for_a_pass(migrated: AsyncEngine,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locking, "HOLD_ROW", "SELECT version_num FROM alembic_version WHERE 0 FOR UPDATE")
    problem = await locking.skip_locked_problem(migrated)
    assert problem is not None and "run `schedbot migrate`" in problem
