"""`/wechat` through a real uvicorn server on loopback (HTTP framing, body limits, concurrency)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import uvicorn
import xmltodict
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from webhook_helpers import RecordingHandler, bare_app, signed

from fakes.wechat import text_message
from schedule.testing import FrozenClock


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", ws="none", http="h11"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def test_webhook_over_real_loopback(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="你好", delay_s=0.02)
    app, _ = bare_app(sessions, clock, handler)
    async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as client:
        body = text_message("o-net", "在吗", msg_id=9001, create_time=1)
        responses = await asyncio.gather(*(client.post("/wechat", params=signed(clock, f"n{i}"), content=body)
                                           for i in range(4)))
        oversized = await client.post("/wechat", params=signed(clock), content=b"<xml>" + b"x" * 70_000)
        bad = await client.post("/wechat", params=signed(clock) | {"signature": "f" * 40}, content=body)
        verify = await client.get("/wechat", params=signed(clock) | {"echostr": "hello"})
    assert len(handler.seen) == 1
    answered = [r for r in responses if r.text != "success"]
    assert len(answered) == 1
    assert xmltodict.parse(answered[0].text)["xml"]["Content"] == "你好"
    assert answered[0].headers["content-type"].startswith("application/xml")
    assert (oversized.status_code, bad.status_code, verify.text) == (413, 403, "hello")
