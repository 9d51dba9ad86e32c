"""`Handoff`: a transaction begun by the webhook's claim trip (its statements, their COMMIT, then a locking read in
a new transaction) and carried on by the next unit of work it is passed to, or ended when none takes it. MariaDB only: SQLite's
claims are committed in groups and never hand a transaction on."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import bindparam, insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from test_fastsql import user

from schedule import db
from schedule.errors import DatabaseUnavailable
from schedule.fastsql import Fast, Tx, run_then
from schedule.handoff import Handoff
from schedule.model import InboundMessageRow, UserRow

_I = InboundMessageRow
# A claim-like row: no foreign key to the user (an outbox row's would wait for the user's row lock).
_NOTE = Fast(insert(_I).values(dedupe_key=bindparam("p_key"), user_id=bindparam("p_uid"), received_at=0,
                               status="processing"))
_LOCK_USER = Fast(select(UserRow.id, UserRow.timezone).where(UserRow.id == bindparam("p_uid")).with_for_update())


@pytest.fixture
def mariadb(engine: AsyncEngine) -> AsyncEngine:
    if engine.dialect.name == "sqlite":
        pytest.skip("MariaDB only: SQLite's claims commit in groups")
    return engine


async def _keys(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        return list((await conn.execute(select(_I.dedupe_key).order_by(_I.id))).scalars())


async def _locked_elsewhere(database_url: str, uid: int) -> bool:
    """Whether another connection has to wait for the user's row lock (it gives up after one second)."""
    other = db.create_engine(database_url)
    try:
        async with other.begin() as conn:
            await conn.execute(text("SET SESSION innodb_lock_wait_timeout = 1"))
            try:
                await conn.execute(select(UserRow.id).where(UserRow.id == uid).with_for_update())
            except Exception as exc:  # 1205: lock wait timeout exceeded
                if "1205" not in str(exc):
                    raise
                return True
            return False
    finally:
        await other.dispose()


async def test_the_claim_commits_and_the_read_after_it_holds_its_lock_in_one_trip(
        mariadb: AsyncEngine, database_url: str, sessions: async_sessionmaker[AsyncSession], trips: list[str]) -> None:
    uid = await user(sessions)
    handoff = Handoff(mariadb)
    tx = await handoff.begin()
    (written,) = await run_then(tx, [(_NOTE, {"p_uid": uid, "p_key": "claimed"})], [(_LOCK_USER, {"p_uid": uid})])
    assert written.rowcount == 1 and len(trips) == 1
    assert await _keys(mariadb) == ["claimed"]  # committed: another connection sees it already
    assert await _locked_elsewhere(database_url, uid)  # … while the new transaction holds the user's row
    assert handoff.read_ahead
    async with handoff.adopt() as unit:
        rows = (await _LOCK_USER.run(unit, {"p_uid": uid})).all()  # the read made in the claim's trip
        assert [(r.id, r.timezone) for r in rows] == [(uid, "Asia/Shanghai")] and len(trips) == 1
        await _NOTE.run(unit, {"p_uid": uid, "p_key": "in the unit"})
    assert handoff.taken  # adopted once
    assert await _keys(mariadb) == ["claimed", "in the unit"]
    assert not await _locked_elsewhere(database_url, uid)
    await handoff.release()  # nothing left to end: a no-op


