"""`/wechat` flows over ASGI: dedupe (handler runs once), slow answers via the outbox, events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from webhook_helpers import (
    RecordingHandler,
    bare_app,
    content_of,
    http,
    signed,
)

from bot.wechat.client import WeChatClient
from bot.wechat.dispatch import APOLOGY, GREETING, TEXT_ONLY
from bot.wechat.handler import Reply, Turn
from bot.wechat.messages import InboundMessage
from fakes.wechat import FakeWeChatAPI, event_message, text_message
from schedule.clock import to_ms
from schedule.db import create_engine, session_factory
from schedule.fastsql import Executor, orm
from schedule.model import (
    DeliveryLogRow,
    InboundMessageRow,
    OutboundMessageRow,
    ScheduleItemRow,
    UserRow,
)
from schedule.testing import FrozenClock

VECTORS: dict[str, Any] = json.loads(Path("/work/shared/eval/external/wechat_vectors.json").read_text("utf-8"))
DOC = VECTORS["official_doc_AAAAA"]
NEG = {case["id"]: case for case in VECTORS["derived_negative"]}
Sessions = async_sessionmaker[AsyncSession]


# --- dedupe: the handler runs once ------------------------------------------------------------

async def test_same_msgid_three_times_sequentially(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="一次")
    app, _ = bare_app(sessions, clock, handler)
    body = text_message("o-seq", "hi", msg_id=1001, create_time=1)
    async with http(app) as client:
        replies = [(await client.post("/wechat", params=signed(clock, f"n{i}"), content=body)).text
                   for i in range(3)]
    assert len(handler.seen) == 1
    assert len(set(replies)) == 1 and content_of(replies[0]) == "一次"


async def test_same_msgid_three_times_concurrently(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="一次", delay_s=0.05)
    app, _ = bare_app(sessions, clock, handler)
    body = text_message("o-con", "hi", msg_id=1002, create_time=1)
    async with http(app) as client:
        rs = await asyncio.gather(*(client.post("/wechat", params=signed(clock, f"n{i}"), content=body)
                                    for i in range(3)))
    assert len(handler.seen) == 1
    assert all(r.status_code == 200 for r in rs)
    assert sorted(r.text == "success" for r in rs) == [False, True, True]


async def test_two_app_instances_on_one_database_run_the_handler_once(database_url: str, engine: object,
                                                                      clock: FrozenClock) -> None:
    engines = [create_engine(database_url) for _ in range(2)]
    handlers = [RecordingHandler(reply="一次", delay_s=0.05) for _ in range(2)]
    apps = [bare_app(session_factory(e), clock, h)[0] for e, h in zip(engines, handlers, strict=True)]
    body = text_message("o-two", "hi", msg_id=1003, create_time=1)
    try:
        async with http(apps[0]) as a, http(apps[1]) as b:
            rs = await asyncio.gather(*(c.post("/wechat", params=signed(clock, f"n{i}"), content=body)
                                        for i, c in enumerate([a, b, a, b, a, b])))
            later = await b.post("/wechat", params=signed(clock, "late"), content=body)
    finally:
        for e in engines:
            await e.dispose()
    assert sum(len(h.seen) for h in handlers) == 1
    assert all(r.status_code == 200 for r in rs)
    assert content_of(later.text) == "一次"  # a retry after completion gets the stored reply


async def test_events_deduplicate_on_sender_time_event_and_key(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        for key in ("TODAY", "TODAY", "WEEK"):
            await client.post("/wechat", params=signed(clock),
                              content=event_message("o-evt", "CLICK", create_time=10, key=key))
    assert [m.content for m in handler.seen] == ["今天有什么安排", "这周有什么安排"]


# --- slow handler: success now, answer through the outbox -------------------------------------

async def test_slow_handler_acknowledges_and_queues_the_answer(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="慢慢想好的答案", delay_s=0.5)
    async with FakeWeChatAPI() as api:
        client = WeChatClient.over_http(app_id=api.app_id, app_secret=api.app_secret, sessions=sessions,
                                        clock=clock, api_base=api.base_url)
        app, router = bare_app(sessions, clock, handler, client=client, reply_budget_s=0.2)
        body = text_message("o-slow", "帮我规划一下", msg_id=2001, create_time=1)
        loop = asyncio.get_running_loop()
        async with http(app) as http_client:
            started = loop.time()
            r = await http_client.post("/wechat", params=signed(clock), content=body)
            elapsed = loop.time() - started
            assert (r.status_code, r.text) == (200, "success")
            assert elapsed < 0.45
            retry = await http_client.post("/wechat", params=signed(clock, "r"), content=body)
            assert retry.text == "success"
            async with sessions() as session:  # the sender is on the row before the answer is ready
                pending = await session.scalar(select(InboundMessageRow).where(InboundMessageRow.dedupe_key == "msg:o-slow:2001"))
            assert pending is not None and pending.status == "processing" and pending.user_id is not None
            await router.dispatcher.drain()
            again = await http_client.post("/wechat", params=signed(clock, "r2"), content=body)
            assert again.text == "success"
        await client.aclose()
        assert [c.body for c in api.calls_to("message/custom/typing")] == [{"touser": "o-slow", "command": "Typing"}]
    assert len(handler.seen) == 1
    async with sessions() as session:
        rows = (await session.scalars(select(OutboundMessageRow))).all()
        inbound = await session.scalar(select(InboundMessageRow).where(InboundMessageRow.dedupe_key == "msg:o-slow:2001"))
    assert [(row.kind, row.payload["text"], row.idempotency_key) for row in rows] == \
        [("agent_reply", "慢慢想好的答案", "reply:msg:o-slow:2001")]
    assert inbound is not None and inbound.status == "done"


async def test_long_reply_passive_first_part_rest_queued(sessions: Sessions, clock: FrozenClock) -> None:
    long_text = "这是一条很长的行程说明。\n" * 200
    app, _ = bare_app(sessions, clock, RecordingHandler(reply=long_text))
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o", "x", msg_id=9, create_time=1))
    first = content_of(r.text)
    assert len(first.encode("utf-8")) <= 2048
    async with sessions() as session:
        queued = (await session.scalars(select(OutboundMessageRow))).one()
    assert first + queued.payload["text"] == long_text.strip()


# --- events and other message types -----------------------------------------------------------

async def test_subscribe_greets_and_opens_a_click_window(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock),
                              content=event_message("o-sub", "subscribe", create_time=20))
    assert content_of(r.text) == GREETING and not handler.seen
    async with sessions() as session:
        user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-sub"))
    assert user is not None and user.subscribed and user.window_kind == "click"
    assert user.window_opened_at == to_ms(clock.now())


async def test_unsubscribe_forgets_the_user(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        await client.post("/wechat", params=signed(clock), content=text_message("o-bye", "x", msg_id=31, create_time=1))
        async with sessions.begin() as session:
            uid = await session.scalar(select(UserRow.id).where(UserRow.wechat_openid == "o-bye"))
            session.add(ScheduleItemRow(user_id=uid, kind="task", title="t", timezone="Asia/Shanghai",
                                        created_at=0, updated_at=0))
        r = await client.post("/wechat", params=signed(clock),
                              content=event_message("o-bye", "unsubscribe", create_time=30))
    assert (r.status_code, r.text) == (200, "success")
    async with sessions() as session:
        user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-bye"))
        items = await session.scalar(select(func.count()).select_from(ScheduleItemRow))
    assert user is not None and not user.subscribed and items == 0


async def test_text_message_updates_the_window(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        await client.post("/wechat", params=signed(clock), content=text_message("o-w", "x", msg_id=41, create_time=1))
    async with sessions() as session:
        user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-w"))
    assert user is not None and user.last_user_message_at == to_ms(clock.now()) and user.window_kind == "message"


SAMPLES = {s["id"]: s["xml"] for s in VECTORS["sample_inbound_xml"]["messages"]}


@pytest.mark.parametrize(("sample", "expect"), [
    ("image", TEXT_ONLY), ("event_view", "success"), ("event_subscribe_msg_popup", "success"),
    ("event_scan", GREETING), ("event_subscribe_qrscene", GREETING),
])
async def test_samples_answered(sessions: Sessions, clock: FrozenClock, sample: str, expect: str) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=SAMPLES[sample])
    assert r.status_code == 200 and not handler.seen
    assert (r.text if expect == "success" else content_of(r.text)) == expect


async def test_voice_with_recognition_goes_to_the_handler(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    xml = SAMPLES["voice"].replace("</xml>", "<Recognition><![CDATA[明天开会]]></Recognition></xml>")
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=xml)
    assert content_of(r.text) == "收到" and handler.seen[0].content == "明天开会"


async def test_template_job_finish_is_recorded(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=SAMPLES["event_templatesendjobfinish"])
    assert r.text == "success"
    async with sessions() as session:
        log_row = (await session.scalars(select(DeliveryLogRow))).one()
    assert (log_row.channel, log_row.status, log_row.provider_message_id) == ("wechat_template", "success", "200163836")


# --- the answer stored with the handler's own writes ------------------------------------------

class StoringHandler(RecordingHandler):
    """Writes an item in the message's unit of work and answers inside it (a final turn), as the conversation
    does; `finished` lists the turns answered after the unit instead (`finish`)."""

    def __init__(self, reply: str, *, fail_after_store: bool = False, before_store: Any = None) -> None:
        super().__init__(reply=reply)
        self.fail_after_store, self.before_store = fail_after_store, before_store
        self.finished: list[Turn] = []

    async def turn(self, message: InboundMessage, unit: Executor) -> Turn:
        self.seen.append(message)
        (await orm(unit)).add(ScheduleItemRow(user_id=message.user_id, kind="task", title="带材料",
                                              timezone="Asia/Shanghai", created_at=0, updated_at=0))
        if self.before_store is not None:
            self.before_store()
        if self.fail_after_store:
            raise RuntimeError("failed after writing")
        return Turn.answered(message, self.reply)

    async def finish(self, turn: Turn) -> Reply:
        self.finished.append(turn)
        return await super().finish(turn)


async def _stored(sessions: Sessions, key: str) -> tuple[InboundMessageRow | None, int, list[str], UserRow | None]:
    async with sessions() as session:
        inbound = await session.scalar(select(InboundMessageRow).where(InboundMessageRow.dedupe_key == key))
        items = await session.scalar(select(func.count()).select_from(ScheduleItemRow))
        queued = [row.payload["text"] for row in (await session.scalars(select(OutboundMessageRow))).all()]
        user = await session.scalar(select(UserRow))
    return inbound, items or 0, queued, user


async def test_a_final_answer_is_stored_with_the_handlers_writes(sessions: Sessions, clock: FrozenClock) -> None:
    long_text = "好的，已记录：带材料。\n" * 200  # overflow: the rest is queued in that same transaction
    handler = StoringHandler(long_text)
    app, _router = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o-in", "x", msg_id=51, create_time=1))
        retry = await client.post("/wechat", params=signed(clock), content=text_message("o-in", "x", msg_id=51,
                                                                                          create_time=1))
    inbound, items, queued, user = await _stored(sessions, "msg:o-in:51")
    assert handler.finished == []  # answered inside the unit: no transaction after it to finish the message
    assert content_of(r.text) + queued[0] == long_text.strip() and len(queued) == 1
    assert inbound is not None and inbound.status == "done" and inbound.reply == r.text and retry.text == r.text
    assert items == 1 and user is not None and user.last_user_message_at == to_ms(clock.now())


async def test_a_unit_that_fails_after_its_writes_is_answered_as_failed(sessions: Sessions,
                                                                        clock: FrozenClock) -> None:
    handler = StoringHandler("好的，已记录。", fail_after_store=True)
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o-rb", "x", msg_id=52, create_time=1))
    inbound, items, queued, user = await _stored(sessions, "msg:o-rb:52")
    assert content_of(r.text) == APOLOGY and items == 0 and queued == []  # nothing claims it was saved
    assert [turn.failed for turn in handler.finished] == [True]
    assert inbound is not None and inbound.status == "done" and inbound.reply == r.text
    assert user is not None and user.last_user_message_at == to_ms(clock.now())


async def test_a_final_answer_after_wechat_stopped_waiting_is_queued(sessions: Sessions,
                                                                            clock: FrozenClock) -> None:
    now = [0.0]

    def spend_the_budget() -> None:
        now[0] += 5.0

    handler = StoringHandler("好的，已记录。", before_store=spend_the_budget)
    app, _ = bare_app(sessions, clock, handler, monotonic=lambda: now[0])
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o-lt", "x", msg_id=53, create_time=1))
    inbound, items, queued, _user = await _stored(sessions, "msg:o-lt:53")
    assert (r.text, queued, items) == ("success", ["好的，已记录。"], 1)  # answered by a customer-service message
    assert inbound is not None and inbound.status == "done" and inbound.reply == "success"
