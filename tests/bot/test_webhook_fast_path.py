"""The fast path (`SchedbotApp.serve_wechat_first`) answers `/wechat` exactly as the FastAPI route does: the
same requests sent through both give the same status, body and content type; other paths pass through
untouched."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from webhook_helpers import TOKEN, RecordingHandler, bare_app, content_of, http, now_s, settings, signed

from bot.web.app import SchedbotApp
from bot.web.middleware import BodyLimit
from fakes.wechat import sign_request, text_message
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]
_IDS = itertools.count(5_000)


def both(sessions: Sessions, clock: FrozenClock, handler: RecordingHandler) -> tuple[FastAPI, FastAPI]:
    """The router mounted as a FastAPI route (behind the app's BodyLimit too, as in create_app), and an app
    with no routes of its own where whatever answers /wechat is the fast path; one dispatcher behind both."""
    routed, router = bare_app(sessions, clock, handler, config=settings(WECHAT_ENCODING_AES_KEY=""))
    routed.add_middleware(BodyLimit)
    fast = SchedbotApp()
    fast.serve_wechat_first(router)
    return routed, fast


def message(clock: FrozenClock, text: str = "明天下午三点开会") -> bytes:
    return text_message("o-fast", text, msg_id=next(_IDS), create_time=now_s(clock)).encode()


async def answer(app: FastAPI, method: str, params: dict[str, str] | list[tuple[str, str]], body: bytes = b"",
                 headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    async with http(app) as client:
        r = await client.request(method, "/wechat", params=params, content=body or None, headers=headers)
    return r.status_code, r.text, r.headers.get("content-type", "")


async def test_the_same_requests_get_the_same_answers(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="好的，已记下")
    routed, fast = both(sessions, clock, handler)
    seen = []
    for app in (routed, fast):
        ts = str(now_s(clock))
        good = sign_request(TOKEN, timestamp=ts, nonce=f"n{next(_IDS)}")
        cases = [
            ("GET", {**good, "echostr": "abc"}, b""),
            ("GET", {**good, "signature": "0" * 40, "echostr": "abc"}, b""),
            ("GET", {"echostr": "abc"}, b""),
            ("POST", signed(clock), message(clock)),
            ("POST", {**signed(clock), "signature": "f" * 40}, message(clock)),
            ("POST", signed(clock), b"<xml><oops"),
            ("POST", {**sign_request(TOKEN, timestamp="12ab", nonce="n")}, message(clock)),
            ("POST", signed(clock), b"<xml>" + b"x" * 70_000),
        ]
        results = []
        for method, params, body in cases:
            status, text, ctype = await answer(app, method, params, body)
            results.append((status, content_of(text) if text.startswith("<xml>") else text, ctype))
        seen.append(results)
    assert seen[0] == seen[1]
    assert [s for s, _, _ in seen[1]] == [200, 403, 400, 200, 403, 200, 400, 413]
    assert seen[1][0][1] == "abc" and seen[1][3][1] == "好的，已记下" and seen[1][3][2] == "application/xml"
    assert seen[1][5][1] == "success" and seen[1][0][2].startswith("text/plain")
    assert [m.content for m in handler.seen] == ["明天下午三点开会", "明天下午三点开会"]


async def test_the_last_of_repeated_query_parameters_counts_on_both_paths(sessions: Sessions,
                                                                          clock: FrozenClock) -> None:
    routed, fast = both(sessions, clock, RecordingHandler())
    for app in (routed, fast):
        good = sign_request(TOKEN, timestamp=str(now_s(clock)), nonce=f"n{next(_IDS)}")
        params = [("signature", "0" * 40), *good.items(), ("echostr", "x")]
        assert (await answer(app, "GET", params))[:2] == (200, "x")


async def test_a_chunked_body_over_the_limit_is_refused(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    _routed, fast = both(sessions, clock, handler)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b"x" * 8_192

    async with http(fast) as client:
        r = await client.post("/wechat", params=signed(clock), content=chunks())
    assert r.status_code == 413 and not handler.seen


async def test_other_paths_and_methods_pass_through(sessions: Sessions, clock: FrozenClock) -> None:
    _routed, fast = both(sessions, clock, RecordingHandler())

    @fast.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    async with http(fast) as client:
        assert (await client.get("/healthz")).json() == {"status": "ok"}
        assert (await client.put("/wechat", params=signed(clock))).status_code == 404  # not ours: no route here
        assert (await client.get("/wechat/x")).status_code == 404


@pytest.mark.parametrize("root_path", ["/bot"])
async def test_served_under_a_root_path(sessions: Sessions, clock: FrozenClock, root_path: str) -> None:
    handler = RecordingHandler(reply="在")
    _routed, fast = both(sessions, clock, handler)
    transport = httpx.ASGITransport(app=fast, root_path=root_path)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        r = await client.post(f"{root_path}/wechat", params=signed(clock), content=message(clock, "你好"))
    assert r.status_code == 200 and content_of(r.text) == "在"
