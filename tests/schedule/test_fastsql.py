"""`Fast`: a prebuilt statement straight to the driver gives what SQLAlchemy would (values through the
types' processors both ways, rowcount, new ids, SQLAlchemy's exception classes), falls back to
SQLAlchemy for shapes it does not handle, and every hot statement of the webhook takes the fast path.
`transaction` (no session) commits, rolls back, locks and recovers from a lost connection as a session would."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import bindparam, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

import bot.conversation.dialog
import schedule.digest
import schedule.inbound
import schedule.inbox
import schedule.items
import schedule.listing
import schedule.users
import schedule.window
from schedule import db
from schedule.fastsql import Fast, Tx, on_commit, run_all, transaction
from schedule.model import OutboundMessageRow, UserRow

_O = OutboundMessageRow
_INSERT = Fast(insert(_O).values(user_id=bindparam("p_uid"), idempotency_key=bindparam("p_key"), kind="notice",
                                 channel="inapp", status="pending", payload=bindparam("p_payload", type_=_O.payload.type),
                                 attempts=0, next_attempt_at=0, created_at=bindparam("p_at"), updated_at=bindparam("p_at")))
_READ = Fast(select(_O.id, _O.kind, _O.payload, _O.created_at).where(_O.user_id == bindparam("p_uid")).order_by(_O.id))
_SUBSCRIBED = Fast(select(UserRow.subscribed).where(UserRow.id == bindparam("p_uid")))
_MARK = Fast(update(_O).where(_O.user_id == bindparam("p_uid")).values(status="sent"))
_IN_LIST = Fast(select(_O.id).where(_O.id.in_(bindparam("p_ids", expanding=True))).order_by(_O.id))


async def user(sessions: async_sessionmaker[AsyncSession]) -> int:
    async with sessions.begin() as session:
        row = UserRow(wechat_openid="o-fast", timezone="Asia/Shanghai", subscribed=True, window_sent_count=0,
                      created_at=0)
        session.add(row)
        await session.flush()
        return row.id


async def test_values_go_through_the_types_both_ways(sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    payload = {"text": "明天 9:00 带材料 \"引号\" 100%", "expired": True}
    async with sessions.begin() as session:
        first = await _INSERT.run(session, {"p_uid": uid, "p_key": "k1", "p_payload": payload, "p_at": 5})
        second = await _INSERT.run(session, {"p_uid": uid, "p_key": "k2", "p_payload": None, "p_at": 6})
        assert first.rowcount == 1 and first.lastrowid and second.lastrowid == first.lastrowid + 1
    async with sessions.begin() as session:
        rows = (await _READ.run(session, {"p_uid": uid})).all()
        assert [(r.id, r.kind, r.payload, r.created_at) for r in rows] == [
            (first.lastrowid, "notice", payload, 5), (second.lastrowid, "notice", None, 6)]
        assert rows[0]._asdict()["payload"] == payload
        assert (await _SUBSCRIBED.run(session, {"p_uid": uid})).first() == (True,)  # Boolean, not 1
        assert (await _MARK.run(session, {"p_uid": uid})).rowcount == 2
        stored = await session.scalars(select(OutboundMessageRow.status).where(OutboundMessageRow.user_id == uid))
        assert set(stored) == {"sent"}  # same transaction, same connection


async def test_driver_errors_are_sqlalchemy_errors_and_roll_back(sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)

    async def twice() -> None:
        async with sessions.begin() as session:
            await _INSERT.run(session, {"p_uid": uid, "p_key": "same", "p_payload": None, "p_at": 1})
            await _INSERT.run(session, {"p_uid": uid, "p_key": "same", "p_payload": None, "p_at": 2})

    with pytest.raises(IntegrityError):
        await twice()
    async with sessions.begin() as session:
        assert (await _READ.run(session, {"p_uid": uid})).all() == []  # the whole transaction rolled back


async def test_shapes_it_does_not_handle_go_through_sqlalchemy(engine: AsyncEngine,
                                                               sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    async with sessions.begin() as session:
        ids = [(await _INSERT.run(session, {"p_uid": uid, "p_key": f"k{i}", "p_payload": None, "p_at": i})).lastrowid
               for i in range(3)]
        assert [r.id for r in (await _IN_LIST.run(session, {"p_ids": ids[1:]})).all()] == ids[1:]
    assert _IN_LIST.plan(engine.dialect) is None  # an expanding IN list: SQLAlchemy ran it


def test_every_hot_statement_takes_the_fast_path(engine: AsyncEngine) -> None:
    modules = (schedule.inbound, schedule.users, schedule.window, schedule.items, schedule.listing, schedule.digest,
               schedule.inbox, bot.conversation.dialog)
    hot = [value for module in modules for value in vars(module).values() if isinstance(value, Fast)]
    assert len(hot) >= 15
    slow = [str(f.statement(engine.dialect)) for f in hot if f.plan(engine.dialect) is None]
    assert slow == []


_CONNECTION_ID = Fast(select(func.connection_id().label("id")))


async def test_each_transaction_of_a_session_uses_its_own_connection(engine: AsyncEngine,
                                                                     sessions: async_sessionmaker[AsyncSession]) -> None:
    """The connection is looked up once per transaction, not once per session: after a commit the
    session may be given another pooled connection, and the old one may be in another's hands."""
    uid = await user(sessions)
    async with sessions() as session:
        async with session.begin():
            await _INSERT.run(session, {"p_uid": uid, "p_key": "t1", "p_payload": None, "p_at": 1})
            first = (await _CONNECTION_ID.run(session)).first() if engine.dialect.name != "sqlite" else None
        if engine.dialect.name == "sqlite":  # one pooled connection: nothing else can hold it meanwhile
            async with session.begin():
                await _INSERT.run(session, {"p_uid": uid, "p_key": "t2", "p_payload": None, "p_at": 2})
        else:
            async with sessions.begin() as other:  # takes the connection the first transaction gave back
                assert (await _CONNECTION_ID.run(other)).first() == first
                async with session.begin():
                    await _INSERT.run(session, {"p_uid": uid, "p_key": "t2", "p_payload": None, "p_at": 2})
                    assert (await _CONNECTION_ID.run(session)).first() != first
    async with sessions.begin() as session:
        assert [r.created_at for r in (await _READ.run(session, {"p_uid": uid})).all()] == [1, 2]


