"""Multi-turn behaviour: clarification and its expiry/replacement/drop, picking among several matches,
changes that move reminders, snooze after a delivered reminder, series occurrences, the in-app queue."""

from __future__ import annotations

from datetime import datetime

from conftest import SH, Bot, at

from schedule.clock import to_ms
from schedule.model import OutboundMessageRow, ReminderRow, ScheduleItemRow


async def test_clarification_merged_with_the_answer(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("我明天要去开会，帮我记录增加一个提醒")
    reply = await chat.say("下午三点，提前半小时")
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.kind, item.start_at) == ("event", at(6, 19, 15))
    [reminder] = await bot.rows(ReminderRow)
    assert (reminder.remind_at, reminder.offset_minutes) == (at(6, 19, 14, 30), 30)
    assert reply == "已记录：6月19日（周五）15:00 开会。我会提前 30 分钟，也就是 14:30 提醒你。"
    assert await bot.questions() == []


async def test_clarification_expires_after_30_minutes(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("我明天要去开会，帮我记录增加一个提醒")
    bot.clock.advance(minutes=31)
    await chat.say("下午三点，提前半小时")
    assert not [i for i in await bot.rows(ScheduleItemRow) if "开会" in i.title]


async def test_new_request_replaces_the_question(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("我明天要去开会，帮我记录增加一个提醒")
    reply = await chat.say("明天上午九点提醒我带材料")
    assert reply.startswith("已记录：6月19日（周五）09:00 带材料")
    assert await bot.questions() == []
    await chat.say("下午三点")
    assert [i.title for i in await bot.rows(ScheduleItemRow)] == ["带材料"]


async def test_dropping_the_question(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("我明天要去开会，帮我记录增加一个提醒")
    assert await chat.say("算了") == "好的，刚才的“明天开会”不记了。"
    assert await bot.questions() == [] and await bot.rows(ScheduleItemRow) == []


async def test_several_matches_are_numbered_and_picked(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午十点开会")
    await chat.say("后天下午三点开会")
    await chat.say("周一上午九点开会")
    listing = await chat.say("取消开会")
    assert listing.startswith("找到 3 条符合的，要取消哪一个？")
    assert "1. 6月19日（周五）10:00 开会" in listing and "2. 6月20日（周六）15:00 开会" in listing
    reply = await chat.say("第二个")
    assert reply.startswith("已取消：6月20日（周六）15:00 开会")
    statuses = {i.start_at: i.status for i in await bot.rows(ScheduleItemRow)}
    assert statuses == {at(6, 19, 10): "active", at(6, 20, 15): "cancelled", at(6, 22, 9): "active"}
    cancelled = next(i for i in await bot.rows(ScheduleItemRow) if i.status == "cancelled")
    assert {r.status for r in await bot.rows(ReminderRow, item_id=cancelled.id)} == {"cancelled"}

    await chat.say("取消开会")
    await chat.say("后面那个")
    statuses = {i.start_at: i.status for i in await bot.rows(ScheduleItemRow)}
    assert statuses[at(6, 22, 9)] == "cancelled" and statuses[at(6, 19, 10)] == "active"
    await chat.say("开会那个已经完成了")  # one left: no question
    assert {i.status for i in await bot.rows(ScheduleItemRow)} == {"completed", "cancelled"}


async def test_moving_a_meeting_moves_its_reminder(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("今天下午三点有个会")
    reply = await chat.say("下午三点的会改到四点")
    [item] = await bot.rows(ScheduleItemRow)
    [reminder] = await bot.rows(ReminderRow)
    assert item.start_at == at(6, 18, 16) and reminder.remind_at == at(6, 18, 15)
    assert "16:00" in reply and "15:00" in reply
    reply = await chat.say("会议提醒改成提前15分钟")
    open_reminders = [r for r in await bot.rows(ReminderRow) if r.status == "pending"]
    assert [(r.remind_at, r.offset_minutes) for r in open_reminders] == [(at(6, 18, 15, 45), 15)]
    assert "15:45" in reply


async def test_complete_by_title_words(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午九点提醒我带材料")
    reply = await chat.say("带材料那个已经完成了")
    [item] = await bot.rows(ScheduleItemRow)
    assert item.status == "completed"
    assert [r.status for r in await bot.rows(ReminderRow)] == ["cancelled"]
    assert reply.startswith("好的，已完成：6月19日（周五）09:00 带材料")
    assert (await chat.say("取消体检")).startswith("没找到“体检”")


async def test_in_app_notice_then_snooze(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("今天上午十点半提醒我给妈妈打电话")
    bot.clock.advance(minutes=31)
    await bot.deliver(2)
    [pushed] = await bot.rows(OutboundMessageRow)
    assert (pushed.channel, pushed.status) == ("inapp", "pending")

    reply = await chat.say("10分钟后再提醒我")
    assert reply.startswith("你有 1 条未送达的提醒：\n· ⏰ 提醒：")
    assert "给妈妈打电话" in reply and "10:41" in reply
    [pushed] = await bot.rows(OutboundMessageRow)
    assert pushed.status == "sent"
    reminders = await bot.rows(ReminderRow)
    assert [(r.remind_at, r.status) for r in reminders] == [(at(6, 18, 10, 30), "sent"), (at(6, 18, 10, 41), "pending")]
    again = await chat.say("看看今天的安排")
    assert "未送达" not in again  # shown once


async def test_snooze_without_a_delivered_reminder_says_so(bot: Bot) -> None:
    reply = await bot.chat().say("10分钟后再提醒我")
    assert reply.startswith("最近没有刚送达的提醒")
    assert await bot.rows(ReminderRow) == []


async def test_snooze_later_asks_how_long(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("今天上午十点半提醒我给妈妈打电话")
    bot.clock.advance(minutes=31)
    await bot.deliver(2)
    ask = await chat.say("晚点再提醒我")
    assert "10 分钟" in ask and "1 小时" in ask and "明早" in ask
    await chat.say("1小时")
    pending = [r for r in await bot.rows(ReminderRow) if r.status == "pending"]
    assert [r.remind_at for r in pending] == [at(6, 18, 11, 31)]


async def test_cancelled_occurrence_is_skipped_and_the_series_goes_on(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每周一上午10点开周会")
    reply = await chat.say("下周一的周会不开了")
    assert reply == "已取消6月22日（周一）这一次的“开周会”，以后的照常。"
    [series] = await bot.rows(ScheduleItemRow)
    assert series.status == "active" and series.metadata_json["skipped"] == ["2026-06-22"]
    bot.clock.set(datetime(2026, 6, 22, 9, 1, tzinfo=SH))
    await bot.deliver()
    assert await bot.rows(OutboundMessageRow) == []  # nothing for the cancelled Monday
    bot.clock.set(datetime(2026, 6, 29, 9, 1, tzinfo=SH))
    await bot.deliver()
    [pushed] = await bot.rows(OutboundMessageRow)
    assert "6月29日" in pushed.payload["text"]
    assert "下一次" not in (await chat.say("看看下周行程"))  # 6/22–6/28: the skipped Monday is not listed
    assert "没有安排" in (await chat.say("看看6月22日的安排"))


async def test_two_requests_in_one_message(bot: Bot) -> None:
    chat = bot.chat()
    reply = await chat.say("明天上午9点提醒我交房租，下午3点提醒我取快递")
    items = {i.title: i for i in await bot.rows(ScheduleItemRow)}
    assert set(items) == {"交房租", "取快递"}
    assert items["交房租"].due_at == at(6, 19, 9) and items["取快递"].due_at == at(6, 19, 15)
    assert reply.startswith("1. 已记录：6月19日（周五）09:00 交房租") and "\n2. 已记录：6月19日（周五）15:00 取快递" in reply

    reply = await chat.say("明天下午三点开会，顺便看看明天还有什么安排")
    assert reply.startswith("已记录：6月19日（周五）15:00 开会")
    assert "6月19日（周五）的安排（3 项）" in reply


async def test_long_lists_fit_one_wechat_message(bot: Bot) -> None:
    chat = bot.chat()
    for day in range(1, 7):
        for hour in range(8, 20):
            await chat.say(f"6月{18 + day}日{hour}点提醒我处理一下第{day}{hour}号很长很长很长的事项备注")
    reply = await chat.say("看看我的行程计划")
    assert len(reply.encode("utf-8")) <= 2048
    assert "共 72 项安排" in reply and "/p/" in reply  # a long list: the summary and the page instead of 72 lines


async def test_not_a_schedule_request_goes_to_the_agent(bot: Bot) -> None:
    chat = bot.chat()
    reply = await chat.say("明天会下雨吗")
    assert reply == "（智能助手的回答）"
    assert bot.agent.asked == ["明天会下雨吗"]
    assert await bot.rows(ScheduleItemRow) == []


async def test_users_see_only_their_own_items(bot: Bot) -> None:
    await bot.chat("o-alice").say("明天上午九点提醒我带材料")
    reply = await bot.chat("o-bob").say("带材料那个已经完成了")
    assert reply.startswith("没找到")
    assert [i.status for i in await bot.rows(ScheduleItemRow)] == ["active"]


async def test_a_past_time_today_rolls_to_tomorrow_and_says_so(bot: Bot) -> None:
    reply = await bot.chat().say("早上8点提醒我跑步")  # it is 10:00: today's 08:00 has passed
    [item] = await bot.rows(ScheduleItemRow)
    assert item.due_at == at(6, 19, 8)
    assert reply.startswith("已记录：明天 6月19日（周五）08:00 跑步")


async def test_explicit_past_reminder_is_sent_at_once(bot: Bot) -> None:
    reply = await bot.chat().say("今天上午9点提醒我交报告")
    [reminder] = await bot.rows(ReminderRow)
    assert reminder.remind_at <= to_ms(bot.clock.now()) + 1000
    assert "时间已到，会立即提醒你" in reply


async def test_reply_and_rows_roll_back_together_when_the_store_fails(bot: Bot) -> None:
    await bot.chat().say("明天上午九点提醒我带材料")
    async with bot.app.state.engine.begin() as conn:  # break the schema under the running bot
        await conn.exec_driver_sql("DROP TABLE dialog_states")
    reply = await bot.chat().say("我明天要去开会，帮我记录增加一个提醒")
    assert "没有保存任何内容" in reply
    assert len(await bot.rows(ScheduleItemRow)) == 1



async def test_reminder_expired_during_downtime_is_reported_once(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("今天上午十点半提醒我给妈妈打电话")
    bot.clock.set(datetime(2026, 6, 19, 2, 0, tzinfo=SH))  # the service was down for 15.5 hours
    await bot.deliver()
    reminder = (await bot.rows(ReminderRow))[0]
    assert reminder.status == "expired"
    reply = await chat.say("看看今天的安排")
    assert reply.startswith("你有 1 条未送达的提醒：\n· ⏰ 提醒：6月18日（周四）10:30 给妈妈打电话。")
    assert "服务中断期间过期" in reply
    assert "未送达" not in await chat.say("看看今天的安排")


async def test_no_reminder_inside_the_request(bot: Bot) -> None:
    reply = await bot.chat().say("明天下午三点开会，不用提醒")
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.kind, item.start_at) == ("event", at(6, 19, 15))
    assert await bot.rows(ReminderRow) == []
    assert "未设置提醒" in reply


async def test_a_daily_series_is_listed_every_day(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上8点提醒我吃药")
    reply = await chat.say("看看下周行程")
    assert reply.startswith("6月22日（周一）到6月28日（周日）的安排（7 项）")
    assert reply.count("· 08:00 吃药 ⏰") == 7


async def test_casual_cancel_of_one_occurrence_and_of_an_item(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每个工作日早上8点半提醒我打卡")
    assert (await chat.say("下周一的打卡不用了")) == "已取消6月22日（周一）这一次的“打卡”，以后的照常。"
    await chat.say("明天下午3点取快递")
    assert (await chat.say("取快递那个不用了")).startswith("已取消：6月19日（周五）15:00 取快递")
    statuses = {i.title: i.status for i in await bot.rows(ScheduleItemRow)}
    assert statuses == {"打卡": "active", "取快递": "cancelled"}
