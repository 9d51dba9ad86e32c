"""Faults at the webhook lose nothing and resurrect nothing (docs/delivery.md#late-answers): a finishing write that
stalls past the budget queues the answer, an unsubscribe during a slow answer wins, a slow answer
records the user's window when WeChat stops waiting, dedupe keys include the sender."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from webhook_helpers import FakeMonotonic, bare_app, content_of, http, settings, signed

from bot.wechat.handler import Answering, Reply
from bot.wechat.messages import InboundMessage
from bot.wiring import RECOVERY_MARGIN_MS, answer_budget_ms
from fakes.wechat import event_message, text_message
from schedule.clock import now_ms
from schedule.domain import NewItem
from schedule.firing import Scheduler
from schedule.model import InboundMessageRow, OutboundMessageRow, ScheduleItemRow, UserRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]


@dataclass
class GatedHandler(Answering):
    """Answers once `gate` opens; `write` (optional) stores an item for the user first, as the agent would."""

    service: ScheduleService
    reply: str
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    write: bool = False
    seen: list[InboundMessage] = field(default_factory=list)

    async def answer(self, message: InboundMessage) -> Reply:
        self.seen.append(message)
        await self.gate.wait()
        if self.write and message.user_id is not None:
            await self.service.create_item(message.user_id, NewItem(kind="task", title="看牙医",
                                                                    timezone="Asia/Shanghai"))
        return self.reply


async def rows(sessions: Sessions, model: Any) -> list[Any]:
    async with sessions() as session:
        return list((await session.scalars(select(model))).all())


async def test_an_unsubscribe_during_a_slow_answer_wins(sessions: Sessions, clock: FrozenClock) -> None:
    service = ScheduleService(sessions, clock)
    handler = GatedHandler(service, "你的预约：明天九点看牙医", write=True)
    app, router = bare_app(sessions, clock, handler, reply_budget_s=0.05)
    async with http(app) as client:
        ack = await client.post("/wechat", params=signed(clock),
                                content=text_message("o-leave", "帮我记一下看牙", msg_id=801, create_time=1))
        assert ack.text == "success"  # the answer is slow: it would come through the outbox
        bye = await client.post("/wechat", params=signed(clock),
                                content=event_message("o-leave", "unsubscribe", create_time=2))
        assert bye.text == "success"
        handler.gate.set()
        await router.dispatcher.drain()
    [user] = await rows(sessions, UserRow)
    outbox = await rows(sessions, OutboundMessageRow)
    inbound = await rows(sessions, InboundMessageRow)
    assert user.subscribed is False  # not resurrected by the answer's finishing write
    assert not any("看牙医" in str(r.payload) for r in outbox)  # no pending row holds their text
    assert not any("看牙医" in (r.reply or "") for r in inbound)
    assert [i for i in await rows(sessions, ScheduleItemRow) if i.status != "deleted"] == []


async def test_a_slow_answer_records_the_window_when_wechat_stops_waiting(sessions: Sessions,
                                                                          clock: FrozenClock) -> None:
    service = ScheduleService(sessions, clock)
    handler = GatedHandler(service, "想好了")
    app, router = bare_app(sessions, clock, handler, reply_budget_s=0.05)
    async with http(app) as client:
        ack = await client.post("/wechat", params=signed(clock),
                                content=text_message("o-wait", "帮我规划下周", msg_id=802, create_time=1))
        [user] = await rows(sessions, UserRow)  # the handler is still thinking
        handler.gate.set()
        await router.dispatcher.drain()
    assert ack.text == "success"
    assert (user.window_kind, user.window_opened_at, user.last_user_message_at) == \
        ("message", now_ms(clock), now_ms(clock))
    [answer] = await rows(sessions, OutboundMessageRow)
    assert (answer.kind, answer.channel, answer.payload["text"]) == ("agent_reply", "wechat", "想好了")


async def test_the_not_handled_notice_waits_for_the_answers_whole_budget(sessions: Sessions,
                                                                         clock: FrozenClock) -> None:
    config = settings(AGENT_TIMEOUT_S=20, AGENT_MAX_RETRIES=2, AGENT_MAX_TOOL_ROUNDS=4)
    assert answer_budget_ms(config) == 240_000  # 20 s × 3 tries × 4 tool rounds
    user = await ScheduleService(sessions, clock).get_or_create_user("o-slow-agent")
    async with sessions.begin() as session:
        session.add(InboundMessageRow(dedupe_key="msg:o-slow-agent:1", user_id=user.id, received_at=now_ms(clock),
                                      status="processing"))
    scheduler = Scheduler(sessions, clock, reminder_text=lambda *_: "", digest_text=lambda *_: "",
                          recovery_after_ms=answer_budget_ms(config) + RECOVERY_MARGIN_MS)
    clock.advance(seconds=61)  # the old horizon: the answer may still be coming
    assert (await scheduler.tick()).inbound_recovered == 0
    clock.advance(seconds=240)
    assert (await scheduler.housekeeping(clock.now())) == 1


async def test_a_finishing_write_that_stalls_past_the_budget_queues_the_answer(
        engine: AsyncEngine, sessions: Sessions, clock: FrozenClock) -> None:
    mono = FakeMonotonic()
    stalls: list[bool] = []

    @dataclass
    class AtThreeAndAHalf(Answering):
        seen: list[InboundMessage] = field(default_factory=list)

        async def answer(self, message: InboundMessage) -> Reply:
            self.seen.append(message)
            mono.now += 3.5  # the answer is ready at 3.5 s …
            stalls.append(True)
            return "明天 15:00 和王总开会，已记下"

    def stalled_write(*_args: object) -> None:
        if stalls:  # … and the finishing write takes a second: WeChat has stopped waiting by then
            stalls.clear()
            mono.now += 1.0

    event.listen(engine.sync_engine, "checkout", stalled_write)
    handler = AtThreeAndAHalf()
    app, router = bare_app(sessions, clock, handler, monotonic=mono)  # type: ignore[arg-type]
    body = text_message("o-stall", "明天下午三点和王总开会", msg_id=803, create_time=1)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=body)
        retry = await client.post("/wechat", params=signed(clock), content=body)  # WeChat's retry
        await router.dispatcher.drain()
    event.remove(engine.sync_engine, "checkout", stalled_write)
    assert r.text == "success" and retry.text == "success"  # no passive copy the retry would show again
    [queued] = await rows(sessions, OutboundMessageRow)
    assert (queued.kind, queued.payload["text"]) == ("agent_reply", "明天 15:00 和王总开会，已记下")
    assert len(handler.seen) == 1


async def test_dedupe_keys_include_the_sender(sessions: Sessions, clock: FrozenClock) -> None:
    """The same MsgId from two users is two messages, and one user's retry never gets another's reply."""

    @dataclass
    class EchoHandler(Answering):
        seen: list[InboundMessage] = field(default_factory=list)

        async def answer(self, message: InboundMessage) -> Reply:
            self.seen.append(message)
            return f"{message.openid} 的预约：{message.content}"

    handler = EchoHandler()
    app, _ = bare_app(sessions, clock, handler)  # type: ignore[arg-type]
    async with http(app) as client:
        alice = await client.post("/wechat", params=signed(clock),
                                  content=text_message("o-alice", "周五九点看牙医", msg_id=9000, create_time=1))
        bob = await client.post("/wechat", params=signed(clock),
                                content=text_message("o-bob", "明天开会", msg_id=9000, create_time=2))
        bob_retry = await client.post("/wechat", params=signed(clock),
                                      content=text_message("o-bob", "明天开会", msg_id=9000, create_time=2))
    assert content_of(alice.text) == "o-alice 的预约：周五九点看牙医"
    assert content_of(bob.text) == content_of(bob_retry.text) == "o-bob 的预约：明天开会"
    assert [m.openid for m in handler.seen] == ["o-alice", "o-bob"]


async def test_two_template_job_events_of_one_second_are_two_events(sessions: Sessions, clock: FrozenClock) -> None:
    def job(msg_id: str) -> str:
        return ("<xml><ToUserName><![CDATA[gh]]></ToUserName><FromUserName><![CDATA[o-tpl]]></FromUserName>"
                "<CreateTime>1395658920</CreateTime><MsgType><![CDATA[event]]></MsgType>"
                f"<Event><![CDATA[TEMPLATESENDJOBFINISH]]></Event><MsgID>{msg_id}</MsgID>"
                "<Status><![CDATA[failed:user block]]></Status></xml>")

    user = await ScheduleService(sessions, clock).get_or_create_user("o-tpl")
    async with sessions.begin() as session:
        session.add_all([OutboundMessageRow(user_id=user.id, idempotency_key=f"tpl:{n}", kind="reminder",
                                            payload={"text": "提醒"}, channel="template", status="sent", attempts=1,
                                            next_attempt_at=0, receipt={"parts": {"0": msgid}}, created_at=0,
                                            updated_at=0) for n, msgid in enumerate(["2000041", "2000042"])])
    app, _ = bare_app(sessions, clock, GatedHandler(ScheduleService(sessions, clock), ""))
    async with http(app) as client:
        for msgid in ("2000041", "2000042"):
            assert (await client.post("/wechat", params=signed(clock), content=job(msgid))).text == "success"
    assert sorted(r.status for r in await rows(sessions, OutboundMessageRow)) == ["failed", "failed"]
