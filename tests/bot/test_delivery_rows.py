"""A push's own data fails only that push, and is worded when it goes out (the worker with the fake WeChat API,
which refuses template data as WeChat does, 47003): one row's bad data sends that row alone down the ladder,
`time2` is always a date and a time, and a countdown held back by a configuration pause says the time left
when it is sent."""

from __future__ import annotations

import logging
import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from test_delivery import app_with, outbox_row, queue_text, user_who_wrote

from bot.wechat import incident
from fakes.wechat import TIME_VALUE, FakeWeChatAPI
from schedule.clock import now_ms, to_ms
from schedule.domain import NewItem, NewReminder
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")


async def test_one_rows_refused_template_data_sends_that_row_alone_down_the_ladder(
        database_url: str, clock: FrozenClock, caplog: pytest.LogCaptureFixture) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, WECHAT_TEMPLATE_ID_REMINDER="tpl-x") as app:
        rows = [await queue_text(app, clock, f"o-r{n}", f"提醒{n}", kind="reminder") for n in range(3)]
        api.script("message/custom/send", *[45015] * 4)  # every window closed: the template rung
        api.script("message/template/send", 47003)  # one row's data is refused
        with caplog.at_level(logging.WARNING):
            for _ in range(3):
                await app.state.worker.run_once()
            rows.append(await queue_text(app, clock, "o-r3", "又一条提醒", kind="reminder"))
            for _ in range(3):
                await app.state.worker.run_once()
        final = [await outbox_row(app, i) for i in rows]
        standing = await incident.standing(app.state.sessions, now_ms(clock))
    assert sorted((r.status, r.channel) for r in final) == [("pending", "inapp")] + [("sent", "template")] * 3
    assert standing == []  # no incident: the rung stays open for everyone else
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or "paused" in r.getMessage()]


async def test_time2_is_always_a_date_and_a_time(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, WECHAT_TEMPLATE_ID_REMINDER="tpl-x") as app:
        service = app.state.service
        user = (await service.get_or_create_user("o-quiet")).id  # never wrote: the window is closed
        soon = now_ms(clock) + 60_000
        await service.create_item(user, NewItem(kind="task", title="交房租", timezone="Asia/Shanghai",
                                                reminders=(NewReminder(remind_at=soon),)))  # a task with no time
        day = to_ms(datetime(2026, 6, 20, tzinfo=SH))
        await service.create_item(user, NewItem(kind="event", title="团建", timezone="Asia/Shanghai", all_day=True,
                                                start_at=day, reminders=(NewReminder(remind_at=soon),)))
        await service.subscribe_digest(user, local_time="10:01")
        clock.advance(minutes=1, seconds=1)  # 10:01:01: the two reminders and the digest are due
        for _ in range(3):
            await app.state.worker.run_once()
    sends = api.calls_to("message/template/send")
    assert sorted(c.answer.get("errcode", 0) for c in sends) == [0, 0, 0]  # none refused
    times = sorted(c.body["data"]["time2"]["value"] for c in sends)
    assert all(TIME_VALUE.fullmatch(t) and re.match(r"\d{4}年", t) for t in times)
    assert times == ["2026年6月18日 10:01", "2026年6月18日 10:01", "2026年6月20日 00:00"]
    assert sorted(c.body["data"]["thing1"]["value"] for c in sends) == ["交房租", "今日待办（0项）", "团建"]


async def test_a_reminder_held_by_a_configuration_pause_says_the_time_left_when_it_is_sent(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        user = await user_who_wrote(app, clock, "o-held")
        start = to_ms(datetime(2026, 6, 18, 12, 0, tzinfo=SH))
        await app.state.service.create_item(user, NewItem(
            kind="event", title="会议", timezone="Asia/Shanghai", start_at=start,
            reminders=(NewReminder(remind_at=start - 3_600_000, offset_minutes=60),)))
        clock.set(datetime(2026, 6, 18, 11, 0, 1, tzinfo=SH))
        api.script("stable_token", *[40164] * 4)  # the IP whitelist incident lasts 40 minutes
        for _ in range(5):
            await app.state.worker.run_once()
            clock.advance(minutes=10, seconds=1)
    [send] = api.calls_to("message/custom/send")
    assert send.body["text"]["content"] == "⏰ 提醒：6月18日（周四）12:00 会议开始，还有 20 分钟。"
