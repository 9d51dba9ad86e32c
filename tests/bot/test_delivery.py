"""Pushes end to end: outbox → worker → WeChat channels → the fake WeChat API over loopback HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import select
from webhook_helpers import RecordingHandler, settings, signed

from bot.web.app import create_app
from fakes.wechat import FakeWeChatAPI, text_message
from schedule import outbox, window
from schedule.clock import now_ms, to_ms
from schedule.domain import NewItem, NewReminder
from schedule.model import DeliveryLogRow, OutboundMessageRow, UserRow
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")


@asynccontextmanager
async def app_with(api: FakeWeChatAPI, database_url: str, clock: FrozenClock, handler: RecordingHandler | None = None,
                   **overrides: object) -> AsyncIterator[FastAPI]:
    config = settings(WECHAT_API_BASE=api.base_url, WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret,
                      DATABASE_URL=database_url, **overrides)
    app = create_app(config, clock=clock, handler=handler, run_worker=False, reply_budget_s=0.05)
    async with LifespanManager(app):
        yield app


async def user_who_wrote(app: FastAPI, clock: FrozenClock, openid: str) -> int:
    """A user who just sent a message: their 48 h customer-service window is open."""
    user = await app.state.service.get_or_create_user(openid)
    async with app.state.sessions.begin() as session:
        await window.record_message(session, user.id, now_ms(clock))
    return int(user.id)


async def queue_text(app: FastAPI, clock: FrozenClock, openid: str, text: str, *, kind: str = "notice") -> int:
    """A queued push to a user who just wrote: a notice (an answer's kind), or `kind` ("reminder", "digest")."""
    user_id = await user_who_wrote(app, clock, openid)
    async with app.state.sessions.begin() as session:
        row = await outbox.enqueue(session, user_id=user_id, idempotency_key=f"t:{openid}:{len(text)}:{text[:8]}",
                                   kind=kind, payload={"text": text, "title": "通知"}, now_ms=now_ms(clock))
        return int(row.id)


async def outbox_row(app: FastAPI, row_id: int) -> OutboundMessageRow:
    async with app.state.sessions() as session:
        row = await session.get(OutboundMessageRow, row_id)
        assert row is not None
        return row


async def test_slow_answer_is_acked_then_delivered_by_the_worker(database_url: str, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="想好了：明天 15:00 会议", delay_s=0.3)
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, handler) as app, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        ack = await client.post("/wechat", params=signed(clock),
                                content=text_message("o-slow", "明天下午三点开会", msg_id=901, create_time=1))
        assert ack.text == "success"
        await app.state.wechat_router.dispatcher.drain()
        report = await app.state.worker.run_once()
        assert report.sent == 1
    [send] = api.calls_to("message/custom/send")
    assert send.body == {"touser": "o-slow", "msgtype": "text", "text": {"content": "想好了：明天 15:00 会议"}}


