"""KeepAliveClient against a scripted raw-TCP HTTP server on loopback: every byte is the test's choice."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from bot.wechat import http
from bot.wechat.http import HTTPError, HTTPTimeout, KeepAliveClient


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
MakeClient = Callable[..., KeepAliveClient]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    servers: list[ScriptedServer] = []

    async def start(handler: Handler) -> ScriptedServer:
        server = ScriptedServer(handler)
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
async def make_client() -> AsyncIterator[MakeClient]:
    clients: list[KeepAliveClient] = []

    def make(url: str, *, timeout: float = 2.0, max_connections: int = 32) -> KeepAliveClient:
        client = KeepAliveClient(url, timeout=timeout, connect_timeout=1.0, max_connections=max_connections)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
    for _ in range(3):
        await asyncio.sleep(0)


async def test_post_sends_one_well_formed_request_and_returns_status_and_body(
        serve: Serve, make_client: MakeClient) -> None:
    server = await serve(replying(lambda _: ok(b'{"errcode":0}')))
    client = make_client(server.url)
    body = json.dumps({"content": "明天下午三点开会"}, ensure_ascii=False).encode()

    assert await client.post("/cgi-bin/message/send", body, params={"access_token": "a b"}) == (200, b'{"errcode":0}')

    [request] = server.requests
    assert request.method == "POST"
    assert request.target == "/cgi-bin/message/send?access_token=a+b"
    assert request.headers["host"] == f"127.0.0.1:{server.port}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["content-length"] == str(len(body))
    assert request.body == body
    assert request.body.decode() == '{"content": "明天下午三点开会"}'


async def test_base_url_path_prefixes_every_target(serve: Serve, make_client: MakeClient) -> None:
    server = await serve(replying(lambda _: ok(b"{}")))
    client = make_client(server.url + "/api/")

    await client.post("/send", b"{}")

    assert server.requests[0].target == "/api/send"


async def test_sequential_posts_reuse_one_connection(serve: Serve, make_client: MakeClient) -> None:
    server = await serve(replying(lambda r: ok(b"echo:" + r.body)))
    client = make_client(server.url)

    answers = [await client.post("/x", f"{i}".encode()) for i in range(3)]

    assert answers == [(200, b"echo:0"), (200, b"echo:1"), (200, b"echo:2")]
    assert server.connections == 1
    assert [r.connection for r in server.requests] == [0, 0, 0]


async def test_concurrent_posts_stay_within_max_connections_and_get_their_own_answers(
        serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        while (request := await peer.read_request()) is not None:
            await asyncio.sleep(0.005)  # keep connections busy so the posts really overlap
            await peer.send(ok(b"echo:" + request.body + f"@{request.target}".encode()))

    server = await serve(handle)
    client = make_client(server.url, max_connections=4)

    answers = await asyncio.gather(*(client.post(f"/p{i}", f"body{i}".encode()) for i in range(10)))

    assert answers == [(200, f"echo:body{i}@/p{i}".encode()) for i in range(10)]
    assert server.connections == 4  # four posts start at once and open one connection each; the rest reuse
    assert len(server.requests) == 10


async def test_chunked_answer_is_reassembled(serve: Serve, make_client: MakeClient) -> None:
    answer = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
              b"5\r\n{\"a\":\r\n3\r\n 1,\r\na\r\n \"b\": \"xy\"\r\n1\r\n}\r\n0\r\n\r\n")
    server = await serve(replying(lambda _: answer))
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (200, b'{"a": 1, "b": "xy"}')
    assert await client.post("/x", b"{}") == (200, b'{"a": 1, "b": "xy"}')
    assert server.connections == 1  # a chunked answer leaves the connection reusable


async def test_answer_delimited_by_close_is_returned_whole_and_next_post_reconnects(
        serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        request = await peer.read_request()
        assert request is not None
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
        await peer.send(b'{"part": 1, ')
        await asyncio.sleep(0.01)
        await peer.send(f'"conn": {peer.index}}}'.encode())
        await peer.close()

    server = await serve(handle)
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (200, b'{"part": 1, "conn": 0}')
    assert await client.post("/x", b"{}") == (200, b'{"part": 1, "conn": 1}')
    assert server.connections == 2


async def test_connection_close_header_is_honoured_even_if_server_keeps_socket_open(
        serve: Serve, make_client: MakeClient) -> None:
    # The handler would happily serve a second request on the same socket: only the client can avoid it.
    server = await serve(replying(lambda _: ok(b"bye", headers="Connection: close\r\n")))
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (200, b"bye")
    assert await client.post("/x", b"{}") == (200, b"bye")

    assert server.connections == 2
    assert [r.connection for r in server.requests] == [0, 1]
    await asyncio.wait_for(server.peers[0].eof.wait(), 1.0)  # and the client closed the first one


async def test_idle_connection_closed_by_server_is_replaced(serve: Serve, make_client: MakeClient) -> None:
    closed = asyncio.Event()

    async def handle(peer: Peer) -> None:
        request = await peer.read_request()
        assert request is not None
        await peer.send(ok(f"conn{peer.index}".encode()))
        if peer.index == 0:
            await peer.close()  # keep-alive answer, then the server drops the idle connection
            closed.set()
        else:
            await peer.wait_for_eof()

    server = await serve(handle)
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (200, b"conn0")
    await asyncio.wait_for(closed.wait(), 1.0)
    await asyncio.sleep(0.05)  # let the client's event loop notice the FIN
    assert await client.post("/x", b"{}") == (200, b"conn1")
    assert server.connections == 2


async def test_no_answer_raises_http_timeout_and_next_post_uses_a_new_connection(
        serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        if peer.index == 0:
            await peer.wait_for_eof()  # read the request, never answer
        else:
            await replying(lambda _: ok(b"late but fine"))(peer)

    server = await serve(handle)
    client = make_client(server.url, timeout=0.2)
    loop = asyncio.get_running_loop()

    started = loop.time()
    with pytest.raises(HTTPTimeout):
        await client.post("/x", b"{}")
    elapsed = loop.time() - started

    assert 0.15 <= elapsed < 1.0
    assert issubclass(HTTPTimeout, HTTPError)
    await asyncio.wait_for(server.peers[0].eof.wait(), 1.0)  # the timed-out connection was dropped
    assert await client.post("/x", b"{}") == (200, b"late but fine")
    assert server.connections == 2


async def test_connection_refused_raises_http_error(make_client: MakeClient) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, with nothing listening now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make_client(f"http://127.0.0.1:{port}")

    with pytest.raises(HTTPError) as caught:
        await client.post("/x", b"{}")

    assert not isinstance(caught.value, OSError)
    assert not isinstance(caught.value, HTTPTimeout)


async def test_server_closing_mid_answer_raises_http_error(serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        if await peer.read_request() is not None:
            await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)
            await peer.close()

    server = await serve(handle)
    client = make_client(server.url)

    with pytest.raises(HTTPError, match="closed"):
        await client.post("/x", b"{}")


async def test_server_closing_before_any_answer_raises_http_error(serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        await peer.read_request()
        await peer.close()

    server = await serve(handle)
    client = make_client(server.url)

    with pytest.raises(HTTPError):
        await client.post("/x", b"{}")


async def test_malformed_answer_raises_http_error_and_drops_the_connection(
        serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        if await peer.read_request() is not None:
            await peer.send(b"garbage\r\n\r\n")
            await peer.wait_for_eof()

    server = await serve(handle)
    client = make_client(server.url, timeout=1.0)

    with pytest.raises(HTTPError, match="malformed"):
        await client.post("/x", b"{}")
    await asyncio.wait_for(server.peers[0].eof.wait(), 1.0)


async def test_server_error_status_is_returned_not_raised(serve: Serve, make_client: MakeClient) -> None:
    server = await serve(replying(lambda _: ok(b'{"error": "boom"}', status="500 Internal Server Error")))
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (500, b'{"error": "boom"}')
    assert await client.post("/x", b"{}") == (500, b'{"error": "boom"}')
    assert server.connections == 1  # a 500 with a proper length does not cost the connection


async def test_aclose_closes_idle_connections_and_refuses_later_posts(
        serve: Serve, make_client: MakeClient) -> None:
    server = await serve(replying(lambda _: ok(b"{}")))
    client = make_client(server.url, max_connections=2)
    await asyncio.gather(client.post("/a", b"{}"), client.post("/b", b"{}"))
    assert server.connections == 2

    await client.aclose()

    await asyncio.wait_for(asyncio.gather(*(peer.eof.wait() for peer in server.peers)), 1.0)
    with pytest.raises(HTTPError, match="closed"):
        await client.post("/x", b"{}")
    assert server.connections == 2  # no reconnect attempt either


async def test_aclose_during_a_post_lets_it_finish_then_closes_its_connection(
        serve: Serve, make_client: MakeClient) -> None:
    received, release = asyncio.Event(), asyncio.Event()

    async def handle(peer: Peer) -> None:
        while await peer.read_request() is not None:
            received.set()
            await release.wait()
            await peer.send(ok(b"done"))

    server = await serve(handle)
    client = make_client(server.url)
    in_flight = asyncio.create_task(client.post("/x", b"{}"))
    await asyncio.wait_for(received.wait(), 1.0)

    await client.aclose()
    release.set()

    assert await in_flight == (200, b"done")
    await asyncio.wait_for(server.peers[0].eof.wait(), 1.0)


@pytest.mark.parametrize("chunked", [False, True])
async def test_answer_body_over_max_body_raises_http_error(
        serve: Serve, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch, chunked: bool) -> None:
    monkeypatch.setattr(http, "MAX_BODY", 1000)
    big = b"y" * 5000
    if chunked:
        answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(
            b"%x\r\n%s\r\n" % (len(part), part) for part in (big[:600], big[600:])) + b"0\r\n\r\n"
    else:
        answer = ok(big)
    server = await serve(replying(lambda _: answer))
    client = make_client(server.url)

    with pytest.raises(HTTPError, match="too large"):
        await client.post("/x", b"{}")


async def test_answer_body_of_exactly_max_body_is_accepted(
        serve: Serve, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_BODY", 1000)
    server = await serve(replying(lambda _: ok(b"z" * 1000)))
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (200, b"z" * 1000)


async def test_unsolicited_bytes_on_an_idle_connection_retire_it(serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        while (request := await peer.read_request()) is not None:
            stray = ok(b"stray") if peer.index == 0 else b""  # an answer nobody asked for after the real one
            await peer.send(ok(request.target.encode()))
            await asyncio.sleep(0.01)
            await peer.send(stray)

    server = await serve(handle)
    client = make_client(server.url)

    assert await client.post("/first", b"{}") == (200, b"/first")
    await asyncio.sleep(0.05)  # the stray answer lands while the connection is idle
    assert await client.post("/second", b"{}") == (200, b"/second")
    assert [r.connection for r in server.requests] == [0, 1]


def test_rejects_non_http_urls() -> None:
    with pytest.raises(ValueError, match="not an http"):
        KeepAliveClient("ftp://example.com")
    with pytest.raises(ValueError, match="not an http"):
        KeepAliveClient("http://")


async def test_interim_100_continue_is_skipped_for_the_final_answer(serve: Serve, make_client: MakeClient) -> None:
    server = await serve(replying(lambda _: b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"ok")))
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (200, b"ok")
    assert await client.post("/x", b"{}") == (200, b"ok")
    assert server.connections == 1


async def test_non_chunked_transfer_encoding_body_runs_until_close(serve: Serve, make_client: MakeClient) -> None:
    async def handle(peer: Peer) -> None:
        if await peer.read_request() is not None:
            await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nabc")

    server = await serve(handle)
    client = make_client(server.url)

    assert await client.post("/x", b"{}") == (200, b"abc")
