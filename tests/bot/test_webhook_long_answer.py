"""A long answer (over 2048 bytes: a passive head, the rest pushed) reaches the user in order, through the real
webhook, the worker and the fake WeChat API: when the finishing write stalls past WeChat's wait, the head
goes first with the rest; when the head goes passively, the rest follows it at once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from webhook_helpers import FakeMonotonic, bare_app, content_of, http, settings, signed

from bot.wechat.handler import Answering, Reply
from bot.wechat.messages import InboundMessage
from bot.wechat.xml import split_utf8
from bot.wiring import delivery_worker, wechat_client
from fakes.wechat import FakeWeChatAPI, text_message
from schedule.testing import FrozenClock
from schedule.worker import DeliveryWorker

Sessions = async_sessionmaker[AsyncSession]
ANSWER = "第一段：" + "长" * 700 + "第二段：" + "久" * 700 + "第三段：完。"  # about 4.2 kB: three parts


@dataclass
class LongAnswer(Answering):
    """Answers ANSWER after `thinking_s` of the fake monotonic clock; `ready` notes each answer as it is ready."""

    mono: FakeMonotonic
    thinking_s: float = 0.0
    ready: list[bool] = field(default_factory=list)

    async def answer(self, message: InboundMessage) -> Reply:
        self.mono.now += self.thinking_s
        self.ready.append(True)
        return ANSWER


@asynccontextmanager
async def worker_for(api: FakeWeChatAPI, sessions: Sessions, clock: FrozenClock) -> AsyncIterator[DeliveryWorker]:
    config = settings(WECHAT_API_BASE=api.base_url, WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret)
    client = wechat_client(config, sessions, clock)
    assert client is not None
    try:
        yield delivery_worker(config, sessions, clock, client)
    finally:
        await client.aclose()


def sent_texts(api: FakeWeChatAPI) -> list[str]:
    return [c.body["text"]["content"] for c in api.calls_to("message/custom/send")]


async def test_a_long_answer_whose_finishing_write_stalls_goes_out_head_first(
        engine: AsyncEngine, sessions: Sessions, clock: FrozenClock) -> None:
    mono = FakeMonotonic()
    handler = LongAnswer(mono, thinking_s=3.5)

    def stalled_write(*_args: object) -> None:
        if handler.ready:  # the answer is ready at 3.5 s and its finishing write takes a second: WeChat gave up
            handler.ready.clear()
            mono.now += 1.0

    event.listen(engine.sync_engine, "checkout", stalled_write)
    app, router = bare_app(sessions, clock, handler, monotonic=mono)  # type: ignore[arg-type]
    async with FakeWeChatAPI() as api, worker_for(api, sessions, clock) as worker:
        async with http(app) as client:
            r = await client.post("/wechat", params=signed(clock),
                                  content=text_message("o-long", "帮我写个长计划", msg_id=811, create_time=1))
            await router.dispatcher.drain()
        event.remove(engine.sync_engine, "checkout", stalled_write)
        for _ in range(2):
            await worker.run_once()
    assert r.text == "success"  # the passive reply came too late to be sent
    assert sent_texts(api) == split_utf8(ANSWER)  # head, middle, tail: in order, once each


async def test_after_a_passive_head_the_rest_of_a_long_answer_follows_at_once(
        sessions: Sessions, clock: FrozenClock) -> None:
    handler = LongAnswer(FakeMonotonic())
    app, router = bare_app(sessions, clock, handler, monotonic=handler.mono)  # type: ignore[arg-type]
    async with FakeWeChatAPI() as api, worker_for(api, sessions, clock) as worker:
        async with http(app) as client:
            r = await client.post("/wechat", params=signed(clock),
                                  content=text_message("o-long2", "帮我写个长计划", msg_id=812, create_time=1))
            await router.dispatcher.drain()
        await worker.run_once()
    head, *rest = split_utf8(ANSWER)
    assert content_of(r.text) == head
    assert "".join(sent_texts(api)) == "".join(rest)
