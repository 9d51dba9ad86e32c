"""Requests the bot runs later, through the real webhook, request runner and delivery worker, with the
fake WeChat API, the fake LLM and a frozen clock, on every backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
import xmltodict
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import select

from bot.agent.scheduled import request_runner
from bot.settings import Settings
from bot.web.app import create_app
from fakes.llm import FakeLLM
from fakes.wechat import FakeWeChatAPI, event_message, sign_request, text_message
from schedule.db import create_engine, session_factory
from schedule.model import OutboundMessageRow, ScheduledRequestRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

TOKEN = "reqtoken"
_IDS = iter(range(9000, 99999))


def config(api: FakeWeChatAPI, database_url: str, **extra: object) -> Settings:
    return Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN=TOKEN, WECHAT_APP_ID=api.app_id,  # type: ignore[call-arg]
                    WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url, **extra)


def with_llm(llm: FakeLLM) -> dict[str, object]:
    return {"AGENT_BASE_URL": llm.base_url, "AGENT_API_KEY": llm.api_key, "AGENT_MODEL": "fake-model",
            "AGENT_MAX_RETRIES": 0}


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                       base_url="http://t") as client:
        yield client


async def say(client: httpx.AsyncClient, clock: FrozenClock, text: str, openid: str = "o-req") -> str:
    msg_id = next(_IDS)
    params = sign_request(TOKEN, timestamp=int(clock.now().timestamp()), nonce=f"n{msg_id}")
    response = await client.post("/wechat", params=params,
                                 content=text_message(openid, text, msg_id=msg_id, create_time=1))
    assert response.status_code == 200
    return str(xmltodict.parse(response.text)["xml"]["Content"])


def pushed(api: FakeWeChatAPI) -> list[str]:
    return [c.body["text"]["content"] for c in api.calls_to("message/custom/send")]


async def requests_of(app: FastAPI) -> list[ScheduledRequestRow]:
    async with app.state.sessions() as session:
        return list((await session.scalars(select(ScheduledRequestRow).order_by(ScheduledRequestRow.id))).all())


async def test_a_schedule_query_runs_at_its_time_and_is_pushed_once_across_two_workers(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            assert "已记录" in await say(client, clock, "明天下午三点开会")
            answer = await say(client, clock, "明早8点帮我看看今天有什么会")
            assert answer == "好的，6月19日（周五）08:00 帮你看看今天有什么会。"
            assert (await app.state.requests.run_once()).claimed == 0  # not due yet
            clock.set(clock.now().replace(day=19, hour=0))  # 08:00 local on the 19th
            # a second worker process on the same database: its own engine, runner and agent
            engine = create_engine(database_url)
            sessions = session_factory(engine)
            other = request_runner(sessions, clock, ScheduleService(sessions, clock), None)
            try:
                first, second = await asyncio.gather(app.state.requests.run_once(), other.run_once())
                third = await other.run_once()
            finally:
                await engine.dispose()
            assert first.answered + second.answered == 1 and third.claimed == 0
            assert (await app.state.worker.run_once()).sent == 1
            [stored] = await requests_of(app)
    [text] = pushed(api)
    assert text == "6月19日（周五）的日程（1 项）：\n📅 6月19日（周五） 今天\n· 15:00 开会 ⏰14:00"
    assert stored.status == "done"


async def test_a_daily_free_form_request_runs_through_the_llm_and_is_cancelled_in_words(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeLLM() as llm, FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, **with_llm(llm)), clock=clock, run_worker=False)
        async with running(app) as client:
            answer = await say(client, clock, "每天早上8点告诉我今天的天气")
            assert answer == "好的，每天 08:00 告诉你今天的天气。第一次是6月19日（周五）08:00。不需要时说“天气不用发了”。"
            calls_before = len(llm.requests)
            clock.set(clock.now().replace(day=19, hour=0))
            llm.reply("北京今天晴，18~27°C。")
            assert (await app.state.requests.run_once()).answered == 1
            assert (await app.state.worker.run_once()).sent == 1
            prompt = llm.requests[calls_before]["messages"][-1]["content"]
            assert prompt.endswith("告诉我今天的天气") and "定时请求" in prompt
            [stored] = await requests_of(app)
            assert stored.status == "active" and stored.run_at == int(
                clock.now().replace(day=20).timestamp() * 1000)
            assert await say(client, clock, "我有哪些定时任务") == "你的定时请求（1 个）：\n1. 每天 08:00 告诉你今天的天气"
            # a new time said without 早上 keeps the morning: 07:00, from the next day on
            assert await say(client, clock, "天气改成7点发") == ("好的，改为每天 07:00 告诉你今天的天气。"
                                                                  "下一次是6月20日（周六）07:00。")
            clock.set(clock.now().replace(day=19, hour=23))  # 07:00 local on the 20th
            llm.reply("北京今天多云。")
            assert (await app.state.requests.run_once()).answered == 1
            assert (await app.state.worker.run_once()).sent == 1
            assert await say(client, clock, "早上的天气不用发了") == "好的，以后不再每天 07:00 告诉你今天的天气了。"
            clock.set(clock.now().replace(day=20, hour=23))
            assert (await app.state.requests.run_once()).claimed == 0
            [stored] = await requests_of(app)
    assert pushed(api) == ["北京今天晴，18~27°C。", "北京今天多云。"]
    assert stored.status == "cancelled"


async def test_without_an_llm_a_free_form_request_is_refused_and_not_stored(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            answer = await say(client, clock, "每天早上8点告诉我今天的天气")
            rows = await requests_of(app)
    assert "需要接入大模型" in answer and "没有记下" in answer
    assert rows == []


async def test_a_failed_run_is_retried_once_then_the_user_gets_a_short_notice(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeLLM() as llm, FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, **with_llm(llm)), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "每天早上8点告诉我今天的天气")
            clock.set(clock.now().replace(day=19, hour=0))
            llm.fail(502, times=2)
            assert (await app.state.requests.run_once()).retrying == 1
            assert (await app.state.requests.run_once()).claimed == 0  # the retry waits a minute
            clock.advance(timedelta(seconds=61))
            assert (await app.state.requests.run_once()).failed == 1
            assert (await app.state.worker.run_once()).sent == 1
            async with app.state.sessions() as session:
                kinds = (await session.scalars(select(OutboundMessageRow.kind))).all()
            [stored] = await requests_of(app)
    assert pushed(api) == ["抱歉，定时请求“今天的天气”这次没能完成。下次 6月20日（周六）08:00 会再试。"]
    assert list(kinds) == ["notice"]
    assert stored.status == "active" and stored.attempts == 0


async def test_a_reminder_with_a_weekly_list_of_what_was_done(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "今天下午三点提交报销单")
            await say(client, clock, "提交报销单已经完成了")
            answer = await say(client, clock, "每周五下午5点提醒我写周报并列出这周完成的事")
            assert answer.startswith("好的，每周五 17:00 提醒你写周报，并列出这周完成的事。"), answer
            clock.set(clock.now().replace(day=19, hour=9))  # Friday 17:00 local
            assert (await app.state.requests.run_once()).answered == 1
            assert (await app.state.worker.run_once()).sent == 1
    [text] = pushed(api)
    assert text.startswith("⏰ 提醒：写周报。\n本周完成的事（1 项）：\n· 6月18日（周四）15:00 提交报销单"), text


async def test_unsubscribing_deletes_the_requests(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "明早8点帮我看看今天有什么会")
            await say(client, clock, "每天早上9点告诉我今天有什么安排")
            params = sign_request(TOKEN, timestamp=int(clock.now().timestamp()), nonce="unsub")
            response = await client.post("/wechat", params=params,
                                         content=event_message("o-req", "unsubscribe", create_time=2))
            assert response.status_code == 200
            assert await requests_of(app) == []
            clock.set(clock.now().replace(day=19, hour=2))
            assert (await app.state.requests.run_once()).claimed == 0
    assert pushed(api) == []
