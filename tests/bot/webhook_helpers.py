"""Shared pieces for the webhook tests: settings, recording handlers (answering after the message's unit of work,
with no writes in it), a bare app around the router."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx
import xmltodict
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.settings import Settings
from bot.wechat.client import WeChatClient
from bot.wechat.dispatch import UserDirectory
from bot.wechat.endpoint import WeChatRouter, build_wechat_router
from bot.wechat.handler import Answering, Handler, Reply
from bot.wechat.messages import InboundMessage
from fakes.wechat import sign_request
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

TOKEN = "AAAAA"
AES_KEY = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
APP_ID = "wxba5fad812f8e6fb9"


def settings(**overrides: object) -> Settings:
    """An account in mode switch (AES key set, plaintext still accepted); pass WECHAT_ACCEPT_PLAINTEXT=False
    for a safe-mode-only account."""
    values: dict[str, object] = {"WECHAT_APP_ID": APP_ID, "WECHAT_APP_SECRET": "secret", "WECHAT_TOKEN": TOKEN,
                                 "WECHAT_ENCODING_AES_KEY": AES_KEY, "WECHAT_ACCEPT_PLAINTEXT": True}
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class FakeMonotonic:
    """The webhook's monotonic clock, moved by hand (the reply budget is measured on it)."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class RecordingHandler(Answering):
    reply: str | None = "收到"
    delay_s: float = 0.0
    fail: bool = False
    seen: list[InboundMessage] = field(default_factory=list)

    async def answer(self, message: InboundMessage) -> Reply:
        self.seen.append(message)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail:
            raise RuntimeError("handler exploded")
        return self.reply


def bare_app(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock, handler: Handler, *,
             config: Settings | None = None, client: WeChatClient | None = None,
             reply_budget_s: float = 4.0, users: UserDirectory | None = None,
             monotonic: Callable[[], float] | None = None) -> tuple[FastAPI, WeChatRouter]:
    config = config or settings()
    users = users or ScheduleService(sessions, clock, default_timezone=config.H5_DEFAULT_TIMEZONE)
    router = build_wechat_router(settings=config, sessions=sessions, clock=clock, handler=handler,
                                 client=client, reply_budget_s=reply_budget_s, users=users, monotonic=monotonic)
    app = FastAPI()
    app.include_router(router)
    return app, router


def http(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


_NONCES = itertools.count(1)


def signed(clock: FrozenClock, nonce: str | None = None, token: str = TOKEN) -> dict[str, str]:
    """Signed query parameters; a fresh nonce each call unless one is given (a pair is accepted once)."""
    return sign_request(token, timestamp=int(clock.now().timestamp()), nonce=nonce or f"auto{next(_NONCES)}")


def at(ts: str | int) -> FrozenClock:
    return FrozenClock(datetime.fromtimestamp(int(ts), UTC))


def content_of(reply_xml: str) -> str:
    return str(xmltodict.parse(reply_xml, strip_whitespace=False)["xml"]["Content"])


def now_s(clock: FrozenClock) -> int:
    return int(clock.now().timestamp())


@dataclass
class EchoHandler(Answering):
    """Answers every message with its own text (答：…) and remembers what it handled, in order."""

    seen: list[InboundMessage] = field(default_factory=list)

    async def answer(self, message: InboundMessage) -> Reply:
        self.seen.append(message)
        return f"答：{message.content}"


async def replay_spool_and_deliver(app: FastAPI) -> None:
    """Once the database answers: replay the app's inbound spool to the end, let the answers it queued finish,
    then run the worker until nothing is due (the answers go out by custom message)."""
    replayer = app.state.spool_replayer
    for _ in range(120):  # the replayer's own loop runs too; this only waits for it
        await replayer.run_once()
        if not replayer.spool.pending():
            break
        await asyncio.sleep(0.5)
    await app.state.wechat_router.dispatcher.drain()
    for _ in range(50):
        if (await app.state.worker.run_once()).claimed == 0:
            break

