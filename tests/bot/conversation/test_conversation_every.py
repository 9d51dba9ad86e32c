"""Cancelling or completing several items at once: "明天的事都取消", "全部" as the answer to "哪一个？",
a date alone naming the targets ("把明天的事取消"), the limits that keep a broad request from going too far,
and 撤销 taking back the last cancel.
The clock stands at Thursday 2026-06-18 10:00 in Shanghai."""

from __future__ import annotations

import logging

import pytest
from conftest import Bot, Chat

from schedule.clock import to_ms
from schedule.model import ReminderRow, ScheduleItemRow
from schedule.testing import active_items, fill_to_quota


async def statuses(bot: Bot) -> dict[str, str]:
    return {i.title: i.status for i in await bot.rows(ScheduleItemRow)}


async def tomorrow_three(chat: Chat) -> None:
    await chat.say("明天上午九点开会")
    await chat.say("明天下午三点去银行，提前半小时提醒我")
    await chat.say("后天上午十点体检")


async def test_a_date_alone_names_the_targets_and_all_answers_the_question(bot: Bot) -> None:
    chat = bot.chat()
    await tomorrow_three(chat)
    asked = await chat.say("把明天的事取消")
    assert asked == ("找到 2 条符合的，要取消哪一个？\n1. 6月19日（周五）09:00 开会\n2. 6月19日（周五）15:00 去银行\n"
                     "回复序号就行（比如“2”或“第二个”），都要取消就回“全部”。")
    assert await statuses(bot) == {"开会": "active", "去银行": "active", "体检": "active"}
    reply = await chat.say("全部")
    assert reply == ("已取消 2 条：\n1. 6月19日（周五）09:00 开会\n2. 6月19日（周五）15:00 去银行\n"
                     "相关提醒也一并取消了。")
    assert await statuses(bot) == {"开会": "cancelled", "去银行": "cancelled", "体检": "active"}
    assert {r.status for r in await bot.rows(ReminderRow)} == {"cancelled"}  # 08:00 and 14:30 both
    assert await bot.questions() == []


async def test_every_said_in_the_request_changes_every_match_at_once(bot: Bot) -> None:
    chat = bot.chat()
    await tomorrow_three(chat)
    await chat.say("明天下午五点开项目会")
    reply = await chat.say("明天的会都取消")
    assert reply == ("已取消 2 条：\n1. 6月19日（周五）09:00 开会\n2. 6月19日（周五）17:00 开项目会\n"
                     "相关提醒也一并取消了。")
    assert await statuses(bot) == {"开会": "cancelled", "去银行": "active", "体检": "active", "开项目会": "cancelled"}
    pending = [r for r in await bot.rows(ReminderRow) if r.status == "pending"]
    assert len(pending) == 1  # 去银行's 14:30 stays
    assert await bot.questions() == []


