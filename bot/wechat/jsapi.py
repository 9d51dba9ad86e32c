"""The JS-SDK on our pages: the `jsapi_ticket`, cached for every process like the access token (the
access_tokens table, refreshed under a lease), and the `wx.config` signature of a page URL — what the itinerary
page needs to show WeChat's `wx-open-subscribe` button (the subscription-message consent popup)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import APIRouter, HTTPException, Query

from bot.wechat.client import WeChatClient
from bot.wechat.errors import FailureClass, WeChatAPIError, WeChatTransportError
from bot.wechat.token_store import CachedToken, TokenStore, usable_until
from render.subscribe import SubscribeButton
from schedule.clock import Clock, now_ms

log = logging.getLogger(__name__)

JS_API_LIST = ("checkJsApi",)
OPEN_TAGS = ("wx-open-subscribe",)
# How long a failed `getticket` is remembered: pages and /wechat/jssdk asked for meanwhile get the same
# failure without another call to WeChat (one a request, while the ticket was unavailable, before).
FAILURE_MEMORY_MS = 60_000


def signature(ticket: str, *, nonce: str, timestamp: int, url: str) -> str:
    """WeChat's JS-SDK signature: SHA-1 of the four fields in this order; the URL without its #fragment."""
    page = url.split("#", 1)[0]
    return hashlib.sha1(f"jsapi_ticket={ticket}&noncestr={nonce}&timestamp={timestamp}&url={page}"
                        .encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class JsConfig:
    """The object a page passes to `wx.config`."""

    app_id: str
    timestamp: int
    nonce: str
    signature: str

    def as_wx_config(self) -> dict[str, Any]:
        return {"debug": False, "appId": self.app_id, "timestamp": self.timestamp, "nonceStr": self.nonce,
                "signature": self.signature, "jsApiList": list(JS_API_LIST), "openTagList": list(OPEN_TAGS)}


class JsApiTickets:
    """`jsapi_ticket` for the account: one `ticket/getticket` per expiry across processes."""

    def __init__(self, client: WeChatClient, sessions: Any, clock: Clock, *, api_base: str,
                 timeout_s: float = 5.0, poll_s: float = 0.05, wait_polls: int = 100) -> None:
        self._client = client
        self._clock = clock
        self._store = TokenStore(sessions, clock, f"jsapi:{client.app_id}")
        self._api_base = api_base.rstrip("/")
        self._timeout = timeout_s
        self._memory: CachedToken | None = None
        self._failure: tuple[int, WeChatAPIError | WeChatTransportError] | None = None  # (until ms, error)
        self._lock = asyncio.Lock()
        self._poll_s, self._wait_polls = poll_s, wait_polls

    async def ticket(self) -> str:
        if self._memory is not None and self._memory.usable_until_ms > now_ms(self._clock):
            return self._memory.token
        async with self._lock:
            for _ in range(self._wait_polls):
                stored = await self._store.read()
                if stored is not None:
                    self._memory = stored
                    return stored.token
                self._raise_recent_failure()  # another process may have one meanwhile: only WeChat is spared
                lease = await self._store.acquire(None)
                if lease is not None:
                    try:
                        ticket, expires_in = await self._fetch()
                    except (WeChatAPIError, WeChatTransportError) as exc:
                        self._failure = (now_ms(self._clock) + FAILURE_MEMORY_MS, exc)
                        await self._store.release(lease)
                        raise
                    except BaseException:
                        await self._store.release(lease)
                        raise
                    cached = CachedToken(ticket, usable_until(now_ms(self._clock), expires_in))
                    await self._store.publish(lease, ticket, cached.usable_until_ms)
                    self._memory = cached
                    return ticket
                await asyncio.sleep(self._poll_s)
        raise WeChatTransportError("timed out waiting for another process to fetch the jsapi_ticket")

    def _raise_recent_failure(self) -> None:
        if self._failure is not None and self._failure[0] > now_ms(self._clock):
            raise self._failure[1].with_traceback(None)

    async def _fetch(self) -> tuple[str, int]:
        """`GET /cgi-bin/ticket/getticket?type=jsapi` (a GET, so httpx rather than the worker's POST client)."""
        for attempt in range(2):
            token = await self._client.access_token()
            try:
                async with httpx.AsyncClient(base_url=self._api_base, timeout=self._timeout) as http:
                    response = await http.get("/cgi-bin/ticket/getticket",
                                              params={"access_token": token, "type": "jsapi"})
                data = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                raise WeChatTransportError(f"ticket/getticket: {type(exc).__name__}") from None
            errcode = int(data.get("errcode") or 0)
            if errcode:
                error = WeChatAPIError(errcode, str(data.get("errmsg", "")), api="ticket/getticket")
                if error.failure is FailureClass.AUTH and attempt == 0:
                    await self._client.access_token(stale=token)  # refresh once, retry once
                    continue
                if error.failure is FailureClass.CONFIG and not error.rule.ladder:  # 40164 here is 40164 anywhere
                    self._client.configuration_failed(error)
                raise error
            ticket, expires_in = data.get("ticket"), data.get("expires_in")
            if not isinstance(ticket, str) or not isinstance(expires_in, int):
                raise WeChatTransportError("ticket/getticket answered without ticket/expires_in")
            return ticket, expires_in
        raise WeChatTransportError("ticket/getticket: the access token was refused twice")

    async def config(self, url: str) -> JsConfig:
        nonce = secrets.token_hex(8)
        timestamp = int(now_ms(self._clock) // 1000)
        ticket = await self.ticket()
        return JsConfig(self._client.app_id, timestamp, nonce, signature(ticket, nonce=nonce, timestamp=timestamp,
                                                                          url=url))


def subscribe_button(tickets: JsApiTickets, template_id: str) -> Callable[[str], Awaitable[SubscribeButton | None]]:
    """The page's 订阅通知 button for a URL; None (the page shows without it) when WeChat cannot sign now."""

    async def button(url: str) -> SubscribeButton | None:
        try:
            config = await tickets.config(url)
        except (WeChatAPIError, WeChatTransportError) as exc:
            log.warning("no subscribe button on the page: jsapi_ticket unavailable (%s)", type(exc).__name__)
            return None
        return SubscribeButton(template_id, config.as_wx_config(), secrets.token_urlsafe(12))

    return button


def jsapi_router(tickets: JsApiTickets, *, public_base_url: str) -> APIRouter:
    """`GET /wechat/jssdk?url=…`: the signed `wx.config` for one of our own pages."""
    router = APIRouter()
    ours = public_base_url.rstrip("/") + "/"

    @router.get("/wechat/jssdk", tags=["wechat"])
    async def jssdk(url: str = Query(..., max_length=2048)) -> dict[str, Any]:
        if not url.startswith(ours):
            raise HTTPException(status_code=404, detail="not one of our pages")
        try:
            config = await tickets.config(url)
        except (WeChatAPIError, WeChatTransportError) as exc:
            raise HTTPException(status_code=503, detail="WeChat JS-SDK unavailable") from exc
        return config.as_wx_config()

    return router
