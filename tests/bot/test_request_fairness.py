"""Requests run later share the LLM fairly, on every backend: a per-user quota checked with the insert, one run
at a time per user, users served in turns under a global cap, and chat answers never queued behind runs —
through the real webhook and runner, a FakeLLM that serves few requests at once and holds the runs, and a
frozen clock (order and overlap are asserted, never wall time)."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.web.app import create_app
from fakes.llm import FakeLLM
from fakes.wechat import FakeWeChatAPI
from schedule import requests
from schedule.clock import to_ms
from schedule.db import in_transaction
from schedule.domain import NewRequest
from schedule.model import OutboundMessageRow, ScheduledRequestRow
from schedule.testing import FrozenClock
from tests.bot.test_scheduled_requests import config, running, say, with_llm

MINE, THEIRS = "甲要的第", "乙要的那件事"


async def _store(app: object, openid: str, texts: list[str], clock: FrozenClock) -> None:
    service = app.state.service  # type: ignore[attr-defined]
    user = await service.get_or_create_user(openid)

    async def work(session: AsyncSession) -> None:
        for text in texts:
            await requests.add(session, user.id, NewRequest(text=text, title=text[:10], first_at=to_ms(clock.now()),
                                                            timezone="Asia/Shanghai"), now_ms=to_ms(clock.now()))

    await in_transaction(app.state.sessions, work)  # type: ignore[attr-defined]


async def test_many_due_runs_of_one_user_delay_neither_another_users_run_nor_a_chat_answer(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeLLM(parallel=3) as llm, FakeWeChatAPI() as api:
        settings = config(api, database_url, **with_llm(llm), SCHEDULED_REQUEST_CONCURRENCY=2)
        app = create_app(settings, clock=clock, run_worker=False)
        async with running(app) as client:
            await _store(app, "o-many", [f"{MINE}{n}件事" for n in range(30)], clock)  # stored first: oldest ids
            await _store(app, "o-one", [THEIRS], clock)
            llm.hold("定时请求")  # the runs stay at the LLM until released
            runner = asyncio.create_task(app.state.requests.run())
            try:
                await llm.received(2)
                first_round = [body["messages"][-1]["content"] for body in llm.requests[:2]]
                assert sum(MINE in text for text in first_round) == 1
                assert sum(THEIRS in text for text in first_round) == 1
                # the LLM server has a slot left, and the chat answer gets it while both runs are held
                llm.reply("会议纪要分三段：议题、结论、待办。")
                answer = await say(client, clock, "会议纪要怎么写", openid="o-chat")
                assert answer == "会议纪要分三段：议题、结论、待办。"
                assert not any(THEIRS in text or MINE in text for text in llm.answered)
                llm.release()
                await llm.received(32)  # every run reached the LLM
            finally:
                llm.release()
                app.state.requests.stop()
                await runner
            async with app.state.sessions() as session:
                queued = await session.scalar(select(func.count()).select_from(OutboundMessageRow)
                                              .where(OutboundMessageRow.kind == "digest"))
    assert queued == 31
    runs = [[text for text in snapshot if "定时请求" in text] for snapshot in llm.concurrent]
    assert max(len(r) for r in runs) == 2  # the global cap, reached
    assert all(sum(MINE in text for text in r) <= 1 for r in runs)  # one run at a time per user


async def test_the_quota_of_active_requests_is_answered_plainly_and_nothing_is_stored(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeLLM() as llm, FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, **with_llm(llm), SCHEDULED_REQUESTS_PER_USER=2), clock=clock,
                         run_worker=False)
        async with running(app) as client:
            assert (await say(client, clock, "每天早上8点告诉我今天的天气")).startswith("好的")
            assert (await say(client, clock, "每天晚上9点告诉我明天的天气")).startswith("好的")
            refused = await say(client, clock, "每天中午12点告诉我午饭吃什么")
            async with app.state.sessions() as session:
                stored = (await session.scalars(select(ScheduledRequestRow.text))).all()
    assert refused.startswith("你已经有 2 个定时请求了，这个没有记下。")
    assert len(stored) == 2 and not any("午饭" in text for text in stored)


async def test_concurrent_adds_at_the_quota_never_overshoot_it(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app):
            user = await app.state.service.get_or_create_user("o-race")

            async def add(n: int) -> str:
                async def work(session: AsyncSession) -> str:
                    new = NewRequest(text=f"第{n}件", title=f"第{n}件", first_at=to_ms(clock.now()),
                                     timezone="Asia/Shanghai")
                    try:
                        await requests.add(session, user.id, new, now_ms=to_ms(clock.now()), limit=3)
                    except requests.QuotaReached:
                        return "refused"
                    await asyncio.sleep(0)  # the other add runs while this one holds its count
                    return "stored"

                return await in_transaction(app.state.sessions, work)

            outcomes = await asyncio.gather(*(add(n) for n in range(6)))
            async with app.state.sessions() as session:
                active = await session.scalar(select(func.count()).select_from(ScheduledRequestRow))
    assert sorted(outcomes) == ["refused"] * 3 + ["stored"] * 3
    assert active == 3


async def test_a_cancelled_request_frees_its_place(database_url: str, clock: FrozenClock) -> None:
    async with FakeLLM() as llm, FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, **with_llm(llm), SCHEDULED_REQUESTS_PER_USER=1),
                         clock=clock, run_worker=False)
        async with running(app) as client:
            assert (await say(client, clock, "每天早上8点告诉我今天的天气")).startswith("好的")
            assert (await say(client, clock, "每天晚上9点告诉我明天的新闻")).startswith("你已经有 1 个定时请求了")
            assert (await say(client, clock, "早上的天气不用发了")).startswith("好的，以后不再")
            assert (await say(client, clock, "每天晚上9点告诉我明天的新闻")).startswith("好的")
