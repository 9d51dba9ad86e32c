"""An in-process `Transport` for the WeChat client's unit tests: each call goes straight into an ASGI app (the
fake WeChat API) in this event loop, no socket and no server thread. Its errors are built as the real
transport's are: the path, the exception's type, never the URL (so a test can show no token leaks through).

The real aiohttp transport keeps its own tests over loopback (tests/bot/wechat/test_transport.py,
test_wechat_client.py's HTTP ones): this one proves what the client does with answers, not how they travel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from starlette.types import ASGIApp, Message

from bot.wechat.errors import WeChatTransportError
from bot.wechat.transport import date_header


class InProcessTransport:
    """Calls `app` as a server would, from the client address `client_ip` (what a 40164 errmsg names)."""

    def __init__(self, app: ASGIApp, *, timeout: float = 5.0, client_ip: str = "127.0.0.1") -> None:
        self._app = app
        self._timeout = timeout
        self._client_ip = client_ip
        self.closed = False
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, query) of each call

    async def get(self, path: str, *, params: Mapping[str, str] | None = None) -> tuple[int, bytes]:
        return await self._call("GET", path, b"", params)

    async def post(self, path: str, body: bytes, *, params: Mapping[str, str] | None = None) -> tuple[int, bytes]:
        return await self._call("POST", path, body, params)

    async def server_date(self, path: str) -> datetime | None:
        dated: list[str | None] = []
        await self._call("GET", path, b"", None, dated)
        return date_header(dated[0] if dated else None)

    async def aclose(self) -> None:
        self.closed = True

    async def _call(self, method: str, path: str, body: bytes, params: Mapping[str, str] | None,
                    dated: list[str | None] | None = None) -> tuple[int, bytes]:
        if self.closed:
            raise WeChatTransportError("client closed")
        query = dict(params or {})
        self.requests.append((method, path, query))
        scope: dict[str, Any] = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
            "path": "/" + path, "raw_path": ("/" + path).encode(), "query_string": urlencode(query).encode(),
            "root_path": "", "headers": [(b"content-type", b"application/json")] if body else [],
            "client": (self._client_ip, 40000), "server": ("api.weixin.test", 80)}
        sent = False
        status, chunks = 0, []

        async def receive() -> Message:
            nonlocal sent
            if sent:
                await asyncio.Event().wait()  # a disconnect never comes: the app has its whole body
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if dated is not None:  # the app's own Date header (a server adds one; an ASGI app may not)
                    dated.extend(v.decode("latin-1") for k, v in message.get("headers", []) if k.lower() == b"date")
            elif message["type"] == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))

        try:
            async with asyncio.timeout(self._timeout):
                await self._app(scope, receive, send)
        except TimeoutError:  # the request reached the app: it may have acted on it
            raise WeChatTransportError(f"{path}: timeout (no answer within {self._timeout:g} s)",
                                       maybe_delivered=True) from None
        return status, b"".join(chunks)