async def _keys(sessions: async_sessionmaker[AsyncSession], uid: int) -> list[int]:
    async with sessions.begin() as session:
        return [r.created_at for r in (await _READ.run(session, {"p_uid": uid})).all()]


async def test_a_bare_transaction_commits_or_rolls_back_as_a_whole(engine: AsyncEngine,
                                                                  sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    async with transaction(engine) as tx:
        await _INSERT.run(tx, {"p_uid": uid, "p_key": "kept", "p_payload": {"a": 1}, "p_at": 1})
        assert [r.payload for r in (await _READ.run(tx, {"p_uid": uid})).all()] == [{"a": 1}]

    async def fails_after_its_write() -> None:
        async with transaction(engine) as tx:
            await _INSERT.run(tx, {"p_uid": uid, "p_key": "dropped", "p_payload": None, "p_at": 2})
            raise RuntimeError("the unit failed after its write")

    async def writes_a_key_twice() -> None:
        async with transaction(engine) as tx:
            await _INSERT.run(tx, {"p_uid": uid, "p_key": "dup", "p_payload": None, "p_at": 3})
            await _INSERT.run(tx, {"p_uid": uid, "p_key": "dup", "p_payload": None, "p_at": 4})

    with pytest.raises(RuntimeError):
        await fails_after_its_write()
    with pytest.raises(IntegrityError):  # the driver's error, as SQLAlchemy's class
        await writes_a_key_twice()
    assert await _keys(sessions, uid) == [1]
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]  # every connection went back


