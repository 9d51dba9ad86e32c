"""The JS-SDK for our pages: WeChat's published signature vector, one `getticket` per expiry across
processes, and `/wechat/jssdk` answering a correctly signed `wx.config` for our own pages only."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from datetime import timedelta

import httpx
import pytest
from asgi_lifespan import LifespanManager

from bot.settings import Settings
from bot.web.app import create_app
from bot.wechat.client import WeChatClient
from bot.wechat.jsapi import JsApiTickets, signature
from fakes.wechat import FakeWeChatAPI, signed_in
from schedule.clock import now_ms
from schedule.db import create_engine, session_factory
from schedule.testing import FrozenClock

PAGE = "https://bot.example.com/p/abc?x=1"


def test_the_signature_matches_wechats_published_example() -> None:
    ticket = "sM4AOVdWfPE4DxkXGEs8VMCPGGVi4C3VM0P37wVUCFvkVAy_90u5h9nbSlYy3-Sl-HhTdfl2fzFy1AOcHKP7qg"
    assert signature(ticket, nonce="Wm3WZYTPz0wzccnW", timestamp=1414587457,
                     url="http://mp.weixin.qq.com?params=value") == "0f9de62fce790f9a083d5c99e95740ceb90c27ed"
    assert signature("t", nonce="n", timestamp=1, url=PAGE + "#top") == signature("t", nonce="n", timestamp=1,
                                                                                   url=PAGE)


async def test_the_page_gets_a_signed_config_and_the_ticket_is_fetched_once_per_expiry(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        settings = Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN="t",  # type: ignore[call-arg]
                            WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url,
                            PUBLIC_BASE_URL="https://bot.example.com")
        app = create_app(settings, clock=clock, run_worker=False)
        async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                           base_url="http://t") as client:
            answer = (await client.get("/wechat/jssdk", params={"url": PAGE})).json()
            again = (await client.get("/wechat/jssdk", params={"url": PAGE})).json()
            foreign = await client.get("/wechat/jssdk", params={"url": "https://evil.example.com/p"})
            # another process on the same database reuses the stored ticket
            engine = create_engine(database_url)
            sessions = session_factory(engine)
            other_client = WeChatClient.over_http(app_id=api.app_id, app_secret=api.app_secret,
                                                  sessions=sessions, clock=clock, api_base=api.base_url)
            try:
                other = JsApiTickets(other_client, sessions, clock)
                assert await other.ticket() == "FAKE_TICKET_1"
                clock.advance(timedelta(hours=2))  # past the ticket's 7200 s (less the early-refresh margin)
                assert await other.ticket() == "FAKE_TICKET_2"
            finally:
                await other_client.aclose()
                await engine.dispose()
    assert answer["appId"] == api.app_id and answer["openTagList"] == ["wx-open-subscribe"]
    assert answer["signature"] == signature("FAKE_TICKET_1", nonce=answer["nonceStr"],
                                            timestamp=answer["timestamp"], url=PAGE)
    assert answer["timestamp"] == int(clock.now().timestamp()) - 7200
    assert again["nonceStr"] != answer["nonceStr"]
    assert foreign.status_code == 404
    [call, _] = api.calls_to("ticket/getticket")
    assert call.access_token is not None and call.answer["ticket"] == "FAKE_TICKET_1"


async def test_the_private_page_carries_the_subscribe_button_with_a_signed_wx_config(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        settings = Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN="t",  # type: ignore[call-arg]
                            WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url,
                            PUBLIC_BASE_URL="https://bot.example.com", WECHAT_SUBSCRIBE_TEMPLATE_ID="tmpl-sub")
        app = create_app(settings, clock=clock, run_worker=False)
        async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                           base_url="http://t") as client:
            user = await app.state.service.get_or_create_user("o-page")
            url = await app.state.page_links.itinerary_url(user.id)
            owner = await signed_in(app.state.page_links, "o-page", now_ms=now_ms(clock))  # the button is the owner's
            response = await client.get(url.removeprefix("https://bot.example.com"), headers=owner)
    assert response.status_code == 200
    html = response.text
    assert '<wx-open-subscribe template="tmpl-sub"' in html and "接收提醒通知" in html
    config = json.loads(re.search(r"wx\.config\((\{.*?\})\);", html).group(1))  # type: ignore[union-attr]
    assert config["appId"] == api.app_id and config["openTagList"] == ["wx-open-subscribe"]
    assert config["signature"] == signature("FAKE_TICKET_1", nonce=config["nonceStr"], timestamp=config["timestamp"],
                                            url=url)
    nonce = re.search(r'<script nonce="([^"]+)">', html).group(1)  # type: ignore[union-attr]
    assert f"script-src https://res.wx.qq.com 'nonce-{nonce}'" in response.headers["content-security-policy"]


async def test_while_the_ticket_is_unavailable_requests_make_no_call_for_a_minute(
        database_url: str, clock: FrozenClock) -> None:
    """WeChat cannot answer `getticket` (-1: system busy): the pages and /wechat/jssdk asked for in the next
    60 s get the same answer without another call; after that, one call tries again."""
    async with FakeWeChatAPI() as api:
        settings = Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN="t",  # type: ignore[call-arg]
                            WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url,
                            PUBLIC_BASE_URL="https://bot.example.com", WECHAT_SUBSCRIBE_TEMPLATE_ID="tmpl-sub")
        api.script("ticket/getticket", -1, -1)
        app = create_app(settings, clock=clock, run_worker=False)
        async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                           base_url="http://t") as client:
            user = await app.state.service.get_or_create_user("o-page")
            page = (await app.state.page_links.itinerary_url(user.id)).removeprefix("https://bot.example.com")
            owner = await signed_in(app.state.page_links, "o-page", now_ms=now_ms(clock))

            async def burst() -> list[int]:
                asked = [client.get("/wechat/jssdk", params={"url": PAGE}) for _ in range(8)]
                answers = await asyncio.gather(*asked, client.get(page, headers=owner), client.get(page, headers=owner))
                return [a.status_code for a in answers]

            first = await burst()
            clock.advance(timedelta(seconds=59))
            still = await burst()
            calls_in_the_first_minute = len(api.calls_to("ticket/getticket"))
            clock.advance(timedelta(seconds=2))
            retried = await burst()
            clock.advance(timedelta(seconds=61))
            recovered = await burst()
            pages = [await client.get(page, headers=owner) for _ in range(3)]
    assert first == still == retried == [503] * 8 + [200, 200]  # the page shows, without its 订阅通知 button
    assert calls_in_the_first_minute == 1
    assert [c.answer["errcode"] for c in api.calls_to("ticket/getticket")] == [-1, -1, 0]
    assert recovered == [200] * 10 and all("wx-open-subscribe" in p.text for p in pages)


async def test_an_ip_whitelist_error_from_getticket_is_an_incident_like_the_others(
        database_url: str, clock: FrozenClock, caplog: pytest.LogCaptureFixture) -> None:
    async with FakeWeChatAPI() as api:
        settings = Settings(_env_file=None, DATABASE_URL=database_url, WECHAT_TOKEN="t",  # type: ignore[call-arg]
                            WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret, WECHAT_API_BASE=api.base_url,
                            PUBLIC_BASE_URL="https://bot.example.com")
        app = create_app(settings, clock=clock, run_worker=False)
        api.script("ticket/getticket", 40164)  # the server's IP is off the whitelist
        async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                           base_url="http://t") as client:
            healthy = (await client.get("/healthz")).json()
            with caplog.at_level(logging.ERROR):
                refused = await client.get("/wechat/jssdk", params={"url": PAGE})
            degraded = (await client.get("/healthz")).json()
            misconfigured = app.state.wechat_client.misconfigured
            clock.advance(timedelta(seconds=61))  # past the ticket's own failure memory, within the pause
            paused = await client.get("/wechat/jssdk", params={"url": PAGE})
            calls_while_paused = len(api.calls_to("ticket/getticket"))
            clock.advance(timedelta(seconds=600))  # the pause over: one call, and the incident clears
            fixed = await client.get("/wechat/jssdk", params={"url": PAGE})
            cleared = app.state.wechat_client.misconfigured
    assert healthy["status"] == "ok"
    assert refused.status_code == 503 and paused.status_code == 503 and calls_while_paused == 1
    assert fixed.status_code == 200 and cleared is None
    assert degraded == {"status": "degraded", "database": "ok"}
    assert misconfigured is not None and "whitelist 127.0.0.1" in misconfigured
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert "40164" in line and "IP白名单" in line
