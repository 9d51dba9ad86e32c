"""The agent behind the real `/wechat` webhook: fast answers are passive, slow ones go through the outbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
import xmltodict
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent import APOLOGY, AgentHistory
from bot.agent.openai_agent import OpenAIAgent
from bot.settings import Settings
from bot.web.app import create_app
from fakes.llm import FakeLLM
from fakes.wechat import FakeWeChatAPI, sign_request, text_message
from schedule.db import create_engine, session_factory
from schedule.model import AgentMessageRow, OutboundMessageRow, ScheduleItemRow, UserRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

TOKEN = "agenttoken"
QUESTION = "会议纪要怎么写"  # everything else goes to the agent: a question with schedule words still goes to the agent


def config(api: FakeWeChatAPI, database_url: str, **agent: object) -> Settings:
    return Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN=TOKEN, WECHAT_APP_ID=api.app_id,  # type: ignore[call-arg]
                    WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url, **agent)


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                       base_url="http://t") as client:
        yield client


async def post(client: httpx.AsyncClient, clock: FrozenClock, openid: str, text: str, msg_id: int) -> str:
    params = sign_request(TOKEN, timestamp=int(clock.now().timestamp()), nonce=f"n{msg_id}")
    response = await client.post("/wechat", params=params,
                                 content=text_message(openid, text, msg_id=msg_id, create_time=1))
    assert response.status_code == 200
    return response.text


@dataclass
class AgentBot:
    """The whole app with an `OpenAIAgent` on a fake LLM, a fake WeChat API and a database of its own."""

    llm: FakeLLM
    api: FakeWeChatAPI
    client: httpx.AsyncClient
    sessions: async_sessionmaker[AsyncSession]


@asynccontextmanager
async def agent_bot(database_url: str, clock: FrozenClock) -> AsyncIterator[AgentBot]:
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    try:
        async with FakeLLM() as llm, FakeWeChatAPI() as api:
            agent = OpenAIAgent(base_url=llm.base_url, api_key=llm.api_key, model="fake-model",
                                service=ScheduleService(sessions, clock), history=AgentHistory(sessions, clock),
                                max_retries=0)
            app = create_app(config(api, database_url), clock=clock, agent=agent, engine=engine,
                             run_worker=False, reply_budget_s=2.0)
            try:
                async with running(app) as client:
                    yield AgentBot(llm, api, client, sessions)
            finally:
                await agent.aclose()
    finally:
        await engine.dispose()


def content_of(reply_xml: str) -> str:
    return str(xmltodict.parse(reply_xml)["xml"]["Content"])


async def test_a_slow_llm_answer_is_acked_then_delivered_by_the_worker(database_url: str,
                                                                        clock: FrozenClock) -> None:
    async with FakeLLM() as llm, FakeWeChatAPI() as api:
        llm.reply("会议纪要写清时间、参会人、结论和待办即可。", delay_s=0.5)
        settings = config(api, database_url, AGENT_BASE_URL=llm.base_url, AGENT_API_KEY=llm.api_key,
                          AGENT_MODEL="fake-model")
        app = create_app(settings, clock=clock, run_worker=False, reply_budget_s=0.1)
        async with running(app) as client:
            assert isinstance(app.state.agent, OpenAIAgent)
            assert await post(client, clock, "o-slow", QUESTION, 7001) == "success"
            await app.state.wechat_router.dispatcher.drain()
            assert (await app.state.worker.run_once()).sent == 1
            async with app.state.sessions() as session:
                outbox = (await session.scalars(select(OutboundMessageRow))).all()
                history = (await session.scalars(select(AgentMessageRow.content).order_by(AgentMessageRow.id))).all()
    [send] = api.calls_to("message/custom/send")
    assert send.body == {"touser": "o-slow", "msgtype": "text",
                         "text": {"content": "会议纪要写清时间、参会人、结论和待办即可。"}}
    assert [(row.kind, row.status) for row in outbox] == [("agent_reply", "sent")]
    assert history == [QUESTION, "会议纪要写清时间、参会人、结论和待办即可。"]
    assert [m["content"] for m in llm.requests[0]["messages"][1:]] == [QUESTION]


async def test_a_fast_tool_answer_is_passive_and_writes_for_the_sender(database_url: str,
                                                                        clock: FrozenClock) -> None:
    async with agent_bot(database_url, clock) as bot:
        bot.llm.call_tools(("schedule_create_item", {"kind": "task", "title": "写会议纪要",
                                                     "due_at": "2026-06-18T18:00:00+08:00"}))
        bot.llm.reply("已记录：今天 18:00 前写会议纪要。")
        answer = await post(bot.client, clock, "o-fast", QUESTION, 7002)
        async with bot.sessions() as session:
            owner = await session.scalar(select(UserRow.id).where(UserRow.wechat_openid == "o-fast"))
            items = (await session.scalars(select(ScheduleItemRow))).all()
            outbox = (await session.scalars(select(OutboundMessageRow))).all()
        api = bot.api
    assert content_of(answer) == "已记录：今天 18:00 前写会议纪要。"
    assert [(i.user_id, i.title, i.source_channel) for i in items] == [(owner, "写会议纪要", "agent")]
    assert outbox == [] and api.calls_to("message/custom/send") == []


async def test_llm_down_answers_an_apology_and_nothing_is_lost(database_url: str, clock: FrozenClock) -> None:
    async with FakeLLM() as llm, FakeWeChatAPI() as api:
        llm.fail(502, times=2)
        settings = config(api, database_url, AGENT_BASE_URL=llm.base_url, AGENT_API_KEY=llm.api_key,
                          AGENT_MODEL="fake-model", AGENT_MAX_RETRIES=1)
        app = create_app(settings, clock=clock, run_worker=False, reply_budget_s=2.0)
        async with running(app) as client:
            answer = await post(client, clock, "o-down", QUESTION, 7003)
            again = await post(client, clock, "o-down", QUESTION, 7003)  # WeChat's retry: the stored reply
            async with app.state.sessions() as session:
                history = (await session.scalars(select(AgentMessageRow))).all()
    assert content_of(answer) == APOLOGY and again == answer
    assert len(llm.requests) == 2 and history == []
