"""The one WeChat client over an in-process transport (the fake WeChat API called in this event loop, no server):
GET and POST, the token refreshed once on an auth errcode, errcodes classified in one place, the JS-SDK ticket
and the account commands through the same calls, and no token in any error's text."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.wechat.admin import describe
from bot.wechat.client import BIZSEND, WeChatClient
from bot.wechat.errors import (
    FailureClass,
    WeChatAPIError,
    WeChatTransportError,
    parse_answer,
    rule_for,
    whitelist_ip,
)
from bot.wechat.jsapi import JsApiTickets
from bot.wechat.token_store import CachedToken, LeaseStore, ProcessStore, TokenStore
from fakes.inprocess import InProcessTransport
from fakes.wechat import TOKEN_PREFIX, FakeWeChatAPI
from schedule.clock import now_ms
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]


def client_on(app: ASGIApp, tokens: LeaseStore, clock: FrozenClock, *, timeout: float = 5.0,
              client_ip: str = "127.0.0.1") -> tuple[WeChatClient, InProcessTransport]:
    transport = InProcessTransport(app, timeout=timeout, client_ip=client_ip)
    return WeChatClient(app_id="wxtestappid", app_secret="testsecret", transport=transport, tokens=tokens,
                        clock=clock, token_poll_s=0.01), transport


def shared(sessions: Sessions, clock: FrozenClock) -> TokenStore:
    return TokenStore(sessions, clock, "wechat:wxtestappid")


async def test_get_and_post_go_to_their_paths_with_the_token(clock: FrozenClock) -> None:
    api = FakeWeChatAPI()
    api.subscribe_templates = [{"priTmplId": "sub1", "title": "日程提醒", "content": "", "type": 2}]
    client, transport = client_on(api, ProcessStore(clock), clock)
    await client.post("menu/create", {"button": [{"type": "click", "name": "今日", "key": "TODAY"}]})
    menu = await client.get("menu/get")
    templates = await client.get("/wxaapi/newtmpl/gettemplate")  # an API with a root of its own
    ticket = await client.get("ticket/getticket", {"type": "jsapi"})
    await client.aclose()

    assert menu["menu"]["button"][0]["name"] == "今日" and templates["data"][0]["priTmplId"] == "sub1"
    assert ticket["ticket"].startswith("FAKE_TICKET_")
    [(_, _, token_query), *calls] = transport.requests
    assert token_query == {}  # stable_token carries the secret in its body, no token in the URL
    token = api.calls_to("stable_token")[0].answer["access_token"]
    assert [(m, p) for m, p, _ in calls] == [("POST", "cgi-bin/menu/create"), ("GET", "cgi-bin/menu/get"),
                                            ("GET", "wxaapi/newtmpl/gettemplate"), ("GET", "cgi-bin/ticket/getticket")]
    assert all(q["access_token"] == token for _, _, q in calls) and calls[-1][2]["type"] == "jsapi"
    assert transport.closed


async def test_a_revoked_token_is_refreshed_once_and_the_call_retried(sessions: Sessions, clock: FrozenClock) -> None:
    api = FakeWeChatAPI()
    client, _ = client_on(api, shared(sessions, clock), clock)
    first = await client.access_token()
    api.revoke_tokens()
    await client.typing("o-user")
    typing = api.calls_to("message/custom/typing")
    assert [c.answer.get("errcode") for c in typing] == [40001, 0]
    assert typing[0].access_token == first and typing[1].access_token != first
    assert [bool(c.body.get("force_refresh")) for c in api.calls_to("stable_token")] == [False, True]


async def test_a_40001_the_same_token_cannot_cure_fails_after_one_refresh(sessions: Sessions,
                                                                         clock: FrozenClock) -> None:
    api = FakeWeChatAPI()
    client, _ = client_on(api, shared(sessions, clock), clock)
    api.script("menu/get", 40001, 40001, 40001)
    with pytest.raises(WeChatAPIError) as info:
        await client.get("menu/get")
    assert info.value.failure is FailureClass.AUTH
    assert len(api.calls_to("menu/get")) == 2  # one retry with the forced token, never a loop
    with pytest.raises(WeChatAPIError):  # within the minute: no second forced refresh, so no retry either
        await client.get("menu/get")
    assert len(api.calls_to("menu/get")) == 3
    assert sum(bool(c.body.get("force_refresh")) for c in api.calls_to("stable_token")) == 1


async def test_without_a_database_the_token_is_refetched_but_never_forced(clock: FrozenClock) -> None:
    api = FakeWeChatAPI()
    client, _ = client_on(api, ProcessStore(clock), clock)
    await client.access_token()
    api.menu = {"button": []}
    api.revoke_tokens()  # another caller forced a refresh: a plain stable_token hands out the new token
    assert (await client.get("menu/get"))["menu"]["button"] == []
    assert [c.answer.get("errcode") for c in api.calls_to("menu/get")] == [40001, None]
    api.script("menu/delete", 40001)  # but the same token back cannot help: no retry
    with pytest.raises(WeChatAPIError):
        await client.get("menu/delete")
    assert not any(c.body.get("force_refresh") for c in api.calls_to("stable_token"))
    assert len(api.calls_to("menu/delete")) == 1


@pytest.mark.parametrize(("errcode", "failure"), [(-1, FailureClass.TRANSIENT), (45011, FailureClass.RATE_LIMIT),
                                                  (45015, FailureClass.WINDOW), (43004, FailureClass.GONE),
                                                  (45002, FailureClass.INVALID_PAYLOAD), (40164, FailureClass.CONFIG),
                                                  (42001, FailureClass.AUTH), (99999, FailureClass.UNKNOWN)])
def test_one_reading_classifies_every_errcode(errcode: int, failure: FailureClass) -> None:
    body = f'{{"errcode": {errcode}, "errmsg": "why"}}'.encode()
    with pytest.raises(WeChatAPIError) as info:
        parse_answer("menu/get", 200, body)
    assert info.value.failure is failure and info.value.rule is rule_for(errcode)
    assert str(info.value) == f"menu/get: errcode {errcode} (why)"


@pytest.mark.parametrize(("status", "body", "message"), [
    (502, b"<html>bad gateway</html>", "HTTP 502"), (200, b"not json", "unreadable body (HTTP 200)"),
    (200, b"[1]", "body is not a JSON object"), (200, b'{"errcode": "x"}', "unreadable errcode (HTTP 200)")])
def test_answers_that_are_no_answer_are_transient(status: int, body: bytes, message: str) -> None:
    with pytest.raises(WeChatTransportError) as info:
        parse_answer("menu/get", status, body)
    assert str(info.value) == f"menu/get: {message}"
    assert info.value.failure is FailureClass.TRANSIENT and info.value.api == "menu/get"


def test_a_zero_errcode_is_data() -> None:
    assert parse_answer("x", 200, b'{"errcode": 0, "errmsg": "ok", "msgid": 7}')["msgid"] == 7


async def echo_the_url(scope: Scope, receive: Receive, send: Send) -> None:
    """A broken peer that answers with the request's own URL, token included (an HTML error page, say)."""
    page = f"<html>error at {scope['path']}?{scope['query_string'].decode()}</html>".encode()
    if scope["path"].endswith("stable_token"):
        page = b'{"access_token": "FAKE_TOKEN_SECRET_1", "expires_in": 7200}'
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": page})


