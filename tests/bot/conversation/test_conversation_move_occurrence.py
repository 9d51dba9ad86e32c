"""Moving one day of a series (周四的健身改到周五, 下周二的健身推迟一小时) moves that occurrence only: the series
skips that day and a one-off item with the series' lead takes the new time. The clock starts at Thursday
2026-06-18 10:00 in Shanghai."""

from __future__ import annotations

from conftest import Bot, at

from schedule.model import ReminderRow, ScheduleItemRow


async def test_one_occurrence_moves_and_the_series_stays(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每周二周四晚上8点健身，提前半小时提醒")
    reply = await chat.say("今天的健身改到明天")
    assert reply == ("已改好：6月18日（周四）这一次的“健身”改到 6月19日（周五）20:00，以后的照常。"
                     "我会提前 30 分钟，也就是 19:30 提醒你。")
    series, moved = await bot.rows(ScheduleItemRow)
    assert series.rrule == "FREQ=WEEKLY;BYDAY=TU,TH" and series.metadata_json["skipped"] == ["2026-06-18"]
    assert (moved.title, moved.start_at, moved.rrule, moved.status) == ("健身", at(6, 19, 20), None, "active")
    pending = sorted((r.item_id, r.remind_at) for r in await bot.rows(ReminderRow) if r.status == "pending")
    assert pending == [(series.id, at(6, 23, 19, 30)), (moved.id, at(6, 19, 19, 30))]
    listed = await chat.say("看看这周的安排")
    assert "6月19日（周五）" in listed and listed.count("健身") == 1


async def test_a_shift_of_one_day_keeps_the_other_days(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每周二周四晚上8点健身")
    reply = await chat.say("下周二的健身推迟一小时")
    assert reply == "已改好：6月23日（周二）这一次的“健身”改到 6月23日（周二）21:00，以后的照常。"
    listed = await chat.say("看看下周的安排")
    assert "21:00 健身" in listed and "20:00 健身" in listed  # Tuesday moved, Thursday as it was
