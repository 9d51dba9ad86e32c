"""地点在望京SOHO is stored as the item's location (shown by the reply, the list and the page), not in its title;
so is how long it lasts (大概一个小时 → end_at)."""

from __future__ import annotations

from conftest import Bot, at

from schedule.model import ScheduleItemRow


async def test_the_place_is_stored_apart_from_the_title(bot: Bot) -> None:
    chat = bot.chat()
    reply = await chat.say("后天上午九点半面试，提前两个小时提醒我，地点在望京SOHO")
    assert reply == "已记录：6月20日（周六）09:30 面试，地点：望京SOHO。我会提前 2 小时，也就是 07:30 提醒你。"
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.title, item.location) == ("面试", "望京SOHO")
    listed = await chat.say("看看后天的安排")
    assert "09:30 面试（望京SOHO）" in listed


async def test_a_duration_is_stored_as_the_end_and_said_back(bot: Bot) -> None:
    chat = bot.chat()
    reply = await chat.say("明天下午两点见客户，大概一个小时")
    assert reply.startswith("已记录：6月19日（周五）14:00–15:00 见客户。")
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.title, item.start_at, item.end_at) == ("见客户", at(6, 19, 14), at(6, 19, 15))


async def test_an_interval_under_half_an_hour_is_refused_plainly_and_nothing_stored(bot: Bot) -> None:
    reply = await bot.chat().say("每隔十分钟提醒我喝水")  # every two hours is an interval series now (courses)
    assert reply.startswith("没有记录：提醒间隔最短 30 分钟")
    assert await bot.rows(ScheduleItemRow) == []


async def test_the_place_can_be_changed_and_the_reply_says_it(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午9点体检")
    assert await chat.say("体检地点改成人民医院") == "已改好：6月19日（周五）09:00 体检，地点：人民医院。"
    [item] = await bot.rows(ScheduleItemRow)
    assert (item.title, item.location, item.start_at) == ("体检", "人民医院", at(6, 19, 9))


async def test_a_lead_for_an_item_already_there(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天晚上8点提醒我给爸爸打电话")
    reply = await chat.say("给爸爸打电话提前半小时提醒")
    assert reply == "已改好：6月19日（周五）20:00 给爸爸打电话。我会提前 30 分钟，也就是 19:30 提醒你。"
    assert len(await bot.rows(ScheduleItemRow)) == 1
