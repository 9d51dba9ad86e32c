"""已记录 means the row exists, whatever the optional settings: webhook → rows over every setting that changes
the conversation path (the reminder template, the subscribe template, the agent, PUBLIC_BASE_URL), on every
backend. After each message the reply is checked against the rows it claims, and no inbound row is left
`processing`."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
import pytest
import xmltodict
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import select

from bot.settings import Settings
from bot.web.app import create_app
from fakes.llm import FakeLLM
from fakes.wechat import FakeWeChatAPI, sign_request, text_message
from schedule.model import DigestSubscriptionRow, InboundMessageRow, ReminderRow, ScheduleItemRow
from schedule.testing import FrozenClock

TOKEN = "matrixtoken"
_IDS = itertools.count(70_000)
SETTINGS = [
    pytest.param(template, subscribe, agent, public, id=f"tpl{int(template)}-sub{int(subscribe)}-agent{int(agent)}"
                 f"-public{int(public)}")
    for template, subscribe, agent, public in itertools.product((False, True), repeat=4)
]


@asynccontextmanager
async def bot(database_url: str, clock: FrozenClock, *, template: bool, subscribe: bool, agent: bool,
              public: bool) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    async with AsyncExitStack() as stack:
        api = await stack.enter_async_context(FakeWeChatAPI())
        extra: dict[str, Any] = {}
        if template:
            extra["WECHAT_TEMPLATE_ID_REMINDER"] = "tmpl-reminder"
        if subscribe:
            extra["WECHAT_SUBSCRIBE_TEMPLATE_ID"] = "tmpl-subscribe"
        if agent:
            llm = await stack.enter_async_context(FakeLLM(default_reply="我是助手。"))
            extra |= {"AGENT_BASE_URL": llm.base_url, "AGENT_API_KEY": llm.api_key, "AGENT_MODEL": "fake-model",
                      "AGENT_MAX_RETRIES": 0}
        if public:
            extra["PUBLIC_BASE_URL"] = "https://bot.example.com"
        settings = Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN=TOKEN,  # type: ignore[call-arg]
                            WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url,
                            **extra)
        app = create_app(settings, clock=clock, run_worker=False)
        await stack.enter_async_context(LifespanManager(app))
        client = await stack.enter_async_context(
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t"))
        yield app, client


async def say(client: httpx.AsyncClient, clock: FrozenClock, text: str) -> str:
    msg_id = next(_IDS)
    params = sign_request(TOKEN, timestamp=int(clock.now().timestamp()), nonce=f"m{msg_id}")
    response = await client.post("/wechat", params=params,
                                 content=text_message("o-matrix", text, msg_id=msg_id, create_time=1))
    assert response.status_code == 200
    return str(xmltodict.parse(response.text)["xml"]["Content"])


async def rows(app: FastAPI) -> dict[str, Any]:
    async with app.state.sessions() as session:
        items = (await session.scalars(select(ScheduleItemRow).order_by(ScheduleItemRow.id))).all()
        reminders = (await session.scalars(select(ReminderRow).order_by(ReminderRow.id))).all()
        digests = (await session.scalars(select(DigestSubscriptionRow))).all()
        unfinished = (await session.scalars(select(InboundMessageRow.id)
                                            .where(InboundMessageRow.status != "done"))).all()
    return {"items": [(i.title, i.status, i.start_at or i.due_at) for i in items],
            "reminders": [(r.item_id, r.remind_at, r.status) for r in reminders],
            "digests": [(d.kind, d.local_time, d.status) for d in digests], "unfinished": list(unfinished)}


def ms(iso: str) -> int:
    from datetime import datetime
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


@pytest.mark.parametrize(("template", "subscribe", "agent", "public"), SETTINGS)
async def test_every_reply_that_says_stored_changed_or_cancelled_matches_the_rows(
        database_url: str, clock: FrozenClock, template: bool, subscribe: bool, agent: bool, public: bool) -> None:
    async with bot(database_url, clock, template=template, subscribe=subscribe, agent=agent, public=public) as (
            app, client):
        near = await say(client, clock, "明天下午三点开会")  # its reminder falls within 48 h
        assert near.startswith("已记录") and "6月19日（周五）15:00" in near
        state = await rows(app)
        assert state["items"] == [("开会", "active", ms("2026-06-19T15:00+08:00"))]
        assert [r[1:] for r in state["reminders"]] == [(ms("2026-06-19T14:00+08:00"), "pending")]
        assert state["unfinished"] == []

        far = await say(client, clock, "下周三上午九点提醒我交房租")  # beyond the 48-hour window
        assert far.startswith("已记录") and "6月24日（周三）09:00" in far
        state = await rows(app)
        assert state["items"][1] == ("交房租", "active", ms("2026-06-24T09:00+08:00"))
        assert state["unfinished"] == []

        moved = await say(client, clock, "不对，是十点")
        assert moved.startswith("已改好") and "6月24日（周三）10:00" in moved
        state = await rows(app)
        assert state["items"][1] == ("交房租", "active", ms("2026-06-24T10:00+08:00"))
        assert (state["items"][1] and [r for r in state["reminders"] if r[2] == "pending"][-1][1]
                == ms("2026-06-24T10:00+08:00"))

        cancelled = await say(client, clock, "取消吧")
        assert cancelled.startswith("已取消")
        state = await rows(app)
        assert state["items"][1][1] == "cancelled"
        assert state["items"][0][1] == "active"

        digest = await say(client, clock, "每天早上7点给我发当天待办")
        assert "07:00" in digest
        assert (await rows(app))["digests"] == [("todo_day", "07:00", "active")]

        listed = await say(client, clock, "明天有什么安排")
        assert "开会" in listed
        other = await say(client, clock, "明天会下雨吗")
        assert other
        state = await rows(app)
        assert len(state["items"]) == 2 and state["unfinished"] == []
