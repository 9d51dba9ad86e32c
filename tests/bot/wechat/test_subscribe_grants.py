"""One-time 订阅通知 grants are neither lost nor spent twice, through the real webhook and worker with the fake
WeChat API: a call that never reached bizsend gives the grant back; a bizsend with no answer is retried on its
own grant and never followed by a template message; digests keep the grant for reminders and go by template
with a page link; grant events in WeChat's JSON format count, and two in one second are both recorded."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from fastapi import FastAPI
from sqlalchemy import select
from test_subscribe_messages import TEMPLATE, config, drain, grant, grants, post, running, say

from bot.web.app import create_app
from fakes.wechat import FakeWeChatAPI, grant_event, grant_event_json
from schedule.model import OutboundMessageRow
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
REMINDER_TEMPLATE = "tmpl-reminder"
WECHAT_TIME = r"\d{4}年\d{1,2}月\d{1,2}日 \d{2}:\d{2}"


async def rows(app: FastAPI, kind: str = "reminder") -> list[tuple[str, str, str | None]]:
    async with app.state.sessions() as session:
        found = (await session.scalars(select(OutboundMessageRow).where(OutboundMessageRow.kind == kind)
                                       .order_by(OutboundMessageRow.id))).all()
    return [(r.channel, r.status, r.failure_class) for r in found]


async def test_a_timeout_before_any_bizsend_gives_the_grant_back(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, WECHAT_API_TIMEOUT_S=0.3), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "下周三上午九点提醒我交材料")
            await grant(client, clock, "subscribe_msg_popup_event", "accept")
            api.stall("stable_token", 1.0)  # the access token never comes in time: bizsend is not called
            clock.advance(timedelta(days=6))
            await drain(app)
            assert api.calls_to("message/subscribe/bizsend") == []
            assert await grants(app) == [(TEMPLATE, "accept", 1)]  # given back: it was never used
            clock.advance(minutes=1)
            await drain(app)
            assert await grants(app) == [(TEMPLATE, "accept", 0)]
            assert await rows(app) == [("subscribe", "sent", "transient")]
    assert len(api.calls_to("message/subscribe/bizsend")) == 1


@pytest.mark.parametrize("granted", [1, 2])
async def test_a_bizsend_with_no_answer_is_retried_on_its_own_grant_and_never_sent_by_template(
        database_url: str, clock: FrozenClock, granted: int) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, WECHAT_API_TIMEOUT_S=0.3,
                                WECHAT_TEMPLATE_ID_REMINDER=REMINDER_TEMPLATE), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "下周三上午九点提醒我交材料")
            for _ in range(granted):
                await grant(client, clock, "subscribe_msg_popup_event", "accept")
            api.stall("message/subscribe/bizsend", 1.0)  # WeChat delivers it, its answer comes too late
            clock.advance(timedelta(days=6))
            await drain(app)
            assert await rows(app) == [("subscribe", "pending", "unknown")]  # unknown after send: no next rung
            assert await grants(app) == [(TEMPLATE, "accept", granted - 1)]
            clock.advance(minutes=1)
            await drain(app)
            assert await rows(app) == [("subscribe", "sent", "unknown")]
            assert await grants(app) == [(TEMPLATE, "accept", granted - 1)]  # one reminder spends one grant
    assert api.calls_to("message/template/send") == []
    assert len(api.calls_to("message/subscribe/bizsend")) == 2  # replayed on its grant: at least once


async def test_a_digest_keeps_the_grant_for_reminders_and_goes_by_template_with_a_page_link(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, WECHAT_TEMPLATE_ID_REMINDER=REMINDER_TEMPLATE,
                                PUBLIC_BASE_URL="https://bot.example.com"), clock=clock, run_worker=False)
        async with running(app) as client:
            await say(client, clock, "每天早上7点给我发当天待办")
            await say(client, clock, "6月21日下午三点开会")
            await grant(client, clock, "subscribe_msg_popup_event", "accept")
            for day in (19, 20, 21):  # the window is open for the first two digests, closed for the third
                clock.set(datetime(2026, 6, day, 7, 0, 1, tzinfo=SH))
                await drain(app)
            assert await grants(app) == [(TEMPLATE, "accept", 1)]  # the 07:00 digest did not spend it
            clock.set(datetime(2026, 6, 21, 14, 0, 1, tzinfo=SH))  # the meeting's reminder, an hour ahead
            await drain(app)
            assert await grants(app) == [(TEMPLATE, "accept", 0)]
            digests, reminders = await rows(app, "digest"), await rows(app, "reminder")
    [digest] = api.calls_to("message/template/send")
    assert digest.body["url"].startswith("https://bot.example.com/p/")
    assert digest.body["data"] == {"thing1": {"value": "今日待办（1项）"}, "time2": {"value": "2026年6月21日 07:00"}}
    [reminder] = api.calls_to("message/subscribe/bizsend")
    assert reminder.body["data"] == {"thing1": {"value": "开会"}, "time2": {"value": "2026年6月21日 15:00"}}
    assert reminder.body["page"].startswith("https://bot.example.com/p/")
    assert [(c, s) for c, s, _ in digests] == [("wechat", "sent"), ("wechat", "sent"), ("template", "sent")]
    assert [(c, s) for c, s, _ in reminders] == [("subscribe", "sent")]


async def test_grant_events_in_wechats_json_format_are_read(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            # one template answered: `List` is one object; several: an array (both at the top level)
            await post(client, clock, grant_event_json("o-sub", "subscribe_msg_popup_event", [(TEMPLATE, "accept")],
                                                       create_time=1_781_000_000))
            await post(client, clock, grant_event_json("o-sub", "subscribe_msg_popup_event",
                                                       [(TEMPLATE, "accept"), ("tmpl-other", "reject")],
                                                       create_time=1_781_000_001))
            assert sorted(await grants(app)) == [("tmpl-other", "reject", 0), (TEMPLATE, "accept", 2)]
            await post(client, clock, grant_event_json("o-sub", "subscribe_msg_sent_event",
                                                       [(TEMPLATE, "failed:user block")], create_time=1_781_000_002))
            assert sorted(await grants(app)) == [("tmpl-other", "reject", 0), (TEMPLATE, "reject", 0)]


async def test_two_grant_events_in_one_second_are_both_recorded(database_url: str, clock: FrozenClock) -> None:
    second = 1_781_000_100
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url), clock=clock, run_worker=False)
        async with running(app) as client:
            await post(client, clock, grant_event("o-sub", "subscribe_msg_popup_event", [(TEMPLATE, "accept")],
                                                  create_time=second))
            await post(client, clock, grant_event("o-sub", "subscribe_msg_popup_event",
                                                  [(TEMPLATE, "accept"), ("tmpl-other", "reject")], create_time=second))
            assert sorted(await grants(app)) == [("tmpl-other", "reject", 0), (TEMPLATE, "accept", 2)]
            retry = grant_event("o-sub", "subscribe_msg_popup_event", [(TEMPLATE, "accept")], create_time=second)
            await post(client, clock, retry)  # WeChat's retry of the first: the same event, not a new grant
            assert sorted(await grants(app)) == [("tmpl-other", "reject", 0), (TEMPLATE, "accept", 2)]
            await post(client, clock, grant_event("o-sub", "subscribe_msg_sent_event", [(TEMPLATE, "success")],
                                                  create_time=second + 1, msg_ids=["7001"]))
            await post(client, clock, grant_event("o-sub", "subscribe_msg_sent_event", [(TEMPLATE, "failed:user block")],
                                                  create_time=second + 1, msg_ids=["7002"]))
            assert sorted(await grants(app)) == [("tmpl-other", "reject", 0), (TEMPLATE, "reject", 0)]