async def test_due_reminder_is_pushed_as_a_custom_message(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        user_id = await user_who_wrote(app, clock, "o-remind")
        start = to_ms(datetime(2026, 6, 18, 15, 0, tzinfo=SH))
        await app.state.service.create_item(user_id, NewItem(
            kind="event", title="会议", timezone="Asia/Shanghai", start_at=start,
            reminders=(NewReminder(remind_at=start - 3_600_000, offset_minutes=60),)))
        assert (await app.state.worker.run_once()).sent == 0
        clock.set(datetime(2026, 6, 18, 14, 0, 1, tzinfo=SH))
        assert (await app.state.worker.run_once()).sent == 1
    [send] = api.calls_to("message/custom/send")
    assert send.body["touser"] == "o-remind"
    assert send.body["text"]["content"] == "⏰ 提醒：6月18日（周四）15:00 会议开始，还有 60 分钟。"


async def test_long_text_goes_out_in_parts_with_every_receipt(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI(custom_msgid=True) as api, app_with(api, database_url, clock) as app:
        row_id = await queue_text(app, clock, "o-long", "长" * 1500)  # 4500 bytes of UTF-8
        await app.state.worker.run_once()
        row = await outbox_row(app, row_id)
    sends = api.calls_to("message/custom/send")
    assert len(sends) == 3
    assert all(len(c.body["text"]["content"].encode()) <= 2048 for c in sends)
    assert row.status == "sent"
    assert sorted(row.receipt["parts"]) == ["0", "1", "2"]
    assert all(row.receipt["parts"].values())


async def test_token_error_refreshes_once_and_the_send_succeeds(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        row_id = await queue_text(app, clock, "o-auth", "你好")
        api.script("message/custom/send", 40001)
        await app.state.worker.run_once()
        assert (await outbox_row(app, row_id)).status == "sent"
    first, retry = api.calls_to("message/custom/send")  # one refresh, one retry, no loop
    assert first.access_token != retry.access_token
    assert api.calls_to("stable_token")[-1].answer["access_token"] == retry.access_token


async def test_closed_window_falls_back_to_the_template_message(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, WECHAT_TEMPLATE_ID_REMINDER="tpl-1") as app:
        row_id = await queue_text(app, clock, "o-window", "会议提醒", kind="reminder")
        api.script("message/custom/send", 45015)
        await app.state.worker.run_once()
        await app.state.worker.run_once()
        row = await outbox_row(app, row_id)
        async with app.state.sessions() as session:
            logs = (await session.scalars(select(DeliveryLogRow).order_by(DeliveryLogRow.id))).all()
    [template] = api.calls_to("message/template/send")
    assert template.body["template_id"] == "tpl-1"
    assert template.body["client_msg_id"].startswith("sb")
    assert (row.status, row.channel) == ("sent", "template")
    assert [(log.channel, log.status, log.error_code) for log in logs] == [
        ("wechat", "failed", "45015"), ("template", "success", None)]


async def test_no_message_for_48_hours_skips_the_custom_message(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, WECHAT_TEMPLATE_ID_REMINDER="tpl-1") as app:
        row_id = await queue_text(app, clock, "o-quiet", "会议提醒", kind="reminder")
        clock.advance(hours=48, seconds=1)
        await app.state.worker.run_once()
        await app.state.worker.run_once()
        row = await outbox_row(app, row_id)
    assert api.calls_to("message/custom/send") == []  # closed window: no doomed platform call
    assert (row.status, row.channel) == ("sent", "template")


async def test_sixth_push_in_a_window_goes_to_the_next_rung(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        ids = [await queue_text(app, clock, "o-chatty", f"第{n}条") for n in range(6)]
        await app.state.worker.run_once()
        rows = [await outbox_row(app, row_id) for row_id in ids]
    assert len(api.calls_to("message/custom/send")) == 5
    assert sorted(r.channel for r in rows if r.status == "pending") == ["inapp"]


async def test_closed_window_without_template_waits_in_the_inapp_queue(database_url: str,
                                                                       clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        row_id = await queue_text(app, clock, "o-window", "会议提醒")
        api.script("message/custom/send", 45047)
        await app.state.worker.run_once()
        row = await outbox_row(app, row_id)
    assert (row.status, row.channel) == ("pending", "inapp")


async def test_transient_error_is_retried_later(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        row_id = await queue_text(app, clock, "o-busy", "稍后")
        api.script("message/custom/send", -1)
        await app.state.worker.run_once()
        assert (await outbox_row(app, row_id)).status == "pending"
        clock.advance(minutes=10)
        await app.state.worker.run_once()
        assert (await outbox_row(app, row_id)).status == "sent"


async def test_unfollowed_user_is_not_pushed_again(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        row_id = await queue_text(app, clock, "o-gone", "再见")
        api.script("message/custom/send", 43004)
        await app.state.worker.run_once()
        async with app.state.sessions() as session:
            user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-gone"))
        assert (await outbox_row(app, row_id)).status == "failed"
    assert user is not None
    assert user.subscribed is False


async def test_an_answer_never_goes_through_the_reminder_template(database_url: str, clock: FrozenClock) -> None:
    """Answers are not reminders: a late answer whose window is closed goes to the in-app queue, not onto the reminder
    template cut to 20 characters with an empty time."""
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, WECHAT_TEMPLATE_ID_REMINDER="tpl-1") as app:
        answer = await queue_text(app, clock, "o-late", "想好了：明天下午三点和王总在三楼会议室开会，记得带合同")
        api.script("message/custom/send", 45015)
        for _ in range(3):
            await app.state.worker.run_once()
        row = await outbox_row(app, answer)
    assert api.calls_to("message/template/send") == []
    assert (row.status, row.channel) == ("pending", "inapp")  # shown with the user's next reply, in full


async def test_pushes_leave_the_fifth_window_slot_to_an_answer(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        reminders = [await queue_text(app, clock, "o-busy", f"提醒{n}", kind="reminder") for n in range(5)]
        await app.state.worker.run_once()
        answer = await queue_text(app, clock, "o-busy", "这是你要的回答")
        await app.state.worker.run_once()
        rows = [await outbox_row(app, i) for i in reminders]
        answered = await outbox_row(app, answer)
        async with app.state.sessions() as session:
            user = (await session.scalars(select(UserRow).where(UserRow.wechat_openid == "o-busy"))).one()
    assert sorted((r.status, r.channel) for r in rows) == [("pending", "inapp")] + [("sent", "wechat")] * 4
    assert (answered.status, answered.channel) == ("sent", "wechat")
    assert len(api.calls_to("message/custom/send")) == 5 and user.window_sent_count == 5


async def test_the_window_counts_every_part_of_a_split_text(database_url: str, clock: FrozenClock) -> None:
    """One 5,400-byte answer is three custom messages to WeChat: with four short ones after it, the window's
    five slots hold it and two of them (not seven messages, the 6th of which WeChat refuses with 45047)."""
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        long = await queue_text(app, clock, "o-long", "会" * 1800)  # 5,400 bytes of UTF-8
        clock.advance(seconds=1)
        short = [await queue_text(app, clock, "o-long", f"短消息{n}") for n in range(4)]
        for _ in range(2):
            await app.state.worker.run_once()
        rows = [await outbox_row(app, i) for i in (long, *short)]
        async with app.state.sessions() as session:
            user = (await session.scalars(select(UserRow).where(UserRow.wechat_openid == "o-long"))).one()
    assert len(api.calls_to("message/custom/send")) == 5
    assert [(r.status, r.channel) for r in rows] == [("sent", "wechat")] * 3 + [("pending", "inapp")] * 2
    assert user.window_sent_count == 5