async def test_no_error_text_carries_the_token(clock: FrozenClock) -> None:
    client, _ = client_on(echo_the_url, ProcessStore(clock), clock)
    with pytest.raises(WeChatTransportError) as unreadable:
        await client.typing("o-user")
    slow = FakeWeChatAPI()
    slow.set_latency(BIZSEND, 1.0)
    timed, _ = client_on(slow, ProcessStore(clock), clock, timeout=0.05)
    await timed.access_token()
    with pytest.raises(WeChatTransportError) as timeout:
        await timed.send_subscribe("o-user", "tpl", {"thing1": {"value": "开会"}})
    token = slow.calls_to("stable_token")[0].answer["access_token"]
    assert "FAKE_TOKEN_SECRET_1" not in str(unreadable.value) and TOKEN_PREFIX not in str(timeout.value)
    assert token not in repr(timeout.value.args)
    assert str(unreadable.value) == "message/custom/typing: unreadable body (HTTP 200)"
    # a bizsend that went out with no answer: the subscription channel calls it unknown_after_send
    assert timeout.value.maybe_delivered and timeout.value.api == BIZSEND


async def test_a_whitelist_errcode_from_getticket_pauses_every_call(
        sessions: Sessions, clock: FrozenClock, caplog: pytest.LogCaptureFixture) -> None:
    api = FakeWeChatAPI()
    client, _ = client_on(api, shared(sessions, clock), clock, client_ip="203.0.113.9")
    tickets = JsApiTickets(client, sessions, clock)
    api.script("ticket/getticket", 40164)
    with caplog.at_level(logging.ERROR, logger="bot.wechat.client"), pytest.raises(WeChatAPIError) as refused:
        await tickets.ticket()
    with pytest.raises(WeChatAPIError):
        await client.typing("o-user")  # paused: no call
    assert refused.value.errcode == 40164 and whitelist_ip(refused.value.errmsg) == "203.0.113.9"
    assert client.misconfigured is not None and "whitelist 203.0.113.9" in client.misconfigured
    assert api.calls_to("message/custom/typing") == []
    [line] = [r.getMessage() for r in caplog.records]
    assert "40164" in line and "IP白名单" in line
    assert "add 203.0.113.9 to the IP whitelist" in describe(refused.value)


async def test_the_ticket_survives_a_revoked_token(sessions: Sessions, clock: FrozenClock) -> None:
    api = FakeWeChatAPI()
    client, _ = client_on(api, shared(sessions, clock), clock)
    tickets = JsApiTickets(client, sessions, clock)
    await client.access_token()
    api.revoke_tokens()
    assert await tickets.ticket() == "FAKE_TICKET_1"
    assert [c.answer.get("errcode", 0) for c in api.calls_to("ticket/getticket")] == [40001, 0]
    assert await tickets.ticket() == "FAKE_TICKET_1"  # kept: one getticket per expiry
    assert api.tickets == 1


def test_the_whitelist_ip_is_read_from_either_form() -> None:
    assert whitelist_ip("invalid ip 1.2.3.4 ipv6 ::ffff:1.2.3.4, not in whitelist rid: x") == "1.2.3.4"
    assert whitelist_ip("invalid ip 2001:db8::1, not in whitelist") == "2001:db8::1"
    assert whitelist_ip("invalid credential") is None


async def test_the_process_store_leases_one_fetch_and_never_forces(clock: FrozenClock) -> None:
    store = ProcessStore(clock)
    lease = await store.acquire(None)
    assert lease is not None and await store.acquire(None) is None  # one fetch at a time
    await store.publish(lease, "T1", now_ms(clock) + 60_000)
    assert (await store.read()) == CachedToken("T1", now_ms(clock) + 60_000)
    assert await store.acquire(None) is None  # still good
    stale = await store.acquire("T1")  # refused by WeChat: fetched again
    assert stale is not None
    await store.release(stale)
    clock.advance(seconds=61)
    assert await store.read() is None and await store.acquire(None) is not None  # expired
    assert not await store.claim_forced_refresh()
