"""The seed's eight acceptance sentences, end to end through /wechat with a fixed clock, checking rows.

The clock is 2026-06-18 10:00 Asia/Shanghai, a Thursday.
"""

from __future__ import annotations

from datetime import datetime

from conftest import SH, Bot, at

from schedule.model import DigestSubscriptionRow, ReminderRow, ScheduleItemRow


async def test_the_eight_sentences(bot: Bot) -> None:
    chat = bot.chat()

    # 1. Missing time → ask, store nothing but the open question.
    reply = await chat.say("我明天要去开会，帮我记录增加一个提醒")
    assert reply == "可以。我先记下“明天开会”。会议大概几点开始，提前多久提醒你？"
    assert await bot.rows(ScheduleItemRow) == []
    assert len(await bot.questions()) == 1

    # 2. The answer "不提醒，先记一下" completes it: recorded, no reminder.
    reply = await chat.say("不提醒，先记一下")
    [item] = await bot.rows(ScheduleItemRow)
    assert "开会" in item.title and item.kind == "task" and item.all_day and item.local_date == "2026-06-19"
    assert await bot.rows(ReminderRow) == []
    assert await bot.questions() == []
    assert reply.startswith("已记录到待办列表：6月19日（周五）") and "未设置提醒" in reply

    # 3. A meeting at 15:00 gets the default reminder at 14:00.
    reply = await chat.say("今天下午三点有个会")
    assert reply == "已记录：6月18日（周四）15:00 会议。我会提前 1 小时，也就是 14:00 提醒你。"
    meeting = (await bot.rows(ScheduleItemRow, title="会议"))[0]
    assert (meeting.kind, meeting.start_at) == ("event", at(6, 18, 15))
    [reminder] = await bot.rows(ReminderRow, item_id=meeting.id)
    assert (reminder.remind_at, reminder.offset_minutes, reminder.status) == (at(6, 18, 14), 60, "pending")

    # 4. An explicit reminder time wins.
    reply = await chat.say("明天上午九点提醒我带材料")
    task = (await bot.rows(ScheduleItemRow, title="带材料"))[0]
    assert (task.kind, task.due_at) == ("task", at(6, 19, 9))
    assert [r.remind_at for r in await bot.rows(ReminderRow, item_id=task.id)] == [at(6, 19, 9)]
    assert reply.startswith("已记录：6月19日（周五）09:00 带材料")

    # 5. Daily digest at 07:00, next run tomorrow morning.
    reply = await chat.say("每天早上7点给我发一天的待办记录")
    [digest] = await bot.rows(DigestSubscriptionRow)
    assert (digest.kind, digest.local_time, digest.status, digest.channel) == ("todo_day", "07:00", "active", "wechat")
    assert digest.next_run_at == at(6, 19, 7)
    assert "07:00" in reply and "6月19日（周五）07:00" in reply

    # 6. The itinerary without a range: the next 7 days, grouped by date.
    reply = await chat.say("看看我的行程计划")
    assert reply.startswith("6月18日（周四）到6月24日（周三）的安排（3 项）")
    assert reply.index("6月18日（周四） 今天") < reply.index("15:00 会议") < reply.index("6月19日（周五） 明天")
    assert "带材料" in reply and "开会" in reply

    # 7. Tomorrow only.
    reply = await chat.say("看看明天行程")
    assert reply.startswith("6月19日（周五）的安排（2 项）")
    assert "带材料" in reply and "会议" not in reply

    # 8. A page of this week (Mon 6/15 – Sun 6/21): a two-line summary and the private page link.
    reply = await chat.say("生成一个好看的本周行程页面")
    assert reply.startswith("6月15日（周一）到6月21日（周日）共 3 项安排。\n最近一项：6月18日（周四）15:00 会议\n查看行程页：")
    page = await bot.client.get(reply.rsplit("查看行程页：", 1)[1].removeprefix("http://127.0.0.1:8000"))
    assert page.status_code == 200 and "带材料" in page.text and "开会" in page.text
    assert len(await bot.rows(ScheduleItemRow)) == 3  # queries stored nothing
    assert all(len(r.encode("utf-8")) <= 2048 for r in chat.replies)


async def test_menu_clicks_answer_like_the_sentences(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午九点提醒我带材料")
    today = await chat.click("TODAY")
    week = await chat.click("WEEK")
    assert today.startswith("6月18日（周四）") and "没有安排" in today
    assert week.startswith("6月15日（周一）到6月21日（周日）") and "带材料" in week


async def test_help_key_and_word_list_what_the_bot_can_do(bot: Bot) -> None:
    chat = bot.chat()
    for reply in (await chat.click("HELP"), await chat.say("你能做什么？")):
        assert reply.startswith("我可以帮你记待办、日程和提醒，例如：")
    assert bot.agent.asked == []


async def test_evening_digest_of_the_next_day_and_unsubscribe(bot: Bot) -> None:
    from schedule.model import OutboundMessageRow

    chat = bot.chat()
    await chat.say("明天上午九点提醒我带材料")
    reply = await chat.say("每天晚上9点把第二天的安排发给我")
    assert reply.startswith("好的，每天 21:00 给你发第二天的安排。下一次：6月18日（周四）21:00。")
    [digest] = await bot.rows(DigestSubscriptionRow)
    assert (digest.kind, digest.local_time) == ("todo_next_day", "21:00")
    bot.clock.set(datetime(2026, 6, 18, 21, 0, 30, tzinfo=SH))  # Thursday evening: Friday's agenda
    await bot.deliver()
    [pushed] = [r for r in await bot.rows(OutboundMessageRow) if r.kind == "digest"]
    assert pushed.payload["text"].startswith("明天 6月19日（周五）的安排（1 项）") and "带材料" in pushed.payload["text"]
    stopped = await chat.say("早报不用发了")  # the digest waited in-app (no WeChat here): shown first
    assert stopped.startswith("你有 1 条未送达的消息：\n· 明天 6月19日（周五）的安排（1 项）：")
    assert stopped.endswith("已取消每日待办推送，之后不再发送。")
    assert [d.status for d in await bot.rows(DigestSubscriptionRow)] == ["cancelled"]


async def test_weekly_digest_is_refused_plainly(bot: Bot) -> None:
    reply = await bot.chat().say("每周日晚上8点把下周的安排发给我")
    assert "按周推送还不支持" in reply and "没有订阅" in reply
    assert await bot.rows(DigestSubscriptionRow) == []
