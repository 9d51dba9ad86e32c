"""The request runner's guarantees, on every backend: a request cancelled while its run is in flight
pushes nothing; a run whose lease lapsed and was taken over pushes once, by the worker that holds the claim."""

from __future__ import annotations

import asyncio
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import requests
from schedule.clock import to_ms
from schedule.db import in_transaction
from schedule.domain import NewRequest, ScheduledRequest
from schedule.model import OutboundMessageRow, UserRow
from schedule.request_runner import RequestRunner
from schedule.testing import FrozenClock


async def _setup(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> tuple[int, int]:
    async def work(session: AsyncSession) -> tuple[int, int]:
        user = UserRow(wechat_openid="o-r", timezone="Asia/Shanghai", created_at=0)
        session.add(user)
        await session.flush()
        new = NewRequest(text="告诉我今天的天气", title="今天的天气", first_at=to_ms(clock.now()),
                         timezone="Asia/Shanghai")
        stored = await requests.add(session, user.id, new, now_ms=to_ms(clock.now()))
        return user.id, stored.id

    return await in_transaction(sessions, work)


def _runner(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock, answer: object,
            **kw: int) -> RequestRunner:
    return RequestRunner(sessions, clock, answer,  # type: ignore[arg-type]
                         failed_text=lambda r, n: "failed", missed_text=lambda r: "missed", **kw)


async def _pushes(sessions: async_sessionmaker[AsyncSession]) -> list[str]:
    async with sessions() as session:
        return [str(p["text"]) for p in (await session.scalars(select(OutboundMessageRow.payload))).all()]


async def test_a_request_cancelled_while_it_runs_pushes_nothing(sessions: async_sessionmaker[AsyncSession],
                                                                 clock: FrozenClock) -> None:
    user_id, request_id = await _setup(sessions, clock)

    async def answer(request: ScheduledRequest, *, run_at: datetime) -> str:
        await in_transaction(sessions, lambda s: requests.cancel(s, user_id, [request_id], now_ms=0))
        return "晴"

    report = await _runner(sessions, clock, answer).run_once()
    assert report.claimed == 1 and report.answered == 0
    assert await _pushes(sessions) == []


async def test_a_lapsed_lease_taken_over_pushes_once(sessions: async_sessionmaker[AsyncSession],
                                                     clock: FrozenClock) -> None:
    await _setup(sessions, clock)
    slow_started, release = asyncio.Event(), asyncio.Event()

    async def slow(request: ScheduledRequest, *, run_at: datetime) -> str:
        slow_started.set()
        await release.wait()
        return "慢的答案"

    async def fast(request: ScheduledRequest, *, run_at: datetime) -> str:
        return "快的答案"

    first = asyncio.create_task(_runner(sessions, clock, slow, lease_ms=1_000).run_once())
    await slow_started.wait()
    assert (await _runner(sessions, clock, fast).run_once()).claimed == 0  # leased
    clock.advance(seconds=2)  # the first worker's lease lapsed: another takes the run over
    assert (await _runner(sessions, clock, fast).run_once()).answered == 1
    release.set()
    assert (await first).answered == 0  # its claim is gone: its answer is not pushed
    assert await _pushes(sessions) == ["快的答案"]


async def _user_with(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock, openid: str,
                     texts: list[str]) -> None:
    async def work(session: AsyncSession) -> None:
        user = UserRow(wechat_openid=openid, timezone="Asia/Shanghai", created_at=0)
        session.add(user)
        await session.flush()
        for text in texts:
            await requests.add(session, user.id, NewRequest(text=text, title=text, first_at=to_ms(clock.now()),
                                                            timezone="Asia/Shanghai"), now_ms=to_ms(clock.now()))

    await in_transaction(sessions, work)


async def test_users_take_turns_whatever_the_number_of_their_due_requests(
        sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    await _user_with(sessions, clock, "o-a", ["甲1", "甲2", "甲3"])
    await _user_with(sessions, clock, "o-b", ["乙1"])
    await _user_with(sessions, clock, "o-c", ["丙1"])
    ran: list[str] = []

    async def answer(request: ScheduledRequest, *, run_at: datetime) -> str:
        ran.append(request.text)
        return "好"

    runner = _runner(sessions, clock, answer, concurrency=1)
    while (await runner.run_once()).claimed:
        pass
    assert ran == ["甲1", "乙1", "丙1", "甲2", "甲3"]


async def test_a_user_has_one_run_at_a_time_across_workers(sessions: async_sessionmaker[AsyncSession],
                                                            clock: FrozenClock) -> None:
    await _user_with(sessions, clock, "o-a", ["甲1", "甲2"])
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(request: ScheduledRequest, *, run_at: datetime) -> str:
        started.set()
        await release.wait()
        return "慢"

    async def fast(request: ScheduledRequest, *, run_at: datetime) -> str:
        return "快"

    first = asyncio.create_task(_runner(sessions, clock, slow).run_once())
    await started.wait()
    other = _runner(sessions, clock, fast)
    assert (await other.run_once()).claimed == 0  # the user's run is in flight on the first worker
    release.set()
    assert (await first).answered == 1
    assert (await other.run_once()).answered == 1
