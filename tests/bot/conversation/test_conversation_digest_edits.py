"""Digest changes in words through the whole bot: the push is re-timed, switched to the
next day's agenda or limited to weekdays, several changes at once, and there is one subscription per kind.
The fixture clock is Thursday 2026-06-18 10:00 in Shanghai."""

from __future__ import annotations

from datetime import datetime

from conftest import SH, Bot, at

from schedule.model import DigestSubscriptionRow

MON_TO_FRI = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"


async def _active(bot: Bot) -> list[DigestSubscriptionRow]:
    return [d for d in await bot.rows(DigestSubscriptionRow)
            if isinstance(d, DigestSubscriptionRow) and d.status == "active"]


async def test_evening_and_the_next_day_replaces_the_morning_push(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上7点给我发当天的待办")
    reply = await chat.say("换到晚上九点发第二天的吧")
    assert reply.startswith("好的，每天 21:00 给你发第二天的安排。")
    [digest] = await _active(bot)
    assert (digest.kind, digest.local_time, digest.next_run_at) == ("todo_next_day", "21:00", at(6, 18, 21))


async def test_no_weekends_sends_monday_to_friday(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上8点把今天的安排发给我")
    reply = await chat.say("周六周日就不用推了")
    assert reply.startswith("好的，每周一到周五 08:00 给你发当天的待办。下一次：6月19日（周五）08:00。")
    [digest] = await _active(bot)
    assert (digest.local_time, digest.rrule, digest.workdays) == ("08:00", MON_TO_FRI, None)
    bot.clock.set(datetime(2026, 6, 19, 8, 1, tzinfo=SH))  # Friday's push goes out; the next is Monday's
    await bot.deliver()
    [digest] = await _active(bot)
    assert (digest.last_run_local_date, digest.next_run_at) == ("2026-06-19", at(6, 22, 8))


async def test_working_days_only_and_then_a_new_time_keeps_the_days(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上7点给我发待办")
    assert (await chat.say("以后只在工作日发")).startswith("好的，每个工作日 07:00 给你发当天的待办。")
    assert (await chat.say("推送改成早上8点")).startswith("好的，每个工作日 08:00 给你发当天的待办。")
    [digest] = await _active(bot)
    assert (digest.kind, digest.local_time, digest.workdays) == ("todo_day", "08:00", "cn")


async def test_several_changes_in_one_message(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上7点给我发待办")
    reply = await chat.say("改成每晚8点发明天的，周末不用发")
    assert "每周一到周五 20:00 给你发第二天的安排" in reply
    [digest] = await _active(bot)
    assert (digest.kind, digest.local_time, digest.rrule) == ("todo_next_day", "20:00", MON_TO_FRI)
    assert digest.next_run_at == at(6, 18, 20)


async def test_a_new_subscription_with_its_days(bot: Bot) -> None:
    await bot.chat().say("每天早上7点给我发待办，周末不用发")
    [digest] = await _active(bot)
    assert (digest.kind, digest.local_time, digest.rrule) == ("todo_day", "07:00", MON_TO_FRI)
    assert digest.next_run_at == at(6, 19, 7)


async def test_subscribing_again_at_another_time_replaces_it(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天7点半发待办给我")
    await chat.say("每天早上6点半给我发当天待办")
    [digest] = await _active(bot)
    assert (digest.kind, digest.local_time) == ("todo_day", "06:30")


async def test_two_pushes_a_time_alone_asks_which_and_the_kind_named_picks_it(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上7点给我发当天待办")
    await chat.say("每晚9点发第二天的安排")
    bot.clock.advance(minutes=31)  # right after it, "推送改到8点" would be about the push just set (the focus)
    assert "要改哪一个" in await chat.say("推送改到8点")
    assert (await chat.say("第二天的推送改到晚上10点")).startswith("好的，每天 22:00 给你发第二天的安排。")
    assert sorted((d.kind, d.local_time) for d in await _active(bot)) == [("todo_day", "07:00"),
                                                                          ("todo_next_day", "22:00")]
    await chat.say("周末不用发")  # the days of every push
    assert {d.rrule for d in await _active(bot)} == {MON_TO_FRI}


async def test_a_change_without_a_subscription_stores_nothing(bot: Bot) -> None:
    reply = await bot.chat().say("周末就别发了")
    assert reply.startswith("你目前没有订阅每日待办推送，没有可改的。")
    assert await _active(bot) == []


async def test_right_after_a_digest_reply_a_bare_time_retimes_it(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每晚10点发第二天的安排")
    assert (await chat.say("改到晚上9点半")).startswith("好的，每天 21:30 给你发第二天的安排。")
    [digest] = await _active(bot)
    assert (digest.kind, digest.local_time) == ("todo_next_day", "21:30")


async def test_a_bare_time_after_an_item_still_moves_the_item(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上7点给我发待办")
    await chat.say("明天下午3点开会")
    await chat.say("改到4点")
    [digest] = await _active(bot)
    assert digest.local_time == "07:00"
