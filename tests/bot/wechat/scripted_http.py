"""A scripted raw-TCP HTTP server on loopback for the WeChat transport's tests: every byte is the test's choice."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class Request:
    """One request as the server read it off the wire."""

    method: str
    target: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    connection: int  # index of the accepted connection it arrived on


@dataclass
class Peer:
    """One accepted connection, driven by the test's handler."""

    index: int
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    requests: list[Request]
    eof: asyncio.Event = field(default_factory=asyncio.Event)  # the client closed or reset the connection

    async def read_request(self) -> Request | None:
        """The next request, or None once the client has closed the connection."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
            request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
            method, target, version = request_line.split(" ")
            assert version == "HTTP/1.1"
            headers = {}
            for line in lines:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        except (asyncio.IncompleteReadError, ConnectionError):
            self.eof.set()
            return None
        request = Request(method, target, headers, body, self.index)
        self.requests.append(request)
        return request

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()

    async def wait_for_eof(self) -> None:
        """Park until the client closes the connection, reading (and dropping) whatever arrives."""
        while await self.read_request() is not None:
            pass


Handler = Callable[[Peer], Awaitable[None]]


class ScriptedServer:
    """A raw asyncio TCP server on 127.0.0.1 whose every connection is handled by the test's coroutine."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.peers: list[Peer] = []
        self.requests: list[Request] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def connections(self) -> int:
        return len(self.peers)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        peer = Peer(len(self.peers), reader, writer, self.requests)
        self.peers.append(peer)
        try:
            await self._handler(peer)
        finally:
            self._tasks.discard(task)
            await peer.close()

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for peer in self.peers:
            await peer.close()
        await self._server.wait_closed()
        for _ in range(3):  # let every transport run its connection_lost, so no socket outlives the loop
            await asyncio.sleep(0)


def replying(answer: Callable[[Request], bytes]) -> Handler:
    """A keep-alive handler: read a request, write `answer(request)`, repeat until the client closes."""

    async def handle(peer: Peer) -> None:
        while (request := await peer.read_request()) is not None:
            await peer.send(answer(request))

    return handle


def ok(body: bytes, status: str = "200 OK", headers: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{headers}\r\n".encode() + body


Serve = Callable[[Handler], Awaitable[ScriptedServer]]