async def test_a_bare_transaction_lends_a_session_in_the_same_transaction(
        engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    """A statement without a fast plan, and ORM objects, run on a session lent on the Tx's own connection:
    the whole unit commits once, or rolls back as a whole, and commit callbacks run only after a commit."""
    uid = await user(sessions)
    committed: list[str] = []
    async with transaction(engine) as tx:
        first = await _INSERT.run(tx, {"p_uid": uid, "p_key": "k1", "p_payload": None, "p_at": 1})
        lent = await tx.session()
        assert await tx.session() is lent  # one per transaction
        lent.add(OutboundMessageRow(user_id=uid, idempotency_key="k2", kind="notice", channel="inapp", payload={},
                                    status="pending", attempts=0, next_attempt_at=0, created_at=2, updated_at=2))
        await lent.flush()  # sees the Tx's uncommitted row: same transaction
        found = (await _IN_LIST.run(tx, {"p_ids": [first.lastrowid, first.lastrowid + 1]})).all()
        assert len(found) == 2
        await _INSERT.run(tx, {"p_uid": uid, "p_key": "k3", "p_payload": None, "p_at": 3})
        on_commit(tx, lambda: committed.append("yes"))
        assert committed == []
    assert committed == ["yes"]
    assert await _keys(sessions, uid) == [1, 2, 3]

    async def fails_after_its_writes() -> None:
        async with transaction(engine) as tx:
            await _INSERT.run(tx, {"p_uid": uid, "p_key": "k4", "p_payload": None, "p_at": 4})
            (await tx.session()).add(OutboundMessageRow(
                user_id=uid, idempotency_key="k5", kind="notice", channel="inapp", payload={}, status="pending",
                attempts=0, next_attempt_at=0, created_at=5, updated_at=5))
            await (await tx.session()).flush()
            on_commit(tx, lambda: committed.append("no"))
            raise RuntimeError("the unit failed after its writes")

    with pytest.raises(RuntimeError):
        await fails_after_its_writes()
    assert await _keys(sessions, uid) == [1, 2, 3]
    assert committed == ["yes"]
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_a_lent_session_never_ends_the_units_transaction(
        engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    """A session lent and never used, or used and closed, or told to commit, before the unit's later writes:
    the unit still commits every write it made, once, at its own end (a lent session that was only opened
    once made the unit's commit a no-op, and a message answered 已记录 stored nothing)."""
    uid = await user(sessions)
    async with transaction(engine) as tx:
        await _INSERT.run(tx, {"p_uid": uid, "p_key": "k1", "p_payload": None, "p_at": 1})
        await tx.session()  # lent, then not used at all
    async with transaction(engine) as tx:
        lent = await tx.session()
        await lent.scalar(select(func.count()).select_from(OutboundMessageRow))
        await lent.commit()  # only flushes: the unit is still open
        await lent.close()  # leaves the unit's transaction alone
        await _INSERT.run(tx, {"p_uid": uid, "p_key": "k2", "p_payload": None, "p_at": 2})
    assert await _keys(sessions, uid) == [1, 2]

    async def rolled_back_by_its_lent_session() -> None:
        async with transaction(engine) as tx:
            await _INSERT.run(tx, {"p_uid": uid, "p_key": "k3", "p_payload": None, "p_at": 3})
            lent = await tx.session()
            await lent.scalar(select(func.count()).select_from(OutboundMessageRow))
            await lent.rollback()  # the unit's writes are gone: its commit must not pass for one

    with pytest.raises(RuntimeError, match="rolled back"):
        await rolled_back_by_its_lent_session()
    assert await _keys(sessions, uid) == [1, 2]
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


class _Trips:
    """Counts the trips a Tx makes to the database (statements sent together count once)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = Tx._send  # every statement of a Tx goes to the database through it, once per trip

        async def counted(tx: Tx, *args: Any) -> Any:
            self.count += 1
            return await original(tx, *args)

        monkeypatch.setattr(Tx, "_send", counted)


async def test_deferred_writes_go_with_the_next_trip_in_order(engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch,
                                                              sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    async with transaction(engine) as tx:
        trips = _Trips(monkeypatch)  # after SQLite's BEGIN IMMEDIATE
        await _INSERT.defer(tx, {"p_uid": uid, "p_key": "d1", "p_payload": {"n": 1}, "p_at": 1})
        await _MARK.defer(tx, {"p_uid": uid})
        assert trips.count == 0  # nothing sent yet
        rows = (await _READ.run(tx, {"p_uid": uid})).all()  # the read goes after them, in the same trip
        assert [(r.created_at, r.payload) for r in rows] == [(1, {"n": 1})] and trips.count == 1
        await _INSERT.defer(tx, {"p_uid": uid, "p_key": "d2", "p_payload": None, "p_at": 2})
    assert trips.count == 2  # the last write went with the COMMIT
    async with sessions.begin() as session:
        stored = await session.execute(select(_O.created_at, _O.status).where(_O.user_id == uid).order_by(_O.id))
        assert [tuple(r) for r in stored] == [(1, "sent"), (2, "pending")]


async def test_a_deferred_write_that_fails_fails_the_whole_unit(engine: AsyncEngine,
                                                                sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    committed: list[bool] = []

    async def writes_a_key_twice_deferred() -> None:
        async with transaction(engine) as tx:
            await _INSERT.run(tx, {"p_uid": uid, "p_key": "x", "p_payload": None, "p_at": 1})
            await _INSERT.defer(tx, {"p_uid": uid, "p_key": "y", "p_payload": None, "p_at": 2})
            await _INSERT.defer(tx, {"p_uid": uid, "p_key": "x", "p_payload": None, "p_at": 3})  # a duplicate
            on_commit(tx, lambda: committed.append(True))

    with pytest.raises(IntegrityError):  # raised by the COMMIT's trip, as SQLAlchemy's class
        await writes_a_key_twice_deferred()
    assert await _keys(sessions, uid) == [] and committed == []
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_deferred_writes_go_before_a_lent_session_statements(
        engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    async with transaction(engine) as tx:
        await _INSERT.defer(tx, {"p_uid": uid, "p_key": "e1", "p_payload": None, "p_at": 1})
        session = await tx.session()
        assert (await session.scalar(select(func.count()).select_from(_O).where(_O.user_id == uid))) == 1
        await _MARK.defer(tx, {"p_uid": uid})  # with a session lent: runs at once, in order
        assert set(await session.scalars(select(_O.status).where(_O.user_id == uid))) == {"sent"}
    assert await _keys(sessions, uid) == [1]


async def test_run_all_sends_statements_together_and_stops_at_the_first_error(
        engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch, sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    async with transaction(engine) as tx:
        trips = _Trips(monkeypatch)
        first, second, read = await run_all(tx, [
            (_INSERT, {"p_uid": uid, "p_key": "r1", "p_payload": {"a": 1}, "p_at": 1}),
            (_INSERT, {"p_uid": uid, "p_key": "r2", "p_payload": None, "p_at": 2}),
            (_READ, {"p_uid": uid})])
        assert trips.count == 1
        assert first.rowcount == second.rowcount == 1 and second.lastrowid == (first.lastrowid or 0) + 1
        assert [(r.created_at, r.payload) for r in read.all()] == [(1, {"a": 1}), (2, None)]

    async def duplicate_then_more() -> None:
        async with transaction(engine) as tx:
            await run_all(tx, [(_INSERT, {"p_uid": uid, "p_key": "r1", "p_payload": None, "p_at": 3}),
                               (_INSERT, {"p_uid": uid, "p_key": "r3", "p_payload": None, "p_at": 4})])

    with pytest.raises(IntegrityError):
        await duplicate_then_more()
    assert await _keys(sessions, uid) == [1, 2]
    async with sessions.begin() as session:  # on a session: one statement after another, same results
        rows = await run_all(session, [(_READ, {"p_uid": uid}), (_SUBSCRIBED, {"p_uid": uid})])
        assert [r.created_at for r in rows[0].all()] == [1, 2] and rows[1].first() == (True,)


async def test_a_bare_transaction_isolates_like_a_session(engine: AsyncEngine, database_url: str,
                                                          sessions: async_sessionmaker[AsyncSession]) -> None:
    """SQLite: the write lock is taken at BEGIN, so another process's writer waits; MariaDB: uncommitted rows
    are invisible to others (READ COMMITTED, as the pool's sessions)."""
    uid = await user(sessions)
    other = db.create_engine(database_url)
    try:
        async with transaction(engine) as tx:
            await _INSERT.run(tx, {"p_uid": uid, "p_key": "open", "p_payload": None, "p_at": 1})
            if engine.dialect.name == "sqlite":
                async with other.connect() as conn:
                    driver: Any = (await conn.get_raw_connection()).driver_connection
                    await driver.execute("PRAGMA busy_timeout=200")  # not the 30 s a real writer would wait
                    with pytest.raises(OperationalError, match="locked"):
                        await conn.execute(text("SELECT 1"))  # its BEGIN IMMEDIATE
            else:
                async with other.connect() as conn:
                    count = select(func.count()).select_from(OutboundMessageRow)
                    assert (await conn.execute(count)).scalar_one() == 0
    finally:
        await other.dispose()
    assert await _keys(sessions, uid) == [1]


async def test_a_connection_lost_in_a_bare_transaction_is_replaced(engine: AsyncEngine, database_url: str) -> None:
    if engine.dialect.name == "sqlite":
        pytest.skip("no server to drop the connection")
    admin, victims = db.create_engine(database_url), []

    async def lose_the_connection() -> None:
        async with transaction(engine) as tx:
            victims.append((await _CONNECTION_ID.run(tx)).all()[0].id)
            async with admin.connect() as killer:
                await killer.execute(text(f"KILL {int(victims[0])}"))
            await _CONNECTION_ID.run(tx)  # lost mid-transaction: the rollback fails too

    try:
        with pytest.raises(OperationalError):
            await lose_the_connection()
    finally:
        await admin.dispose()
    async with transaction(engine) as tx:  # the dead connection was invalidated, not pooled again
        assert (await _CONNECTION_ID.run(tx)).all()[0].id != victims[0]


async def test_a_deadlock_victim_runs_again(engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await user(sessions)
    runs: list[Tx] = []

    async def unit(tx: Tx) -> str:
        runs.append(tx)
        await _INSERT.run(tx, {"p_uid": uid, "p_key": "once", "p_payload": None, "p_at": len(runs)})
        if len(runs) == 1:
            raise OperationalError("INSERT …", {}, Exception(1213, "Deadlock found when trying to get lock"))
        return "done"

    assert await db.in_fast_transaction(engine, unit) == "done"
    assert len(runs) == 2 and await _keys(sessions, uid) == [2]  # the first attempt's row was rolled back


async def test_an_overflow_connection_is_closed_when_given_back(database_url: str,
                                                                sessions: async_sessionmaker[AsyncSession]) -> None:
    """A committed unit gives its connection back without the greenlet bridge only when that does no I/O;
    an overflow connection, which the pool closes on return, still goes through it (closing is I/O)."""
    uid = await user(sessions)
    small = db.create_engine(database_url, pool_size=1, max_overflow=1)
    try:
        async with transaction(small) as first:
            await _INSERT.run(first, {"p_uid": uid, "p_key": "o1", "p_payload": None, "p_at": 1})
            if small.dialect.name != "sqlite":  # SQLite's write lock: a second writer would wait for the first
                async with transaction(small) as overflow:
                    await _READ.run(overflow, {"p_uid": uid})
                    assert small.pool.overflow() == 1  # type: ignore[attr-defined]
                assert small.pool.checkedin() == 1  # type: ignore[attr-defined]  # room in the queue: kept
        # The first one comes back to a full queue: the pool closes it (through the bridge: closing is I/O).
        assert small.pool.checkedout() == 0 and small.pool.checkedin() == 1  # type: ignore[attr-defined]
        assert small.pool.overflow() == 0  # type: ignore[attr-defined]
        async with transaction(small) as again:  # the pooled connection is sound
            assert [r.created_at for r in (await _READ.run(again, {"p_uid": uid})).all()] == [1]
    finally:
        await small.dispose()


async def test_a_units_last_writes_commit_in_their_own_trip(engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch,
                                                            sessions: async_sessionmaker[AsyncSession]) -> None:
    """`last=True` on a transaction the unit has to itself: the COMMIT rides with the statements (one trip in all),
    reads may follow; on a shared one (a group commit's batch) nothing is committed early."""
    uid = await user(sessions)
    async with transaction(engine) as tx:
        trips = _Trips(monkeypatch)
        await run_all(tx, [(_INSERT, {"p_uid": uid, "p_key": "l1", "p_payload": None, "p_at": 1})], last=True)
        if engine.dialect.name == "sqlite":  # one pooled connection: the driver says the transaction ended
            assert not tx.driver.in_transaction
        else:
            assert await _keys(sessions, uid) == [1]  # committed already: another connection sees it
        assert [r.created_at for r in (await _READ.run(tx, {"p_uid": uid})).all()] == [1]
        with pytest.raises(RuntimeError, match="committed already"):
            await _INSERT.defer(tx, {"p_uid": uid, "p_key": "l2", "p_payload": None, "p_at": 2})
    assert trips.count == (2 if engine.dialect.name == "sqlite" else 3)  # MariaDB: the read's COMMIT

    async def shared_then_fails() -> None:
        async with transaction(engine) as tx:
            tx.shared = True
            await run_all(tx, [(_INSERT, {"p_uid": uid, "p_key": "l3", "p_payload": None, "p_at": 3})], last=True)
            raise RuntimeError("another unit of the batch failed")

    with pytest.raises(RuntimeError):
        await shared_then_fails()
    assert await _keys(sessions, uid) == [1]
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


_TRICKY = ["", "plain", "it's", 'say "hi"', "back\\slash", "nul\x00byte", "ctrl-z\x1a", "line\nbreak\r\n",
           "中文’引号”", "😀 emoji", "%s %(x)s", "'; DROP TABLE users; --"]


async def test_literals_are_what_the_driver_would_write_and_read_back_the_same(
        engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    """`literals` (MariaDB's hot path) writes exactly aiomysql's own escaping, in both of the server's quoting
    modes, and tricky strings come back from the database unchanged."""
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite binds its parameters; nothing is escaped into the text")
    from decimal import Decimal

    from schedule.fastsql import literals

    # (no bytes: aiomysql's own `escape` of bytes is broken, and nothing on this path sends any)
    values: list[Any] = [0, -7, 2**62, True, False, None, 1.5, Decimal("2.50"), *_TRICKY]
    async with transaction(engine) as tx:
        assert literals(tx.driver, values) == tuple(map(tx.driver.escape, values))
        await tx.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
        assert literals(tx.driver, values) == tuple(map(tx.driver.escape, values))
        await tx.execute("SET SESSION sql_mode = REPLACE(@@sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
    uid = await user(sessions)
    async with transaction(engine) as tx:
        for i, text_ in enumerate(_TRICKY):
            await _INSERT.run(tx, {"p_uid": uid, "p_key": f"k{i}", "p_payload": {"text": text_}, "p_at": i})
    async with transaction(engine) as tx:
        rows = (await _READ.run(tx, {"p_uid": uid})).all()
    assert [r.payload["text"] for r in rows] == _TRICKY


async def test_sqlite_waits_for_another_writer_off_the_event_loop(engine: AsyncEngine, database_url: str,
                                                                  sessions: async_sessionmaker[AsyncSession]
                                                                  ) -> None:
    """A BEGIN that finds the write lock taken waits on aiosqlite's thread (the loop goes on ticking) and gets
    the lock once the other writer commits; the connection never waits on the loop's thread."""
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's write lock")
    import asyncio
    import sqlite3

    await user(sessions)  # the database migrated and written once
    other = db.create_engine(database_url)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    try:
        async with other.connect() as conn:
            raw: Any = (await conn.get_raw_connection()).driver_connection
            holder = sqlite3.connect(database_url.split("///", 1)[1], timeout=0)
            holder.isolation_level = None
            holder.execute("BEGIN IMMEDIATE")  # another process's writer, as far as SQLite can tell
            beat = asyncio.ensure_future(ticker())
            waiting = asyncio.ensure_future(conn.execute(text("SELECT 1")))  # its BEGIN IMMEDIATE waits
            await asyncio.sleep(0.3)
            assert not waiting.done() and ticks >= 10  # the loop ran all along
            holder.execute("COMMIT")
            holder.close()
            assert (await asyncio.wait_for(waiting, 5)).scalar_one() == 1
            beat.cancel()
            assert raw.in_transaction
            await conn.rollback()
    finally:
        await other.dispose()
