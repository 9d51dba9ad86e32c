"""End to end through `create_app` (middleware, lifespan migrations) with the fake WeChat API on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import xmltodict
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import select
from webhook_helpers import RecordingHandler, settings, signed

from bot.web.app import create_app
from bot.wechat.endpoint import WeChatRouter
from fakes.wechat import FakeWeChatAPI, event_message, text_message
from schedule.db import create_engine
from schedule.model import OutboundMessageRow, UserRow
from schedule.testing import FrozenClock


@asynccontextmanager
async def wechat_app(database_url: str, clock: FrozenClock, handler: RecordingHandler, api: FakeWeChatAPI,
                     reply_budget_s: float = 4.0) -> AsyncIterator[tuple[FastAPI, WeChatRouter]]:
    config = settings(WECHAT_API_BASE=api.base_url, WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret,
                      DATABASE_URL=database_url)
    engine = create_engine(database_url)
    app = create_app(config, clock=clock, handler=handler, engine=engine, reply_budget_s=reply_budget_s)
    router: WeChatRouter = app.state.wechat_router
    try:
        async with LifespanManager(app):
            yield app, router
    finally:
        await engine.dispose()  # the caller's engine: the app closed only what it built


async def test_conversation_through_the_real_app(database_url: str, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="好的")
    async with FakeWeChatAPI() as api, wechat_app(database_url, clock, handler, api) as (app, _router), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        greet = await client.post("/wechat", params=signed(clock),
                                  content=event_message("o-e2e", "subscribe", create_time=1))
        body = text_message("o-e2e", "明天下午三点开会", msg_id=777, create_time=2)
        first, retry = [await client.post("/wechat", params=signed(clock, f"n{i}"), content=body) for i in range(2)]
        big = await client.post("/wechat", params=signed(clock), content=b"<xml>" + b"x" * 70_000)
        assert "日程助手" in xmltodict.parse(greet.text)["xml"]["Content"]
        assert first.text == retry.text and xmltodict.parse(first.text)["xml"]["Content"] == "好的"
        assert big.status_code == 413
    assert len(handler.seen) == 1


async def test_slow_answer_through_the_real_app(database_url: str, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="想好了", delay_s=0.3)
    async with FakeWeChatAPI() as api:
        async with wechat_app(database_url, clock, handler, api, reply_budget_s=0.05) as (app, router), \
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            r = await client.post("/wechat", params=signed(clock),
                                  content=text_message("o-slow-e2e", "慢", msg_id=778, create_time=1))
            assert r.text == "success"
            await router.dispatcher.drain()
            async with app.state.sessions() as session:
                row = (await session.scalars(select(OutboundMessageRow))).one()
                user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-slow-e2e"))
        assert row.payload["text"] == "想好了" and user is not None and row.user_id == user.id
        await asyncio.sleep(0)
        assert len(api.calls_to("message/custom/typing")) == 1


async def test_wechat_callbacks_skip_the_framework_stack_and_keep_request_ids(database_url: str,
                                                                              clock: FrozenClock) -> None:
    """/wechat is answered before the framework's middleware stack, with the request id, access line and 413
    every request gets; other paths and methods take the framework."""
    handler = RecordingHandler(reply="好的")
    async with FakeWeChatAPI() as api, wechat_app(database_url, clock, handler, api) as (app, _router), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        framework, entered = app.middleware_stack, []  # built by the lifespan already

        async def recording(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
            entered.append((scope["method"], scope["path"]))
            await framework(scope, receive, send)  # type: ignore[misc, arg-type]

        app.middleware_stack = recording  # type: ignore[assignment]
        body = text_message("o-first", "明天下午三点开会", msg_id=778, create_time=2)
        answer = await client.post("/wechat", params=signed(clock), content=body,
                                   headers={"X-Request-ID": "req-wechat-1"})
        big = await client.post("/wechat", params=signed(clock), content=b"<xml>" + b"x" * 70_000)
        assert xmltodict.parse(answer.text)["xml"]["Content"] == "好的"
        assert answer.headers["x-request-id"] == "req-wechat-1"
        assert big.status_code == 413 and big.json() == {"detail": "request body too large"}
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.put("/wechat")).status_code == 405  # the framework's answer to other methods
    assert entered == [("GET", "/healthz"), ("PUT", "/wechat")]


async def test_an_error_escaping_the_wechat_path_is_a_plain_500(database_url: str, clock: FrozenClock,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    async with FakeWeChatAPI() as api, wechat_app(database_url, clock, RecordingHandler(), api) as (app, router), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        async def broken(*_args: object) -> object:
            raise RuntimeError("boom inside")

        router.endpoint.receive = broken  # type: ignore[method-assign]
        r = await client.post("/wechat", params=signed(clock), content=b"<xml></xml>")
    assert r.status_code == 500 and r.json() == {"detail": "internal error"}
    assert "boom inside" not in r.text and "unhandled error on POST /wechat" in caplog.text
