"""Subscription messages (订阅通知) as a rung of the ladder, through the real webhook and worker with the
fake WeChat API: a grant lets a far-off reminder out by `bizsend` and is spent; a refused or spent grant, or a
user WeChat says refuses the template, falls to the next rung."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
import xmltodict
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import select

from bot.settings import Settings
from bot.web.app import create_app
from fakes.wechat import FakeWeChatAPI, grant_event, sign_request, text_message
from render.subscribe import HINT
from schedule.model import OutboundMessageRow, SubscribeGrantRow
from schedule.testing import FrozenClock

TOKEN = "subtoken"
TEMPLATE = "tmpl-subscribe-reminder"
_IDS = itertools.count(5000)


def config(api: FakeWeChatAPI, database_url: str, **extra: object) -> Settings:
    return Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN=TOKEN, WECHAT_APP_ID=api.app_id,  # type: ignore[call-arg]
                    WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url,
                    WECHAT_SUBSCRIBE_TEMPLATE_ID=TEMPLATE, **extra)


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                       base_url="http://t") as client:
        yield client


async def post(client: httpx.AsyncClient, clock: FrozenClock, body: str) -> None:
    params = sign_request(TOKEN, timestamp=int(clock.now().timestamp()), nonce=f"n{next(_IDS)}")
    response = await client.post("/wechat", params=params, content=body)
    assert response.status_code == 200


async def say(client: httpx.AsyncClient, clock: FrozenClock, text: str, openid: str = "o-sub") -> None:
    await post(client, clock, text_message(openid, text, msg_id=next(_IDS), create_time=1))


async def grant(client: httpx.AsyncClient, clock: FrozenClock, event: str, status: str,
                openid: str = "o-sub") -> None:
    await post(client, clock, grant_event(openid, event, [(TEMPLATE, status)], create_time=next(_IDS)))


async def drain(app: FastAPI) -> None:
    for _ in range(4):  # a window-closed row falls one rung a pass
        await app.state.worker.run_once()


async def outbox(app: FastAPI) -> list[tuple[str, str, str]]:
    async with app.state.sessions() as session:
        rows = (await session.scalars(select(OutboundMessageRow).where(OutboundMessageRow.kind == "reminder")
                                      .order_by(OutboundMessageRow.id))).all()
    return [(str(r.payload.get("title")), r.channel, r.status) for r in rows]


async def grants(app: FastAPI) -> list[tuple[str, str, int]]:
    async with app.state.sessions() as session:
        rows = (await session.scalars(select(SubscribeGrantRow))).all()
    return [(r.template_id, r.status, r.remaining) for r in rows]


async def test_a_grant_sends_a_far_off_reminder_by_bizsend_once_then_the_next_falls_down(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "下周三上午九点提醒我交材料")
            await say(client, clock, "下周四上午九点提醒我交房租")
            await grant(client, clock, "subscribe_msg_popup_event", "accept")
            assert await grants(app) == [(TEMPLATE, "accept", 1)]
            clock.advance(timedelta(days=6))  # Wednesday 09:00 next week: the 48-hour window is long closed
            await drain(app)
            assert await grants(app) == [(TEMPLATE, "accept", 0)]  # the one-time grant is spent
            clock.advance(timedelta(days=1))
            await drain(app)
            assert await outbox(app) == [("交材料", "subscribe", "sent"), ("交房租", "inapp", "pending")]
    [sent] = api.calls_to("message/subscribe/bizsend")
    assert sent.body["touser"] == "o-sub" and sent.body["template_id"] == TEMPLATE
    assert sent.body["data"]["thing1"] == {"value": "交材料"}
    assert api.calls_to("message/custom/send") == []


async def test_a_refused_grant_or_a_user_who_blocks_the_template_falls_to_the_next_rung(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "下周三上午九点提醒我交材料")
            await grant(client, clock, "subscribe_msg_popup_event", "accept")
            await grant(client, clock, "subscribe_msg_change_event", "reject")  # changed their mind in settings
            assert await grants(app) == [(TEMPLATE, "reject", 0)]
            await say(client, clock, "下周四上午九点提醒我交房租")
            await grant(client, clock, "subscribe_msg_popup_event", "accept")  # accepted again
            api.refusing.add("o-sub")  # …but WeChat says the user blocks it (43101)
            clock.advance(timedelta(days=6))
            await drain(app)
            assert await grants(app) == [(TEMPLATE, "reject", 0)]
            clock.advance(timedelta(days=1))
            await drain(app)
            reminders = await outbox(app)
    assert reminders == [("交材料", "inapp", "pending"), ("交房租", "inapp", "pending")]
    assert len(api.calls_to("message/subscribe/bizsend")) == 1  # only the one WeChat refused


async def test_a_sent_event_reporting_a_block_stops_the_template(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            await grant(client, clock, "subscribe_msg_popup_event", "accept")
            await grant(client, clock, "subscribe_msg_popup_event", "accept")
            assert await grants(app) == [(TEMPLATE, "accept", 2)]
            await grant(client, clock, "subscribe_msg_sent_event", "success")
            assert await grants(app) == [(TEMPLATE, "accept", 2)]
            await grant(client, clock, "subscribe_msg_sent_event", "failed:user block")
            assert await grants(app) == [(TEMPLATE, "reject", 0)]


async def test_a_reminder_beyond_the_window_says_once_how_to_make_sure_it_arrives(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            near = await ask(client, clock, "明天上午九点提醒我交材料")
            far = await ask(client, clock, "下周三上午九点提醒我交房租")
            again = await ask(client, clock, "下周四上午九点提醒我买票")
            await grant(client, clock, "subscribe_msg_popup_event", "accept")  # the asked row becomes a grant
            assert await grants(app) == [(TEMPLATE, "accept", 1)]
    assert "订阅通知" not in near
    assert far.startswith("已记录") and far.endswith(HINT)
    assert "订阅通知" not in again


async def ask(client: httpx.AsyncClient, clock: FrozenClock, text: str) -> str:
    params = sign_request(TOKEN, timestamp=int(clock.now().timestamp()), nonce=f"n{next(_IDS)}")
    response = await client.post("/wechat", params=params,
                                 content=text_message("o-sub", text, msg_id=next(_IDS), create_time=1))
    return str(xmltodict.parse(response.text)["xml"]["Content"])
