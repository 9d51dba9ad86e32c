"""A new time for the push the user has (推送改到8点 / 改成每天早上8点发) re-times that subscription, keeping its
kind and its days unless the message names them; with none, it says so and subscribes nothing."""

from __future__ import annotations

from conftest import Bot, at

from schedule.model import DigestSubscriptionRow


async def test_retime_keeps_kind_and_days(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每个工作日晚上9点发第二天的安排")
    reply = await chat.say("推送改到晚上8点半")
    assert reply.startswith("好的，每个工作日 20:30 给你发第二天的安排。")
    [digest] = await bot.rows(DigestSubscriptionRow)
    assert (digest.kind, digest.local_time, digest.workdays, digest.status) == ("todo_next_day", "20:30", "cn",
                                                                                 "active")
    assert digest.next_run_at == at(6, 18, 20, 30)


async def test_retime_of_a_morning_digest(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上7点给我发当天待办")
    assert (await chat.say("改成每天早上8点发")).startswith("好的，每天 08:00 给你发当天的待办。")
    [digest] = await bot.rows(DigestSubscriptionRow)
    assert (digest.kind, digest.local_time) == ("todo_day", "08:00")


async def test_retime_without_a_subscription_subscribes_nothing(bot: Bot) -> None:
    reply = await bot.chat().say("推送改到8点")
    assert reply.startswith("你目前没有订阅每日待办推送，没有可改的。")
    assert await bot.rows(DigestSubscriptionRow) == []