async def test_completing_every_item_of_a_day(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天交报告")
    await chat.say("明天买菜")
    await chat.say("后天交房租")
    reply = await chat.say("明天的待办都完成了")
    assert reply.startswith("好的，已完成 2 条：\n1. ") and "交报告" in reply and "买菜" in reply
    assert await statuses(bot) == {"交报告": "completed", "买菜": "completed", "交房租": "active"}


async def test_more_than_nine_matches_changes_nothing_and_says_so(bot: Bot) -> None:
    chat = bot.chat()
    for hour in range(8, 19):
        await chat.say(f"明天{hour}点开会")
    reply = await chat.say("明天的会都取消")
    assert reply.startswith("符合的有 11 条，一次最多处理 9 条，没有做任何改动。")
    assert set((await statuses(bot)).values()) == {"active"}


async def test_a_new_every_request_uses_its_own_matches_not_the_offered_list(bot: Bot) -> None:
    chat = bot.chat()
    await tomorrow_three(chat)
    await chat.say("后天下午两点开会")
    await chat.say("把明天的事取消")  # offers tomorrow's two
    reply = await chat.say("后天的会都取消")
    assert reply.startswith("已取消：6月20日（周六）14:00 开会")
    items = {(i.title, i.start_at): i.status for i in await bot.rows(ScheduleItemRow)}
    assert sorted(items.values()).count("cancelled") == 1
    assert (await statuses(bot))["去银行"] == "active"


async def test_every_occurrence_on_a_day_skips_that_day_only(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每周一上午10点开周会")
    await chat.say("下周一下午三点交周报")
    reply = await chat.say("下周一的事都取消")
    assert reply.startswith("已取消 2 条：\n1. 6月22日（周一）10:00 开周会（只取消6月22日（周一）这一次，以后的照常）\n"
                            "2. 6月22日（周一）15:00 交周报")
    items = {i.title: i for i in await bot.rows(ScheduleItemRow)}
    assert items["开周会"].status == "active" and items["开周会"].metadata_json["skipped"] == ["2026-06-22"]
    assert items["交周报"].status == "cancelled"


async def test_all_is_not_an_answer_to_which_one_to_move(bot: Bot) -> None:
    chat = bot.chat()
    await tomorrow_three(chat)
    await chat.say("明天下午五点开项目会")
    asked = await chat.say("明天的会改到后天")
    assert asked.startswith("找到 2 条符合的，要修改哪一个？") and "全部" not in asked


async def test_undo_takes_back_the_last_cancel_within_ten_minutes(bot: Bot) -> None:
    chat = bot.chat()
    await tomorrow_three(chat)
    await chat.say("明天的事都取消")
    reply = await chat.say("撤销")
    assert reply == ("已恢复 2 条：\n1. 6月19日（周五）09:00 开会\n2. 6月19日（周五）15:00 去银行\n"
                     "还没到的提醒也恢复了。")
    assert await statuses(bot) == {"开会": "active", "去银行": "active", "体检": "active"}
    assert {r.status for r in await bot.rows(ReminderRow)} == {"pending"}
    assert (await chat.say("撤销")).startswith("没有可以撤销的")  # once only
    await chat.say("体检那个不用了")
    bot.clock.advance(minutes=11)
    assert (await chat.say("刚才取消错了")).startswith("没有可以撤销的")
    assert (await statuses(bot))["体检"] == "cancelled"


async def test_undo_says_a_skipped_day_of_a_series_stays_skipped(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天早上八点跑步")
    await chat.say("每天晚上10点提醒我吃药")
    await chat.say("把明天的事都取消")  # 跑步 cancelled, tomorrow's 吃药 skipped
    reply = await chat.say("撤销")
    assert reply == ("已恢复：6月19日（周五）08:00 跑步。"
                     "另外，系列中某一次的取消或完成（1 条）撤销不了，需要的话请重新记一下。")
    items = {i.title: i for i in await bot.rows(ScheduleItemRow)}
    assert items["跑步"].status == "active" and items["吃药"].metadata_json["skipped"] == ["2026-06-19"]
    await chat.say("吃药那个完成了")  # only a day of a series: nothing to reopen
    assert (await chat.say("撤销")) == "系列中某一次的取消或完成（1 条）撤销不了，需要的话请重新记一下。没有做任何改动。"


async def test_undo_that_would_go_over_the_item_quota_is_refused_and_says_why(bot: Bot) -> None:
    """The placeholders are written in the cancel's millisecond (the clock stands still), so the cancel is
    still the latest change: taking it back would make one item over the quota."""
    chat = bot.chat()
    await tomorrow_three(chat)
    assert (await chat.say("取消明天的会")).startswith("已取消")
    user = (await bot.rows(ScheduleItemRow))[0]
    assert isinstance(user, ScheduleItemRow)
    quota = bot.app.state.service.max_active_items
    await fill_to_quota(bot.sessions, user.user_id, quota=quota, now_ms=to_ms(bot.clock.now()))
    assert await chat.say("撤销") == f"没能撤销：进行中的事项已达上限 {quota} 条，先完成或取消一些再撤销。"
    assert (await statuses(bot))["开会"] == "cancelled"
    assert await active_items(bot.sessions, user.user_id) == quota


async def test_a_create_at_the_item_quota_says_so_and_the_rest_of_the_message_stands(
        bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    """At the quota a new item is refused plainly (no "something went wrong", no traceback in the log), and a
    query said in the same message is still answered."""
    chat = bot.chat()
    await tomorrow_three(chat)
    user = (await bot.rows(ScheduleItemRow))[0]
    assert isinstance(user, ScheduleItemRow)
    quota = bot.app.state.service.max_active_items
    await fill_to_quota(bot.sessions, user.user_id, quota=quota, now_ms=to_ms(bot.clock.now()))
    with caplog.at_level(logging.ERROR):
        reply = await chat.say("后天上午十点去银行，顺便看看明天有什么安排")
    assert f"没有记录：进行中的事项已达上限 {quota} 条" in reply and "开会" in reply
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert await active_items(bot.sessions, user.user_id) == quota
