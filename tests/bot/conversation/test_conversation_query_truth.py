"""A query for part of a day (上午, 下午3点) or for one kind (有会吗) lists that part and says what else
the day holds (当天还有：…); 没有安排 only when the whole day is empty; a whole-day query is listed as before.
The fixture clock is Thursday 2026-06-18 10:00, so 周六 is 6月20日."""

from __future__ import annotations

import pytest
from conftest import Bot, at

from bot.conversation.query import CHAT_ENTRIES
from schedule.domain import NewItem, Recurrence
from schedule.service import ScheduleService


async def test_an_empty_morning_names_the_evening(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周六晚上六点半和朋友吃饭")
    assert await chat.say("周六上午有安排吗") == "6月20日（周六）上午没有安排。当天还有：18:30 和朋友吃饭"


async def test_the_part_asked_about_is_listed_and_the_rest_follows(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周六晚上六点半和朋友吃饭")
    await chat.say("周六上午9点跑步")
    morning = await chat.say("周六上午有安排吗")
    assert morning.startswith("6月20日（周六）上午的安排（1 项）：")
    assert morning.index("· 09:00 跑步") < morning.index("当天还有：18:30 和朋友吃饭")
    afternoon = await chat.say("周六下午忙不忙")
    assert afternoon == "6月20日（周六）下午没有安排。当天还有：\n· 09:00 跑步\n· 18:30 和朋友吃饭"
    assert "15:00–16:00没有安排。当天还有：" in await chat.say("周六下午3点有空吗")


async def test_no_plans_only_when_the_whole_day_is_empty(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周六晚上六点半和朋友吃饭")
    assert await chat.say("周日上午有安排吗") == "6月21日（周日）上午没有安排。"


async def test_a_whole_day_query_is_listed_as_before(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周六晚上六点半和朋友吃饭")
    await chat.say("周六上午9点跑步")
    whole = await chat.say("周六有什么安排")
    assert whole.startswith("6月20日（周六）的安排（2 项）：") and "当天还有" not in whole


async def test_one_kind_asked_for_says_what_else_the_day_holds(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周六中午12点和老板吃饭")
    assert await chat.say("周六上午有会吗") == "6月20日（周六）上午没有日程。当天还有：12:00 和老板吃饭"
    await chat.say("周六前交报告")
    todo = await chat.say("周六有什么待办")
    assert "交报告" in todo and "当天还有：12:00 和老板吃饭" in todo


async def test_a_series_occurrence_that_day_is_part_of_the_rest(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天早上7点吃药")
    assert await chat.say("明天下午有安排吗") == "6月19日（周五）下午没有安排。当天还有：07:00 吃药"


async def test_the_day_is_read_once(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    chat = bot.chat()
    await chat.say("周六晚上六点半和朋友吃饭")
    calls: list[tuple[int | None, int | None]] = []
    real = ScheduleService.list_window  # every listing (list_items too) reads through it

    async def counted(self: ScheduleService, user_id: int, **kwargs: object) -> object:
        calls.append((kwargs.get("start_ms"), kwargs.get("end_ms")))  # type: ignore[arg-type]
        return await real(self, user_id, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ScheduleService, "list_window", counted)
    await chat.say("周六上午有安排吗")
    assert len(calls) == 1  # no extra database read for the rest of the day


async def test_a_week_of_many_series_is_listed_cut_to_what_a_reply_shows_and_says_at_least(bot: Bot) -> None:
    """A user with 60 daily series asks about the week (240 occurrences from Thursday): the reply is built from
    the first CHAT_ENTRIES entries and never states a count lower than the truth."""
    chat = bot.chat()
    await chat.say("明天上午十点面试")
    user = await bot.app.state.service.find_user(chat.openid)
    assert user is not None
    for n in range(60):
        await bot.app.state.service.create_item(user.id, NewItem(
            kind="task", title=f"喝水{n}", timezone="Asia/Shanghai", due_at=at(6, 18, 11, n),
            recurrence=Recurrence(rrule="FREQ=DAILY")))
    reply = await chat.say("这周有什么安排")
    assert CHAT_ENTRIES < 60 * 4  # the week (Thu–Sun) holds more than a reply is built from
    assert f"至少 {CHAT_ENTRIES} 项" in reply