async def test_a_read_with_other_parameters_is_not_taken_from_the_prefetch(
        mariadb: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    handoff = Handoff(mariadb)
    tx = await handoff.begin()
    await run_then(tx, [(_NOTE, {"p_uid": uid, "p_key": "a"})], [(_LOCK_USER, {"p_uid": uid + 1000})])
    async with handoff.adopt() as unit:
        assert (await _LOCK_USER.run(unit, {"p_uid": uid})).all()[0].id == uid  # read for real
        assert (await _LOCK_USER.run(unit, {"p_uid": uid + 1000})).all() == []


async def test_a_unit_that_fails_rolls_its_part_back_and_keeps_the_claim(
        mariadb: AsyncEngine, database_url: str, sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    handoff = Handoff(mariadb)
    await run_then(await handoff.begin(), [(_NOTE, {"p_uid": uid, "p_key": "claimed"})],
                   [(_LOCK_USER, {"p_uid": uid})])
    async def failing_unit() -> None:
        async with handoff.adopt() as unit:
            await _NOTE.run(unit, {"p_uid": uid, "p_key": "lost"})
            raise RuntimeError("step failed")

    with pytest.raises(RuntimeError, match="step failed"):
        await failing_unit()
    assert await _keys(mariadb) == ["claimed"]
    assert not await _locked_elsewhere(database_url, uid)


async def test_a_handoff_nobody_takes_is_released_and_gives_its_connection_back(
        mariadb: AsyncEngine, database_url: str, sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    checked_out = mariadb.pool.checkedout()  # type: ignore[attr-defined]
    handoffs = [Handoff(mariadb) for _ in range(3)]
    for handoff in handoffs:
        await run_then(await handoff.begin(), [(_NOTE, {"p_uid": uid, "p_key": str(id(handoff))})],
                       [(_LOCK_USER, {"p_uid": uid})])
        await handoff.release()
        await handoff.release()  # ends once
    assert not await _locked_elsewhere(database_url, uid)
    assert mariadb.pool.checkedout() == checked_out  # type: ignore[attr-defined]
    assert len(await _keys(mariadb)) == 3


async def test_a_second_message_waits_for_the_handed_transaction(
        mariadb: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    """The read after the COMMIT locks the row like the unit's own first read did: a second claim trip for the
    same user waits until the first unit has ended."""
    uid = await user(sessions)
    first, second = Handoff(mariadb), Handoff(mariadb)
    await run_then(await first.begin(), [(_NOTE, {"p_uid": uid, "p_key": "1"})], [(_LOCK_USER, {"p_uid": uid})])
    waiting = asyncio.ensure_future(run_then(await second.begin(), [(_NOTE, {"p_uid": uid, "p_key": "2"})],
                                             [(_LOCK_USER, {"p_uid": uid})]))
    try:
        await asyncio.sleep(0.3)
        assert not waiting.done()
        assert await _keys(mariadb) == ["1", "2"]  # its claim committed; only its read waits
    finally:
        async with first.adopt():
            pass
        await asyncio.wait_for(waiting, 5)
        await second.release()


async def test_a_claim_that_fails_at_the_database_ends_the_transaction_and_says_so_in_schedules_terms(
        mariadb: AsyncEngine, database_url: str, sessions: async_sessionmaker[AsyncSession]) -> None:
    """`begin_with`: a driver error in the first statements (here a lock wait timeout, as a deadlock victim
    gets) is `DatabaseUnavailable` with `contention` set (what bot/ checks to claim again the usual way); the
    transaction is ended and its connection given back."""
    uid = await user(sessions)
    checked_out = mariadb.pool.checkedout()  # type: ignore[attr-defined]
    handoff = Handoff(mariadb)

    async def waiting_claim(tx: Tx) -> None:
        await tx.execute("SET SESSION innodb_lock_wait_timeout = 1")
        await tx.execute("SELECT id FROM users WHERE id = %s FOR UPDATE", (uid,))

    other = db.create_engine(database_url)
    try:
        async with other.begin() as conn:  # holds the user's row while the claim's read waits for it
            await conn.execute(select(UserRow.id).where(UserRow.id == uid).with_for_update())
            with pytest.raises(DatabaseUnavailable) as raised:
                await handoff.begin_with(waiting_claim)
    finally:
        await other.dispose()
    assert raised.value.contention and raised.value.code == 1205 and raised.value.__cause__ is not None
    assert handoff.taken and not handoff.read_ahead
    await handoff.release()  # already ended: a no-op
    assert not await _locked_elsewhere(database_url, uid)
    assert mariadb.pool.checkedout() == checked_out  # type: ignore[attr-defined]
