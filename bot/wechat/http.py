"""A lean HTTP/1.1 keep-alive client for WeChat's JSON API.

The delivery worker makes hundreds of small POSTs a second to one host. httpx spent most of the
worker's CPU in its connection pool (it rescans every connection on every request); this client keeps
a LIFO stack of idle connections, parses answers with httptools (the C parser uvicorn uses: chunked and
Content-Length bodies alike) and writes each request in one `transport.write`. TLS and IPv6 come from
asyncio; there is no proxy support (WeChat calls must come from a whitelisted IP, so they go direct).
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections import deque
from urllib.parse import urlencode, urlsplit

import httptools

MAX_BODY = 4 << 20  # a WeChat JSON answer is tiny; a huge one is a broken peer


class HTTPError(Exception):
    """The request got no complete answer: refused, reset, timed out or malformed."""


class HTTPTimeout(HTTPError):
    pass


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._body: list[bytes] = []
        self._size = 0
        self._keep_alive = True
        self._delimited = False  # the answer carries Content-Length or Transfer-Encoding
        self._until_close = False  # headers done and the body runs until the peer closes

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # bytes nobody asked for: the connection cannot be trusted again
            self.abort()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(HTTPError(f"malformed HTTP answer ({exc})"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            if self._until_close:  # an answer without a length ends where the connection does
                self._keep_alive = False
                self._waiter.set_result((self._parser.get_status_code(), b"".join(self._body)))
                self._waiter = None
            else:
                self._fail(HTTPError("connection closed before the answer was complete"))

    # httptools callbacks
    def on_message_begin(self) -> None:
        self._delimited = self._until_close = False
        self._body, self._size = [], 0

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-length" or (name == b"transfer-encoding" and value.lower().endswith(b"chunked")):
            self._delimited = True

    def on_headers_complete(self) -> None:
        self._until_close = not self._delimited

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > MAX_BODY:
            self._fail(HTTPError("answer body too large"))
            return
        self._body.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self._parser.get_status_code() < 200:  # an interim answer (100 Continue): the real one follows
            return
        self._keep_alive = self._parser.should_keep_alive()
        self._until_close = False
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result((self._parser.get_status_code(), b"".join(self._body)))

    # use
    def request(self, raw: bytes) -> asyncio.Future[tuple[int, bytes]]:
        assert self.transport is not None
        assert self._waiter is None
        self._waiter = asyncio.get_running_loop().create_future()
        self._body, self._size = [], 0
        self._delimited = self._until_close = False
        self._parser = httptools.HttpResponseParser(self)
        self.transport.write(raw)
        return self._waiter

    @property
    def reusable(self) -> bool:
        return self._keep_alive and not self.closed and self.transport is not None \
            and not self.transport.is_closing()

    def _fail(self, error: HTTPError) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        self.abort()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


@functools.lru_cache(maxsize=64)
def _query(params: tuple[tuple[str, str], ...]) -> str:
    return urlencode(params)  # the same access_token on thousands of sends: encoded once


class KeepAliveClient:
    """POST JSON bodies to one origin over at most `max_connections` kept-alive connections."""

    def __init__(self, base_url: str, *, timeout: float = 5.0, connect_timeout: float = 3.0,
                 max_connections: int = 32, keepalive_expiry: float = 15.0) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self._host = url.hostname
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._ssl = ssl.create_default_context() if url.scheme == "https" else None
        self._prefix = url.path.rstrip("/")
        host_header = url.netloc.rsplit("@", 1)[-1]
        self._head = f"Host: {host_header}\r\nUser-Agent: schedbot\r\nAccept: application/json\r\n"
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._expiry = keepalive_expiry
        self._idle: deque[_Connection] = deque()
        self._slots = asyncio.Semaphore(max_connections)
        self._closed = False

    async def post(self, path: str, body: bytes, *, params: dict[str, str] | None = None) -> tuple[int, bytes]:
        """(status, body) of one POST with a JSON body; raises HTTPError/HTTPTimeout without an answer."""
        target = self._prefix + path + ("?" + _query(tuple(params.items())) if params else "")
        raw = (f"POST {target} HTTP/1.1\r\n{self._head}Content-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body
        async with self._slots:
            connection = await self._connection()
            try:
                status, answer = await asyncio.wait_for(connection.request(raw), self._timeout)
            except TimeoutError:
                connection.abort()
                raise HTTPTimeout(f"no answer within {self._timeout:g} s") from None
            except BaseException:
                connection.abort()
                raise
            if connection.reusable and not self._closed:
                connection.idle_since = asyncio.get_running_loop().time()
                self._idle.append(connection)
            else:
                connection.abort()
            return status, answer

    async def _connection(self) -> _Connection:
        now = asyncio.get_running_loop().time()
        while self._idle:
            connection = self._idle.pop()  # the most recently used: least likely closed by the peer
            if connection.reusable and now - connection.idle_since < self._expiry:
                return connection
            connection.abort()
        if self._closed:
            raise HTTPError("client closed")
        loop = asyncio.get_running_loop()
        try:
            _, protocol = await asyncio.wait_for(loop.create_connection(
                _Connection, self._host, self._port, ssl=self._ssl,
                server_hostname=self._host if self._ssl else None), self._connect_timeout)
        except TimeoutError:
            raise HTTPTimeout(f"connect timed out after {self._connect_timeout:g} s") from None
        except OSError as exc:
            raise HTTPError(f"connect failed ({type(exc).__name__})") from None
        return protocol

    async def aclose(self) -> None:
        self._closed = True
        while self._idle:
            self._idle.pop().abort()
