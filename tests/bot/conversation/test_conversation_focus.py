"""The item in focus, corrections (which never create), the same request twice and withdrawing a create, through
the real webhook on both backends: every reply is checked against the rows."""

from __future__ import annotations

from conftest import Bot, at

from schedule.model import ReminderRow, ScheduleItemRow


async def active(bot: Bot) -> list[ScheduleItemRow]:
    return [r for r in await bot.rows(ScheduleItemRow) if isinstance(r, ScheduleItemRow) and r.status == "active"]


async def test_a_correction_changes_the_item_just_recorded_and_stores_nothing_new(bot: Bot) -> None:
    chat = bot.chat()  # Thursday 2026-06-18 10:00
    await chat.say("后天上午十点和李总见面")
    reply = await chat.say("不对，是十一点")
    assert reply == "已改好：“和李总见面”从 6月20日（周六）10:00 改到 6月20日（周六）11:00。"
    assert await chat.say("不是后天，是大后天") == \
        "已改好：“和李总见面”从 6月20日（周六）11:00 改到 6月21日（周日）11:00。"
    [item] = await active(bot)
    assert (item.title, item.start_at) == ("和李总见面", at(6, 21, 11))


async def test_follow_ups_without_the_item_s_name_apply_to_it(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("后天上午十点和李总见面")
    assert (await chat.say("提前一刻钟提醒我")).endswith("我会提前 15 分钟，也就是 09:45 提醒你。")
    assert "地点：人民广场" in await chat.say("地点在人民广场")
    assert "10:00–12:00" in await chat.say("大概开两个小时")
    [item] = await active(bot)
    assert (item.location, item.end_at) == ("人民广场", at(6, 20, 12))
    assert [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"] == [at(6, 20, 9, 45)]
    reply = await chat.say("那天晚上8点还要去接孩子")  # 那天 is the meeting's day, not today
    assert reply.startswith("已记录：6月20日（周六）20:00 接孩子")
    assert "首次是6月20日" in await chat.say("以后每周都这样")  # the focus is now 接孩子
    series = next(i for i in await active(bot) if i.title == "接孩子")
    assert series.rrule == "FREQ=WEEKLY"


async def test_cancel_or_done_without_a_name_is_about_the_focus(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天下午三点去银行")
    await chat.say("明天上午九点体检")
    assert await chat.say("取消吧") == "已取消：6月19日（周五）09:00 体检。"
    assert {i.title for i in await active(bot)} == {"去银行"}


async def test_with_nothing_in_focus_the_likely_items_are_offered_by_number(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天下午三点去银行")
    await chat.say("后天上午九点体检")
    bot.clock.advance(minutes=31)  # the focus has lapsed
    reply = await chat.say("地点在人民医院")
    assert reply.startswith("要修改哪一项？最近的有这些：\n1. ") and "2. " in reply
    await chat.say("2")
    located = {i.title: i.location for i in await active(bot)}
    assert located == {"去银行": None, "体检": "人民医院"}


async def test_withdrawing_what_was_just_recorded(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午9点提醒我交水费")
    assert await chat.say("刚才那条记错了，删掉") == \
        "好的，刚才记录的已删除：6月19日（周五）09:00 交水费。相关提醒也一并取消了。"
    assert await active(bot) == []
    assert {r.status for r in await bot.rows(ReminderRow)} == {"cancelled"}


async def test_the_same_request_twice_is_stored_once_unless_asked(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午9点提醒我交水费")
    bot.clock.advance(minutes=2)
    assert (await chat.say("明天上午9点提醒我交水费。")).startswith("这条已经记过了：6月19日（周五）09:00 交水费。")
    assert len(await active(bot)) == 1
    assert (await chat.say("再记一条")).startswith("已记录：6月19日（周五）09:00 交水费。")
    assert len(await active(bot)) == 2
    bot.clock.advance(minutes=11)  # ten minutes on, the same text is a new request
    await chat.say("明天上午9点提醒我交水费")
    assert len(await active(bot)) == 3


async def test_a_reminder_delivered_after_the_focus_is_what_done_means(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("今天上午十点半提醒我给妈妈打电话")
    await chat.say("明天下午三点去银行")  # the focus
    bot.clock.advance(minutes=31)
    await bot.deliver(2)
    assert (await chat.say("搞定了")).endswith("好的，已完成：6月18日（周四）10:30 给妈妈打电话。")
