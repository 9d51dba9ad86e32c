"""A whole bot (create_app) on a fresh database with a frozen clock, talked to through signed /wechat posts;
`steered_bot`: the same bot with its conversation behind a handler the test passes in and steers."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
import pytest
import xmltodict
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.agent.port import Conversation
from bot.conversation import ConversationHandler
from bot.settings import Settings
from bot.web.app import create_app
from bot.wechat.handler import Handler, Opening, Reply, Turn
from bot.wechat.messages import InboundMessage
from bot.wiring import delivery_worker
from fakes.wechat import event_message, sign_request, text_message
from schedule.clock import to_ms
from schedule.domain import User
from schedule.fastsql import Executor, Tx
from schedule.model import Base, DialogStateRow
from schedule.testing import FrozenClock

TOKEN = "convtoken"
SH = ZoneInfo("Asia/Shanghai")  # the fixture clock's zone (Thursday 2026-06-18 10:00 there)


def at(month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    """Epoch ms of a wall time in Shanghai in 2026, the fixture clock's year."""
    return to_ms(datetime(2026, month, day, hour, minute, tzinfo=SH))

_MSG_IDS = itertools.count(10_000)  # MsgIds are unique across users, like WeChat's


@dataclass
class RecordingAgent:
    """The agent port: answers with a fixed text and records what it was asked."""

    answer_text: str = "（智能助手的回答）"
    asked: list[str] = field(default_factory=list)

    async def answer(self, user: User, text: str, *, now: datetime, context: Conversation | None = None) -> str:
        self.asked.append(text)
        return self.answer_text


@dataclass
class Chat:
    """One WeChat user talking to the bot through the real webhook."""

    client: httpx.AsyncClient
    clock: FrozenClock
    openid: str = "o-alice"
    replies: list[str] = field(default_factory=list)

    async def post(self, body: str) -> str:
        params = sign_request(TOKEN, timestamp=int(self.clock.now().timestamp()), nonce=f"n{next(_MSG_IDS)}")
        response = await self.client.post("/wechat", params=params, content=body.encode("utf-8"))
        assert response.status_code == 200, response.text
        if response.text == "success":
            return ""
        reply = str(xmltodict.parse(response.text, strip_whitespace=False)["xml"]["Content"])
        self.replies.append(reply)
        return reply

    async def say(self, text: str) -> str:
        return await self.post(text_message(self.openid, text, msg_id=next(_MSG_IDS),
                                            create_time=int(self.clock.now().timestamp())))

    async def click(self, key: str) -> str:
        return await self.post(event_message(self.openid, "CLICK", key=key,
                                             create_time=int(self.clock.now().timestamp())))


@dataclass
class Bot:
    app: FastAPI
    sessions: async_sessionmaker[AsyncSession]
    clock: FrozenClock
    agent: RecordingAgent
    client: httpx.AsyncClient

    def chat(self, openid: str = "o-alice") -> Chat:
        return Chat(self.client, self.clock, openid)

    async def deliver(self, passes: int = 1) -> None:
        """The delivery worker's passes at the clock's time; no WeChat here, so pushes take the in-app rung."""
        worker = delivery_worker(self.app.state.settings, self.sessions, self.clock, None)
        for _ in range(passes):
            await worker.run_once()

    async def questions(self) -> list[DialogStateRow]:
        """The open questions (a `dialog_states` row also keeps the focus when no question is open)."""
        return [row for row in await self.rows(DialogStateRow) if isinstance(row, DialogStateRow) and row.pending_intent]

    async def rows(self, model: type[Base], **where: object) -> list[object]:
        async with self.sessions() as session:
            query = select(model)
            for name, value in where.items():
                query = query.where(getattr(model, name) == value)
            return list((await session.scalars(query.order_by(model.id if hasattr(model, "id") else None)))
                        .all())


def bot_settings(database_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {"DATABASE_URL": database_url, "DATABASE_AUTO_MIGRATE": False,
                                 "WECHAT_APP_ID": "wxconvtest", "WECHAT_APP_SECRET": "secret", "WECHAT_TOKEN": TOKEN,
                                 "WECHAT_API_BASE": "http://127.0.0.1:9"}
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class SteeredHandler:
    """The conversation behind a handler passed to create_app: it records every turn and every `finish`, and a
    test may take the opening read away (`opening_read`), answer turns itself without the database (`answer`),
    or add a statement that fails with the unit's last trip, its finishing writes and COMMIT (`failing_write`)."""

    conversation: ConversationHandler | None = None
    opening_read: bool = True
    answer: str | None = None
    failing_write: bool = False
    turns: list[Turn] = field(default_factory=list)
    finished: list[Turn] = field(default_factory=list)

    def _inner(self) -> ConversationHandler:
        assert self.conversation is not None, "built right after the app"
        return self.conversation

    def opening(self, user_id: int) -> Opening | None:
        return self._inner().opening(user_id) if self.opening_read else None

    async def turn(self, message: InboundMessage, unit: Executor) -> Turn:
        turn = Turn.answered(message, self.answer) if self.answer is not None else await self._inner().turn(message,
                                                                                                          unit)
        if self.failing_write:
            assert isinstance(unit, Tx)
            await unit.defer("INSERT INTO no_such_table (id) VALUES (1)")
        self.turns.append(turn)
        return turn

    async def finish(self, turn: Turn) -> Reply:
        self.finished.append(turn)
        return await self._inner().finish(turn)


@asynccontextmanager
async def running(database_url: str, engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession],
                  clock: FrozenClock, handler: Handler | None = None) -> AsyncIterator[Bot]:
    agent = RecordingAgent()
    settings = bot_settings(database_url)
    app = create_app(settings, clock=clock, engine=engine, agent=agent, run_worker=False, handler=handler)
    if isinstance(handler, SteeredHandler):  # the conversation create_app would have built, on the app's service
        handler.conversation = ConversationHandler(
            app.state.service, clock, agent=agent, links=app.state.page_links,
            meeting_offset_minutes=settings.H5_REMINDER_DEFAULT_MEETING_OFFSET_MINUTES,
            dialog_ttl_minutes=settings.H5_DIALOG_TTL_MINUTES, request_limit=settings.SCHEDULED_REQUESTS_PER_USER)
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                      base_url="http://test") as client:
        yield Bot(app, sessions, clock, agent, client)


@pytest.fixture
async def bot(database_url: str, engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession],
              clock: FrozenClock) -> AsyncIterator[Bot]:
    async with running(database_url, engine, sessions, clock) as bot:
        yield bot


@pytest.fixture
async def steered_bot(database_url: str, engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession],
                      clock: FrozenClock) -> AsyncIterator[tuple[Bot, SteeredHandler]]:
    handler = SteeredHandler()
    async with running(database_url, engine, sessions, clock, handler) as bot:
        yield bot, handler
