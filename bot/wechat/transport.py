"""The WeChat API's HTTP transport: JSON POSTs and query GETs over one aiohttp `ClientSession` (kept-alive
connections, a per-host limit, aiohttp's C parser), and every way a call can end without an answer as a
`WeChatTransportError`. The HTTP status and body are the caller's to read.

`Transport` is what the client needs of it: tests hand the client an in-process one (fakes/inprocess.py).

An error's text is built from the exception's type and HTTP status only: aiohttp's own text carries the
request URL, access_token included, and the text goes to logs and `schedule_delivery_logs.error_message`.
"""

from __future__ import annotations

import email.utils
import urllib.request
from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

import aiohttp
from yarl import URL

from bot.wechat.errors import WeChatTransportError

MAX_BODY = 4 << 20  # a WeChat JSON answer is tiny; a huge one is a broken peer
# No Accept-Encoding: the answers are a few dozen bytes, not worth compressing (a server that compresses
# anyway is still decoded: auto_decompress stays on).
HEADERS = {"User-Agent": "schedbot", "Accept": "application/json"}
JSON_BODY = {"Content-Type": "application/json"}  # every POST body is JSON


class Transport(Protocol):
    """One origin's HTTP calls, each ending in (status, body) or a WeChatTransportError whose text holds the
    path, the exception's type and the HTTP status only (never a URL: it carries the access token)."""

    async def get(self, path: str, *, params: Mapping[str, str] | None = None) -> tuple[int, bytes]: ...

    async def post(self, path: str, body: bytes, *, params: Mapping[str, str] | None = None
                   ) -> tuple[int, bytes]: ...

    async def server_date(self, path: str) -> datetime | None:
        """The server's clock: the Date header of one GET of `path` (None when it sent none)."""
        ...

    async def aclose(self) -> None: ...


def date_header(value: str | None) -> datetime | None:
    """An HTTP Date header as an aware datetime; None when missing or unreadable."""
    try:
        return email.utils.parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None


def env_proxy(url: URL) -> str | None:
    """The proxy the environment names for `url` (HTTPS_PROXY/HTTP_PROXY, NO_PROXY honoured), looked up once.
    (aiohttp's `trust_env` looks it up, and ~/.netrc, in a thread on every request: two thread hops a send.)"""
    if url.host is None or urllib.request.proxy_bypass(url.host):
        return None
    return urllib.request.getproxies().get(url.scheme)


class AiohttpTransport:
    """POST JSON bodies to (and GET from) one origin over at most `max_connections` kept-alive connections.

    The session is made on the first call, inside the running loop (a ClientSession belongs to one loop).
    `timeout` bounds a whole call, including the wait for a free connection (the worker keeps its sends
    in flight within `max_connections`, so that wait is short); `connect_timeout` bounds a TCP/TLS connect.
    """

    def __init__(self, base_url: str, *, timeout: float = 5.0, connect_timeout: float = 3.0,
                 max_connections: int = 32, keepalive_timeout: float = 15.0) -> None:
        url = URL(base_url)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        # base_url joins relative paths below its own path, which must end with "/"
        self.base_url = url.with_path(url.path.rstrip("/") + "/", keep_query=False, keep_fragment=False)
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout)
        self._max_connections = max_connections
        self._keepalive_timeout = keepalive_timeout
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    def _open(self) -> aiohttp.ClientSession:
        if self._closed:
            raise WeChatTransportError("client closed")
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._max_connections, limit_per_host=self._max_connections,
                                             keepalive_timeout=self._keepalive_timeout)
            self._session = aiohttp.ClientSession(
                self.base_url, connector=connector, timeout=self._timeout, headers=HEADERS,
                skip_auto_headers=("Accept-Encoding",), auto_decompress=True, raise_for_status=False,
                proxy=env_proxy(self.base_url))
        return self._session

    async def get(self, path: str, *, params: Mapping[str, str] | None = None) -> tuple[int, bytes]:
        """(status, body) of one GET of `path`, relative to the base URL; raises WeChatTransportError when no
        complete answer arrives."""
        return await self._call("GET", path, None, params)

    async def post(self, path: str, body: bytes, *, params: Mapping[str, str] | None = None) -> tuple[int, bytes]:
        """(status, body) of one POST of `body` (JSON bytes, sent as they are) to `path`, relative to the base
        URL; raises WeChatTransportError when no complete answer arrives."""
        return await self._call("POST", path, body, params)

    async def server_date(self, path: str) -> datetime | None:
        """The Date header of one GET of `path` (what `schedbot doctor` compares our clock with)."""
        dated: list[str | None] = []
        await self._call("GET", path, None, None, dated)
        return date_header(dated[0])

    async def _call(self, method: str, path: str, body: bytes | None, params: Mapping[str, str] | None,
                    dated: list[str | None] | None = None) -> tuple[int, bytes]:
        session = self._open()
        try:
            async with session.request(method, path, data=body, params=params,
                                       headers=JSON_BODY if body is not None else None) as response:
                if (response.content_length or 0) > MAX_BODY:
                    raise WeChatTransportError(f"{path}: answer body too large ({response.content_length} bytes)")
                answer = await response.read()
                if dated is not None:
                    dated.append(response.headers.get("Date"))
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:  # no connection: not sent
            raise WeChatTransportError(f"{path}: {type(exc).__name__} (no connection)") from None
        except TimeoutError:  # aiohttp's read timeouts are TimeoutErrors too: WeChat may have acted on it
            raise WeChatTransportError(f"{path}: timeout (no answer within {self._timeout.total:g} s)",
                                       maybe_delivered=True) from None
        except aiohttp.ClientError as exc:  # reset, closed early, malformed answer
            raise WeChatTransportError(f"{path}: {_described(exc)}", maybe_delivered=True) from None
        if len(answer) > MAX_BODY:  # a chunked answer has no length to refuse it by up front
            raise WeChatTransportError(f"{path}: answer body too large ({len(answer)} bytes)")
        return response.status, answer

    async def aclose(self) -> None:
        """Close every connection; a call still in flight ends with a WeChatTransportError (callers stop their
        senders first), later calls are refused."""
        self._closed = True
        if self._session is not None:
            await self._session.close()


def _described(exc: aiohttp.ClientError) -> str:
    """The exception's type and, for an answer aiohttp refused, its HTTP status: never its text (the URL)."""
    status = exc.status if isinstance(exc, aiohttp.ClientResponseError) else None
    return f"{type(exc).__name__} (HTTP {status})" if status else type(exc).__name__
