"""WeChatClient against the fake WeChat API: tokens, retries, sends. Most tests call the fake in process
(fakes/inprocess.py); the ones marked "over loopback" run the production aiohttp transport on real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.wechat.client import WeChatClient, template_client_msg_id
from bot.wechat.errors import FailureClass, PartialSendError, WeChatAPIError, WeChatTransportError
from bot.wechat.token_store import TokenStore, usable_until
from fakes.inprocess import InProcessTransport
from fakes.wechat import FakeWeChatAPI
from schedule.db import create_engine, session_factory
from schedule.testing import FrozenClock


@pytest.fixture
def api() -> FakeWeChatAPI:
    return FakeWeChatAPI(custom_msgid=True)  # called in process: no server


@pytest.fixture
async def served() -> AsyncIterator[FakeWeChatAPI]:
    async with FakeWeChatAPI(custom_msgid=True) as fake:  # on loopback HTTP
        yield fake


def make_client(api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock,
                **kwargs: object) -> WeChatClient:
    return WeChatClient(app_id=api.app_id, app_secret=api.app_secret, transport=InProcessTransport(api),
                        tokens=TokenStore(sessions, clock, f"wechat:{api.app_id}"), clock=clock, token_poll_s=0.01,
                        **kwargs)  # type: ignore[arg-type]


def http_client(api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock,
                **kwargs: object) -> WeChatClient:
    return WeChatClient.over_http(app_id=api.app_id, app_secret=api.app_secret, sessions=sessions, clock=clock,
                                  api_base=api.base_url, token_poll_s=0.01, **kwargs)  # type: ignore[arg-type]


async def test_cold_start_many_processes_make_one_token_request_over_loopback(
        served: FakeWeChatAPI, database_url: str, sessions: async_sessionmaker[AsyncSession],
        clock: FrozenClock) -> None:
    api = served
    engines = [create_engine(database_url) for _ in range(3)]  # three "processes" on one database
    clients = [http_client(api, session_factory(e), clock) for e in engines]
    try:
        tokens = await asyncio.gather(*(c.access_token() for c in clients for _ in range(8)))
    finally:
        for c in clients:
            await c.aclose()
        for e in engines:
            await e.dispose()
    assert len(api.calls_to("stable_token")) == 1
    assert len(set(tokens)) == 1


async def test_token_is_cached_and_refreshed_early(api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession],
                                                   clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    first = await client.access_token()
    clock.advance(seconds=7200 - 301)
    assert await client.access_token() == first
    assert len(api.calls_to("stable_token")) == 1
    clock.advance(seconds=2)  # inside the 300 s early-refresh margin
    await client.access_token()
    assert len(api.calls_to("stable_token")) == 2
    await client.aclose()


def test_usable_until_margin() -> None:
    assert usable_until(0, 7200) == 6900 * 1000
    assert usable_until(0, 200) == 100 * 1000  # short-lived tokens keep half their life


async def test_revoked_token_refreshes_once_and_retries_once_over_loopback(
        served: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    api = served
    client = http_client(api, sessions, clock)
    await client.access_token()
    api.revoke_tokens()
    parts = await client.send_text("o-user", "你好")
    assert len(parts) == 1
    sends = api.calls_to("message/custom/send")
    assert [c.answer["errcode"] for c in sends] == [40001, 0]
    assert len(api.calls_to("stable_token")) == 2
    assert sends[0].access_token != sends[1].access_token
    await client.aclose()


async def test_scripted_40001_forces_a_refresh_when_the_same_token_comes_back(
        api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    api.script("message/custom/typing", 40001)
    await client.typing("o-user")
    token_calls = api.calls_to("stable_token")
    assert [bool(c.body.get("force_refresh")) for c in token_calls] == [False, True]  # ≤ 2 calls per refresh
    assert len(api.calls_to("message/custom/typing")) == 2
    await client.aclose()


@pytest.mark.parametrize("errcode", [40001, 40014, 42001])
async def test_persistent_auth_error_fails_without_looping(
        api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock, errcode: int) -> None:
    client = make_client(api, sessions, clock)
    api.script("message/custom/send", errcode, errcode, errcode, errcode)
    with pytest.raises(WeChatAPIError) as info:
        await client.send_text("o-user", "hi")
    assert info.value.failure is FailureClass.AUTH and info.value.errcode == errcode
    assert len(api.calls_to("message/custom/send")) == 2
    await client.aclose()


async def test_long_text_is_split_with_a_receipt_per_part(
        api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    text = "提醒事项" * 400  # 4800 bytes
    parts = await client.send_text("o-user", text)
    bodies = [c.body["text"]["content"] for c in api.calls_to("message/custom/send")]
    assert len(parts) == 3 and "".join(bodies) == text
    assert all(len(b.encode("utf-8")) <= 2048 for b in bodies)
    assert [p.index for p in parts] == [0, 1, 2] and all(p.msgid for p in parts)
    replay = await client.send_text("o-user", text, skip_parts=frozenset({0, 2}))
    assert [p.index for p in replay] == [1]
    await client.aclose()


async def test_failure_mid_way_reports_the_parts_sent(
        api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    api.script("message/custom/send", 0, 45015)
    with pytest.raises(PartialSendError) as info:
        await client.send_text("o-user", "好" * 1500)
    assert info.value.failure is FailureClass.WINDOW
    assert [index for index, _ in info.value.sent] == [0]
    await client.aclose()


async def test_template_send_uses_a_deterministic_client_msg_id(
        api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    cid = template_client_msg_id("reminder:42:1718676000000")
    assert cid == template_client_msg_id("reminder:42:1718676000000") and len(cid) <= 64
    data = {"thing1": {"value": "会议"}}
    first = await client.send_template("o-user", "TPL", data, client_msg_id=cid, url="https://x/p")
    again = await client.send_template("o-user", "TPL", data, client_msg_id=cid)
    assert first is not None and first == again
    body = api.calls_to("message/template/send")[0].body
    assert body["client_msg_id"] == cid and body["template_id"] == "TPL" and body["url"] == "https://x/p"
    await client.aclose()


async def test_typing_body(api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession],
                           clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    await client.typing("o-user")
    assert api.calls_to("message/custom/typing")[0].body == {"touser": "o-user", "command": "Typing"}
    await client.aclose()


@pytest.mark.parametrize(("errcode", "failure"), [(-1, FailureClass.TRANSIENT), (45011, FailureClass.RATE_LIMIT),
                                                  (43004, FailureClass.GONE), (47003, FailureClass.INVALID_PAYLOAD),
                                                  (40037, FailureClass.CONFIG)])
async def test_business_errcodes_raise_classified_errors(
        api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock,
        errcode: int, failure: FailureClass) -> None:
    client = make_client(api, sessions, clock)
    api.script("message/custom/send", errcode)
    with pytest.raises(WeChatAPIError) as info:
        await client.send_text("o-user", "hi")
    assert info.value.failure is failure
    assert len(api.calls_to("message/custom/send")) == 1  # only auth errors are retried here
    await client.aclose()


async def test_timeout_is_transient_over_loopback(served: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession],
                                                 clock: FrozenClock) -> None:
    api = served
    client = http_client(api, sessions, clock, timeout=0.2)
    await client.access_token()
    api.set_latency("message/custom/send", 1.0)
    with pytest.raises(WeChatTransportError) as info:
        await client.send_text("o-user", "hi")
    assert info.value.failure is FailureClass.TRANSIENT
    await client.aclose()


async def test_unreachable_api_is_transient(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    client = WeChatClient.over_http(app_id="wx", app_secret="s", sessions=sessions, clock=clock,
                                    api_base="http://127.0.0.1:9", timeout=1.0)
    with pytest.raises(WeChatTransportError):
        await client.access_token()
    await client.aclose()


async def test_bad_secret_fails_and_releases_the_lease(
        api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    client = WeChatClient(app_id=api.app_id, app_secret="wrong", transport=InProcessTransport(api),
                          tokens=TokenStore(sessions, clock, f"wechat:{api.app_id}"), clock=clock, token_poll_s=0.01,
                          token_wait_polls=5)
    for _ in range(2):  # the second attempt can lease again (no stuck lease) but the API is paused
        with pytest.raises(WeChatAPIError) as info:
            await client.access_token()
        assert info.value.errcode == 40125
    assert len(api.calls_to("stable_token")) == 1
    clock.advance(seconds=601)  # after the configuration pause: one more real try, still refused
    with pytest.raises(WeChatAPIError):
        await client.access_token()
    assert len(api.calls_to("stable_token")) == 2
    await client.aclose()


async def test_clock_drives_token_expiry_not_the_wall(api: FakeWeChatAPI, sessions: async_sessionmaker[AsyncSession],
                                                      clock: FrozenClock) -> None:
    client = make_client(api, sessions, clock)
    await client.access_token()
    clock.advance(timedelta(hours=3))
    await client.access_token()
    assert len(api.calls_to("stable_token")) == 2
    await client.aclose()
