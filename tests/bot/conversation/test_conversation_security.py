"""The security review in chat: a date that exists in no year is said to be so (nothing stored), and series stored with
a rule that never occurs do not stall the webhook."""

from __future__ import annotations

import time

from conftest import Bot, at

from schedule.model import ScheduleItemRow, UserRow


async def test_a_yearly_reminder_on_a_day_that_does_not_exist_is_refused_in_words(bot: Bot) -> None:
    chat = bot.chat()
    reply = await chat.say("每年2月30号提醒我交年费")
    assert "2月没有30号" in reply and "不存在" in reply and "没有记录" in reply
    assert await bot.rows(ScheduleItemRow) == []
    reply = await chat.say("4月31日下午3点体检")
    assert "4月没有31号" in reply and await bot.rows(ScheduleItemRow) == []
    stored = await chat.say("每年2月28号上午9点提醒我交年费")  # a real day still works
    assert "交年费" in stored and len(await bot.rows(ScheduleItemRow)) == 1


async def test_stored_series_that_never_occur_leave_the_webhook_responsive(bot: Bot) -> None:
    chat = bot.chat("o-mallory")
    await chat.say("明天上午10点开会")
    user = (await bot.rows(UserRow, wechat_openid="o-mallory"))[0]
    async with bot.sessions.begin() as session:  # rows as they could be stored before submissions were checked
        session.add_all([ScheduleItemRow(
            user_id=user.id, kind="task", title=f"永不{i}", status="active", due_at=at(6, 1, 9), all_day=False,
            timezone="Asia/Shanghai", rrule="FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", source_channel="api",
            created_at=at(6, 1), updated_at=at(6, 1)) for i in range(5)])
    started = time.perf_counter()
    reply = await chat.say("这周有什么安排")
    assert "开会" in reply and "永不" not in reply
    assert time.perf_counter() - started < 1.0  # before the fix: 18–20 s, and WeChat gives up after 5


async def test_reset_links_in_chat_revokes_the_page_link_sent_before(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午10点开会")
    answer = await chat.say("生成行程页")
    link = answer[answer.index("/p/"):].split()[0].rstrip("。")
    assert (await bot.client.get(link)).status_code == 200
    reply = await chat.say("重置链接")
    assert "已重置链接" in reply and "失效" in reply
    gone = await bot.client.get(link)
    assert gone.status_code == 410 and "开会" not in gone.text
    answer = await chat.say("生成行程页")
    fresh = answer[answer.index("/p/"):].split()[0].rstrip("。")
    assert fresh != link and (await bot.client.get(fresh)).status_code == 200
