"""A dated task with a lead, completed by the answer to the missing-time question: what the reply says is what the
reminder row holds (the clock is Thursday 2026-06-18 10:00 in Shanghai)."""

from __future__ import annotations

from conftest import Bot, at

from schedule.model import ReminderRow, ScheduleItemRow


async def test_two_days_ahead_at_the_clock_the_user_gives(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("下周五交方案，提前两天提醒我")
    reply = await chat.say("晚上8点")
    assert reply == "已记录：6月26日（周五）交方案。我会在 6月24日（周三）20:00 提醒你。"
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.all_day, item.local_date) == (True, "2026-06-26")
    [reminder] = await bot.rows(ReminderRow)
    assert (reminder.remind_at, reminder.status) == (at(6, 24, 20), "pending")


async def test_half_an_hour_before_the_tasks_own_time(bot: Bot) -> None:
    chat = bot.chat()
    asked = await chat.say("明天交报告，提前半小时提醒我")
    assert asked.endswith("具体是几点？我会提前 30 分钟提醒你。")
    reply = await chat.say("下午5点")
    assert reply.endswith("6月19日（周五）17:00 交报告。我会提前 30 分钟，也就是 16:30 提醒你。")
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.all_day, item.due_at) == (False, at(6, 19, 17))
    [reminder] = await bot.rows(ReminderRow)
    assert (reminder.remind_at, reminder.offset_minutes) == (at(6, 19, 16, 30), 30)


async def test_the_day_before_at_a_clock_in_one_message(bot: Bot) -> None:
    chat = bot.chat()
    reply = await chat.say("下个月5号交房租，前一天上午9点提醒我")
    assert reply == "已记录：7月5日（周日）交房租。我会在 7月4日（周六）09:00 提醒你。"
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.title, item.all_day, item.local_date) == ("交房租", True, "2026-07-05")
    [reminder] = await bot.rows(ReminderRow)
    assert reminder.remind_at == at(7, 4, 9)
