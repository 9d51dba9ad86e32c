"""Pooled connections: rolled back on return only when something may be open, pinged only after sitting
idle (and replaced when the ping fails), and one connection per SQLite engine."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from schedule import db


async def test_a_transaction_left_open_on_the_driver_is_rolled_back_on_return(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE scratch (n INTEGER)"))
    async with engine.connect() as conn:
        await conn.commit()  # SQLAlchemy's transaction is over; the driver's is about to be opened behind it
        driver = (await conn.get_raw_connection()).driver_connection
        if engine.dialect.name == "sqlite":
            await driver.execute("BEGIN IMMEDIATE")
            await driver.execute("INSERT INTO scratch VALUES (1)")
        else:
            async with driver.cursor() as cursor:
                await cursor.execute("INSERT INTO scratch VALUES (1)")  # autocommit is off: a transaction opens
    async with engine.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM scratch"))).scalar_one() == 0


async def test_committed_work_stays_and_the_connection_is_reused(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE scratch (n INTEGER)"))
    for n in range(3):
        async with engine.begin() as conn:
            await conn.execute(text("INSERT INTO scratch VALUES (:n)"), {"n": n})
    async with engine.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM scratch"))).scalar_one() == 3
    assert engine.pool.checkedin() == 1  # one connection served every transaction, none was discarded


async def test_an_idle_connection_the_server_dropped_is_replaced(engine: AsyncEngine,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if engine.dialect.name == "sqlite":
        pytest.skip("no server to drop the connection: SQLite connections are not pinged")
    now = [1000.0]
    monkeypatch.setattr(db, "_monotonic", lambda: now[0])
    async with engine.connect() as conn:
        victim = (await conn.execute(text("SELECT CONNECTION_ID()"))).scalar_one()
    admin = db.create_engine(engine.url.render_as_string(hide_password=False))
    try:
        async with admin.connect() as killer:  # the server drops the pooled connection while it sits idle
            await killer.execute(text(f"KILL {int(victim)}"))
    finally:
        await admin.dispose()
    now[0] += db.IDLE_PING_S + 1  # it sat idle long enough: the next checkout pings it first
    async with engine.connect() as conn:
        assert (await conn.execute(text("SELECT CONNECTION_ID()"))).scalar_one() != victim


async def test_a_session_transaction_commits_or_rolls_back_and_gives_the_connection_back(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE scratch (n INTEGER)"))
    sessions = db.session_factory(engine)
    async with db.session_transaction(sessions) as session:
        await session.execute(text("INSERT INTO scratch VALUES (1)"))
        assert session.in_transaction()  # begun by its first statement
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]  # back with the commit, no close needed

    async def fails() -> None:
        async with db.session_transaction(sessions) as session:
            await session.execute(text("INSERT INTO scratch VALUES (2)"))
            raise RuntimeError("the unit failed after its write")

    with pytest.raises(RuntimeError):
        await fails()
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    async with db.session_transaction(sessions) as session:
        assert (await session.execute(text("SELECT n FROM scratch"))).scalars().all() == [1]
    async with db.session_transaction(sessions):
        pass  # no statement: nothing begun, nothing checked out
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
