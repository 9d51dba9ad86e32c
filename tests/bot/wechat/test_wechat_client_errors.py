"""WeChat edge outbound regressions: a persistent 40001 spends one forced refresh a minute, configuration
errcodes pause the API and name the setting, Chinese JSON goes out as raw UTF-8."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.settings import Settings
from bot.web.app import create_app
from bot.wechat.client import WeChatClient
from bot.wechat.errors import FailureClass, WeChatAPIError, WeChatError
from fakes.wechat import FakeWeChatAPI
from schedule import outbox, window
from schedule.clock import now_ms
from schedule.db import create_engine, session_factory
from schedule.model import OutboundMessageRow
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]


@pytest.fixture
async def api() -> AsyncIterator[FakeWeChatAPI]:
    async with FakeWeChatAPI() as fake:
        yield fake


def make_client(api: FakeWeChatAPI, sessions: Sessions, clock: FrozenClock, **kwargs: object) -> WeChatClient:
    return WeChatClient.over_http(app_id=api.app_id, app_secret=api.app_secret, sessions=sessions, clock=clock,
                                  api_base=api.base_url, token_poll_s=0.01, **kwargs)  # type: ignore[arg-type]


def forced(api: FakeWeChatAPI) -> int:
    return sum(bool(c.body.get("force_refresh")) for c in api.calls_to("stable_token"))


async def test_persistent_40001_spends_one_forced_refresh_a_minute(api: FakeWeChatAPI, database_url: str,
                                                                   engine: object, clock: FrozenClock) -> None:
    engines = [create_engine(database_url) for _ in range(2)]  # two worker processes, one token store
    clients = [make_client(api, session_factory(e), clock) for e in engines]
    api.script("message/custom/send", *([40001] * 20))
    try:
        for row in range(6):  # six queued rows, alternating between the processes
            with pytest.raises(WeChatAPIError) as info:
                await clients[row % 2].send_text(f"o-{row}", "提醒")
            assert info.value.failure is FailureClass.AUTH
        assert forced(api) == 1
        clock.advance(seconds=61)
        with pytest.raises(WeChatAPIError):
            await clients[0].send_text("o-later", "提醒")
        assert forced(api) == 2
    finally:
        for c in clients:
            await c.aclose()
        for e in engines:
            await e.dispose()


@pytest.mark.parametrize(("errcode", "setting"), [(40013, "WECHAT_APP_ID"), (40125, "WECHAT_APP_SECRET"),
                                                  (40164, "IP")])
async def test_configuration_errcode_pauses_the_api_and_names_the_setting(
        api: FakeWeChatAPI, sessions: Sessions, clock: FrozenClock, caplog: pytest.LogCaptureFixture,
        errcode: int, setting: str) -> None:
    client = make_client(api, sessions, clock, config_pause_s=600)
    api.script("stable_token", errcode)  # once: a client that calls again gets a token and does not raise
    with caplog.at_level(logging.ERROR, logger="bot.wechat.client"):
        for row in range(3):
            with pytest.raises(WeChatAPIError) as info:
                await client.send_text(f"o-{row}", "提醒")
            assert info.value.errcode == errcode and not info.value.rule.until_tomorrow
            assert info.value.failure is FailureClass.CONFIG and (info.value.rule.retry_after_s or 0) >= 600
    assert len(api.calls_to("stable_token")) == 1  # not 3 rows x 5 attempts
    lines = [r.getMessage() for r in caplog.records if "misconfigured" in r.getMessage()]
    assert len(lines) == 1 and setting in lines[0]
    assert client.misconfigured is not None and setting in client.misconfigured
    if errcode == 40164:
        assert "whitelist 127.0.0.1" in client.misconfigured
    clock.advance(seconds=601)  # the operator fixed it: the next call goes out and succeeds
    await client.send_text("o-fixed", "提醒")
    assert client.misconfigured is None
    await client.aclose()


async def test_chinese_custom_message_goes_out_as_raw_utf8(api: FakeWeChatAPI, sessions: Sessions,
                                                           clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    await client.send_text("o-zh", "明天上午九点带材料")
    await client.aclose()
    body = api.calls_to("message/custom/send")[0].raw
    assert "明天上午九点带材料".encode() in body and b"\\u" not in body
    assert api.calls_to("message/custom/send")[0].body["text"]["content"] == "明天上午九点带材料"


async def test_ip_not_whitelisted_three_rows_one_token_call_and_healthz_says_so(database_url: str,
                                                                                  clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        api.script("stable_token", 40164)
        config = Settings(_env_file=None, WECHAT_API_BASE=api.base_url,  # type: ignore[call-arg]
                          WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret, WECHAT_TOKEN="t",
                          DATABASE_URL=database_url)
        app = create_app(config, clock=clock, run_worker=False)
        async with LifespanManager(app):
            rows = []
            for n in range(3):
                user = await app.state.service.get_or_create_user(f"o-{n}")
                async with app.state.sessions.begin() as session:
                    await window.record_message(session, user.id, now_ms(clock))
                    row = await outbox.enqueue(session, user_id=user.id, idempotency_key=f"k{n}", kind="notice",
                                               payload={"text": "提醒"}, now_ms=now_ms(clock))
                    rows.append(row.id)
            await app.state.worker.run_once()
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
                health = (await http.get("/healthz")).json()
            async with app.state.sessions() as session:
                states = [(r.status, r.next_attempt_at - now_ms(clock)) for r in
                          [await session.get(OutboundMessageRow, i) for i in rows] if r is not None]
    assert len(api.calls_to("stable_token")) == 1
    assert health == {"status": "degraded", "database": "ok"}  # public: no errcode, no server IP
    assert all(status == "pending" and wait >= 600_000 for status, wait in states)


async def test_45002_resends_the_part_in_halves_once(api: FakeWeChatAPI, sessions: Sessions,
                                                     clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    text = "明天上午九点带材料，" * 60  # 1800 bytes: one part by our count, "too long" by WeChat's
    api.script("message/custom/send", 45002)
    parts = await client.send_text("o-long", text)
    contents = [c.body["text"]["content"] for c in api.calls_to("message/custom/send")]
    assert len(contents) == 3 and contents[0] == text and "".join(contents[1:]) == text
    assert all(len(c.encode()) <= 900 for c in contents[1:]) and len(parts) == 1
    await client.aclose()


async def test_45002_after_halving_fails_without_a_retry(api: FakeWeChatAPI, sessions: Sessions,
                                                         clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    api.script("message/custom/send", 45002, 45002)
    with pytest.raises(WeChatError) as info:
        await client.send_text("o-long", "提醒" * 300)
    assert info.value.failure is FailureClass.INVALID_PAYLOAD and not info.value.retryable
    assert info.value.errcode is None  # so the retry policy does not resend the same payload five times
    assert len(api.calls_to("message/custom/send")) == 2
    await client.aclose()
