"""A new clock time said without 上午/下午 ("跑步改到九点") is read near the item's own time, not as the
next such hour from now: at 10:00, 九点 for an 08:00 run is 09:00, not 21:00. The reminder moves with it."""

from __future__ import annotations

from datetime import datetime

import pytest
from conftest import SH, Bot

from schedule.clock import to_ms
from schedule.model import ReminderRow, ScheduleItemRow


def at(hour: int, minute: int = 0) -> int:
    return to_ms(datetime(2026, 6, 19, hour, minute, tzinfo=SH))  # tomorrow, as the clock stands at 6/18 10:00


@pytest.mark.parametrize(("created", "change", "hour", "minute"), [
    ("明天早上八点跑步", "跑步改到九点", 9, 0),
    ("明天早上八点跑步", "跑步改到两点", 14, 0),  # 14:00 is nearer 08:00 than 02:00
    ("明天早上八点跑步", "跑步改到21点", 21, 0),  # written as 21: no choice to make
    ("明天早上八点跑步", "跑步改到晚上九点", 21, 0),
    ("明天早上八点跑步", "跑步改到十二点", 12, 0),
    ("明天晚上八点看电影", "看电影改成七点半", 19, 30),
    ("明天下午3点开会", "下午三点的会改到四点", 16, 0),
])
async def test_bare_hour_is_read_near_the_items_time(bot: Bot, created: str, change: str, hour: int,
                                                     minute: int) -> None:
    chat = bot.chat()
    await chat.say(created)
    reply = await chat.say(change)
    [item] = await bot.rows(ScheduleItemRow)
    assert item.start_at == at(hour, minute)
    assert reply.startswith("已改好：") and f"{hour:02d}:{minute:02d}" in reply


async def test_a_reminder_only_item_and_its_reminder_move_to_the_morning(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天早上7点提醒我吃药")
    reply = await chat.say("把吃药的提醒改成九点")
    assert reply == "已改好：“吃药”从 6月19日（周五）07:00 改到 6月19日（周五）09:00。到时提醒你。"
    [item] = await bot.rows(ScheduleItemRow)
    assert item.due_at == at(9)
    assert [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"] == [at(9)]


async def test_a_clock_alone_names_the_item_on_whatever_day_it_is(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午9点开会")
    await chat.say("明天下午3点去银行")
    reply = await chat.say("下午三点那个改成四点半")  # said at 10:00 today; the 15:00 item is tomorrow's
    assert reply == "已改好：“去银行”从 6月19日（周五）15:00 改到 6月19日（周五）16:30。"
    # nothing named, nothing reminded: the item just changed is in focus
    assert await chat.say("搞定了") == "好的，已完成：6月19日（周五）16:30 去银行。"
