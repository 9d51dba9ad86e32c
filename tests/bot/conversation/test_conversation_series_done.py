"""Saying a recurring item is done marks one occurrence (today's, or the next), not the series; cancelling
the series by name says it is the whole series. The clock starts at Thursday 2026-06-18 10:00 in Shanghai."""

from __future__ import annotations

from datetime import datetime

from conftest import SH, Bot, at

from schedule.model import OutboundMessageRow, ReminderRow, ScheduleItemRow


async def test_done_with_todays_pill_keeps_tomorrows(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天晚上10点提醒我吃药")
    reply = await chat.say("吃药那个完成了")
    assert reply == "好的，已完成6月18日（周四）这一次的“吃药”，以后的照常。"
    [series] = await bot.rows(ScheduleItemRow)
    assert series.status == "active" and series.metadata_json["skipped"] == ["2026-06-18"]
    assert [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"] == [at(6, 19, 22)]
    bot.clock.set(datetime(2026, 6, 18, 22, 1, tzinfo=SH))
    await bot.deliver()
    assert await bot.rows(OutboundMessageRow) == []  # tonight's is done
    bot.clock.set(datetime(2026, 6, 19, 22, 1, tzinfo=SH))
    await bot.deliver()
    assert len(await bot.rows(OutboundMessageRow)) == 1


async def test_done_before_a_weekly_day_is_about_the_next_one(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每周五下午5点提醒我写周报")
    assert await chat.say("周报写完了") == "好的，已完成6月19日（周五）这一次的“写周报”，以后的照常。"
    assert [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"] == [at(6, 26, 17)]


async def test_cancelling_a_series_by_name_says_the_whole_series(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每周五下午5点提醒我写周报")
    assert await chat.say("取消写周报") == "已取消整个系列：每周五17:00 写周报。相关提醒也一并取消了。"
    [series] = await bot.rows(ScheduleItemRow)
    assert series.status == "cancelled"


async def test_done_right_after_a_reminder_is_about_that_reminder(bot: Bot) -> None:
    chat = bot.chat()
    assert await chat.say("搞定了") == \
        "你现在还没有要办的日程或待办，没有可以改的。要新记一条的话，告诉我时间和事情。"  # nothing at all yet
    await chat.say("今天上午十点半提醒我给妈妈打电话")
    await chat.say("今天上午十点四十提醒我关火")
    bot.clock.advance(minutes=31)  # 10:31: only 给妈妈打电话 is due
    await bot.deliver(2)
    reply = await chat.say("搞定了")
    assert reply.endswith("好的，已完成：6月18日（周四）10:30 给妈妈打电话。")
    items = {i.title: i.status for i in await bot.rows(ScheduleItemRow)}
    assert items == {"给妈妈打电话": "completed", "关火": "active"}


async def test_done_after_a_series_reminder_marks_that_occurrence(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天上午10点半提醒我吃药")
    bot.clock.advance(minutes=31)
    await bot.deliver(2)
    assert (await chat.say("已完成")).endswith("好的，已完成6月18日（周四）这一次的“吃药”，以后的照常。")
    [series] = await bot.rows(ScheduleItemRow)
    assert series.status == "active" and series.metadata_json["skipped"] == ["2026-06-18"]
    assert [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"] == [at(6, 19, 10, 30)]


async def test_put_off_right_after_a_reminder_reminds_again_then(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("今天上午十点半提醒我拿快递")
    bot.clock.advance(minutes=31)
    await bot.deliver(2)
    assert (await chat.say("推迟到下午3点")).endswith("好的，6月18日（周四）15:00 再提醒你：拿快递。")
    pending = [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"]
    assert pending == [at(6, 18, 15)]
    [item] = await bot.rows(ScheduleItemRow)
    assert item.due_at == at(6, 18, 10, 30)  # the item itself stays where it was


async def test_moving_an_item_whose_reminder_went_out_reminds_again_for_the_new_time(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("今天上午10点半开会")  # the 09:30 reminder is already due: it goes out at once
    await bot.deliver(2)
    assert [r.status for r in await bot.rows(ReminderRow)] == ["locked"]  # in the in-app queue, not yet shown
    reply = await chat.say("开会改到明天上午10点")
    assert reply.endswith("改到 6月19日（周五）10:00。我会提前 1 小时，也就是 09:00 提醒你。")
    pending = [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"]
    assert pending == [at(6, 19, 9)]


async def test_a_part_of_the_day_alone_asks_the_hour_instead_of_moving_to_today(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周五下午3点开会")
    assert await chat.say("周五的会提前到上午") == "要把“会”改到上午几点？比如“改到上午10点”。"
    [item] = await bot.rows(ScheduleItemRow)
    assert item.start_at == at(6, 19, 15)


async def test_the_hour_answered_moves_the_item_within_the_part_of_the_day_asked(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周五下午3点开会")
    await chat.say("周五的会提前到上午")
    reply = await chat.say("10点")
    assert reply.startswith("已改好：“开会”从 6月19日（周五）15:00 改到 6月19日（周五）10:00。")
    [item] = await bot.rows(ScheduleItemRow)
    assert item.start_at == at(6, 19, 10)
