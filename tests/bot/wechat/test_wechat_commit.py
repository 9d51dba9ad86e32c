"""Group commit: concurrent units share transactions, a failing unit is isolated, results stay per caller;
units of `Fast` statements only run on a bare driver transaction, alone or batched."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import event, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.wechat.commit import DirectCommit, GroupCommit, committer_for
from schedule import inbound
from schedule.fastsql import Tx
from schedule.model import InboundMessageRow


def count_commits(engine: AsyncEngine) -> list[int]:
    commits = [0]

    @event.listens_for(engine.sync_engine, "commit")
    def _on_commit(_conn: object) -> None:
        commits[0] += 1

    return commits


async def test_concurrent_units_share_transactions(engine: AsyncEngine,
                                                   sessions: async_sessionmaker[AsyncSession]) -> None:
    group = GroupCommit(sessions)
    commits = count_commits(engine)
    claims = await asyncio.gather(*(group.run(lambda s, i=i: inbound.claim_in(s, f"k{i % 10}", now_ms=i))
                                    for i in range(40)))
    assert sum(c.fresh for c in claims) == 10  # each key won exactly once
    assert commits[0] < 40
    async with sessions() as session:
        assert await session.scalar(select(func.count()).select_from(InboundMessageRow)) == 10


async def test_failing_unit_is_isolated(sessions: async_sessionmaker[AsyncSession]) -> None:
    group = GroupCommit(sessions)

    async def add(session: AsyncSession, key: str) -> str:
        await session.execute(insert(InboundMessageRow).values(dedupe_key=key, received_at=0, status="processing"))
        return key

    async def boom(session: AsyncSession) -> str:
        await add(session, "boom")
        raise RuntimeError("unit failed")

    results = await asyncio.gather(group.run(lambda s: add(s, "a")), group.run(boom), group.run(lambda s: add(s, "b")),
                                   return_exceptions=True)
    assert results[0] == "a" and results[2] == "b" and isinstance(results[1], RuntimeError)
    async with sessions() as session:
        keys = set((await session.scalars(select(InboundMessageRow.dedupe_key))).all())
    assert keys == {"a", "b"}


async def test_exclusive_calls_run_between_batches(sessions: async_sessionmaker[AsyncSession]) -> None:
    group = GroupCommit(sessions)
    order: list[str] = []

    async def unit(session: AsyncSession, name: str) -> None:
        order.append(name)

    async def solo() -> str:
        order.append("solo")
        async with sessions.begin() as session:  # its own transaction: must not meet a batch's lock
            await inbound.claim_in(session, "solo", now_ms=0)
        return "done"

    results = await asyncio.gather(group.run(lambda s: unit(s, "1")), group.exclusive(solo),
                                   group.run(lambda s: unit(s, "2")))
    assert results[1] == "done" and order == ["1", "solo", "2"]


async def test_direct_commit_and_selection(sessions: async_sessionmaker[AsyncSession], database_url: str) -> None:
    direct = DirectCommit(sessions)
    assert (await direct.run(lambda s: inbound.claim_in(s, "d", now_ms=0))).fresh
    assert not (await direct.run(lambda s: inbound.claim_in(s, "d", now_ms=0))).fresh
    # SQLite batches its writer-lock turns; InnoDB groups log flushes itself, so MariaDB commits directly
    expected = GroupCommit if database_url.startswith("sqlite") else DirectCommit
    assert isinstance(committer_for(sessions), expected)


@pytest.mark.parametrize("workers", [8])
async def test_claims_from_two_engines_on_one_database(database_url: str, engine: AsyncEngine, workers: int) -> None:
    from schedule.db import create_engine, session_factory

    engines = [create_engine(database_url) for _ in range(2)]
    groups = [GroupCommit(session_factory(e)) for e in engines]
    try:
        claims = await asyncio.gather(*(groups[i % 2].run(lambda s: inbound.claim_in(s, "shared", now_ms=0))
                                        for i in range(workers)))
    finally:
        for e in engines:
            await e.dispose()
    assert sum(c.fresh for c in claims) == 1


async def test_back_to_back_units_never_strand_in_the_queue(sessions: async_sessionmaker[AsyncSession]) -> None:
    groups = (GroupCommit(sessions), GroupCommit(sessions, serialize_exclusive=False, max_in_flight=4))
    for n, group in enumerate(groups):
        for i in range(20):  # each submission arrives just as the previous runner finishes
            key = f"b{n}:{i}"
            claim = await asyncio.wait_for(group.run(lambda s, key=key: inbound.claim_in(s, key, now_ms=0)), 5)
            assert claim.fresh


async def test_fast_units_run_without_a_session(engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]) -> None:
    """A batch of fast units shares one bare transaction; one ORM unit in the batch makes it a session's."""
    group, seen = GroupCommit(sessions), []
    commits = count_commits(engine)  # SQLAlchemy's commit event: fires for sessions only

    async def claim(target: Tx | AsyncSession, key: str) -> bool:
        seen.append(target)
        return (await inbound.claim_in(target, key, now_ms=0)).fresh

    fast = await asyncio.gather(*(group.run_fast(lambda tx, i=i: claim(tx, f"f{i % 4}")) for i in range(12)))
    assert sum(fast) == 4 and all(isinstance(t, Tx) for t in seen) and len(set(map(id, seen))) < 12
    assert commits[0] == 0
    seen.clear()
    mixed = await asyncio.gather(group.run_fast(lambda tx: claim(tx, "m1")), group.run(lambda s: claim(s, "m2")))
    assert list(mixed) == [True, True] and all(isinstance(t, AsyncSession) for t in seen) and commits[0] == 1
    seen.clear()
    assert await DirectCommit(sessions).run_fast(lambda tx: claim(tx, "d1"))
    assert isinstance(seen[0], Tx) and commits[0] == 1
    async with sessions() as session:
        assert await session.scalar(select(func.count()).select_from(InboundMessageRow)) == 7


@pytest.mark.parametrize("committer", ["direct", "group"])
async def test_a_signed_claim_is_written_only_for_its_own_nonce(sessions: async_sessionmaker[AsyncSession],
                                                                committer: str) -> None:
    """The nonce and the claim go in one trip (with the COMMIT when the unit is alone): a fresh message is
    claimed, a retry of it is not fresh, and a replayed signature carrying another message claims nothing,
    even though its transaction commits."""
    writes = DirectCommit(sessions) if committer == "direct" else GroupCommit(sessions)

    def signed(key: str, nonce: str, owner: str) -> object:
        return writes.run_fast(lambda tx: inbound.claim_signed_in(tx, key, nonce_key=nonce, owner=owner, now_ms=0))

    first, again, replay, other = await asyncio.gather(
        signed("msg:1", "nonce:a", "o1"), signed("msg:1", "nonce:a", "o1"), signed("msg:2", "nonce:a", "o2"),
        signed("msg:3", "nonce:b", "o3"))
    assert [first.fresh, again.fresh, other.fresh] == [True, False, True]  # type: ignore[attr-defined]
    assert replay is None
    async with sessions() as session:
        keys = set(await session.scalars(select(InboundMessageRow.dedupe_key)))
    assert keys == {"msg:1", "msg:3", "nonce:a", "nonce:b"}
