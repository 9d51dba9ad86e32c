"""Database down on SQLite (docs/delivery.md#spool): another process holds the database's write lock for
longer than the claim's budget. The webhook still answers within WeChat's 5 s (the event loop never waits
on the lock: every sqlite3 call runs on aiosqlite's thread), spools the message, and the claim that was
still waiting commits late; the replay takes that claim over, so the message is handled exactly once and
its answer goes out by custom message."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager
from webhook_helpers import EchoHandler, content_of, replay_spool_and_deliver, settings, signed

from bot.web.app import create_app
from bot.wechat.endpoint import SPOOLED
from fakes.wechat import FakeWeChatAPI, text_message
from schedule.testing import FrozenClock

LOCK_HELD_S = 4.0  # past the claim's 2.5 s budget, within SQLite's 30 s busy timeout



@pytest.fixture
async def api() -> AsyncIterator[FakeWeChatAPI]:
    async with FakeWeChatAPI() as fake:
        yield fake


async def test_a_writer_holding_the_lock_past_the_budget_loses_nothing(api: FakeWeChatAPI, tmp_path: Path) -> None:
    clock, handler = FrozenClock(), EchoHandler()
    path = tmp_path / "bot.db"
    config = settings(WECHAT_API_BASE=api.base_url, WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret,
                      DATABASE_URL=f"sqlite+aiosqlite:///{path}", SPOOL_DIR=str(tmp_path / "spool"))
    app = create_app(config, clock=clock, handler=handler, run_worker=False)
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                       base_url="http://t", timeout=10) as client:
        first = await client.post("/wechat", params=signed(clock),
                                  content=text_message("o-lock", "锁之前", msg_id=1, create_time=1))
        assert content_of(first.text) == "答：锁之前"  # the user is known; the database answers

        holder = sqlite3.connect(path, timeout=0, isolation_level=None)  # another process's writer
        holder.execute("BEGIN IMMEDIATE")
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        beat = asyncio.ensure_future(ticker())
        started = time.monotonic()
        answer = await client.post("/wechat", params=signed(clock),
                                   content=text_message("o-lock", "锁住时", msg_id=2, create_time=2))
        took = time.monotonic() - started
        assert answer.status_code == 200 and content_of(answer.text) == SPOOLED and took < 5  # WeChat still waited
        assert ticks >= took / 0.01 * 0.5  # the loop ran all along: nothing waited on its thread
        await asyncio.sleep(max(0.0, LOCK_HELD_S - took))
        holder.execute("COMMIT")
        holder.close()
        beat.cancel()

        await replay_spool_and_deliver(app)
    assert [m.content for m in handler.seen] == ["锁之前", "锁住时"]  # handled once, late claim or not
    pushed = [c.body["text"]["content"] for c in api.calls_to("message/custom/send") if c.answer.get("errcode") == 0]
    assert pushed == ["答：锁住时"]
