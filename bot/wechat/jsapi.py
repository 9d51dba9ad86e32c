"""The JS-SDK on our pages: the `jsapi_ticket`, cached for every process like the access token (the
access_tokens table, refreshed under a lease), and the `wx.config` signature of a page URL — what the itinerary
page needs to show WeChat's `wx-open-subscribe` button (the subscription-message consent popup)."""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Query
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.wechat.client import WeChatClient
from bot.wechat.errors import WeChatAPIError, WeChatTransportError
from bot.wechat.token_store import LeasedValue, TokenStore
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
    """`jsapi_ticket` for the account: one `ticket/getticket` per expiry across processes, through the one
    WeChat client (its token, its auth retry, its configuration incidents: a 40164 here pauses every call)."""

    def __init__(self, client: WeChatClient, sessions: async_sessionmaker[AsyncSession], clock: Clock, *,
                 poll_s: float = 0.05, wait_polls: int = 100) -> None:
        self._client = client
        self._clock = clock
        self._ticket = LeasedValue(TokenStore(sessions, clock, f"jsapi:{client.app_id}"), clock,
                                   what="the jsapi_ticket", poll_s=poll_s, wait_polls=wait_polls)
        self._failure: tuple[int, WeChatAPIError | WeChatTransportError] | None = None  # (until ms, error)

    async def ticket(self) -> str:
        return await self._ticket.get(self._fetch)

    async def _fetch(self, _stale: str | None) -> tuple[str, int]:
        """`GET /cgi-bin/ticket/getticket?type=jsapi`, unless it failed less than a minute ago (another process
        may have a ticket meanwhile: the store is read first, only WeChat is spared)."""
        if self._failure is not None and self._failure[0] > now_ms(self._clock):
            raise self._failure[1].with_traceback(None)
        try:
            data = await self._client.get("ticket/getticket", {"type": "jsapi"})
        except (WeChatAPIError, WeChatTransportError) as exc:
            self._failure = (now_ms(self._clock) + FAILURE_MEMORY_MS, exc)
            raise
        ticket, expires_in = data.get("ticket"), data.get("expires_in")
        if not isinstance(ticket, str) or not isinstance(expires_in, int):
            raise WeChatTransportError("ticket/getticket answered without ticket/expires_in")
        return ticket, expires_in

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
