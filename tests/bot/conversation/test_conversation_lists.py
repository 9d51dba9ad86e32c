"""A list after a lead-in is one task per thing; several requests where one needs a question: the
others are stored and listed first, the question ends the reply, and the answer stores the last one."""

from __future__ import annotations

from conftest import Bot, at

from schedule.model import ScheduleItemRow


async def _active(bot: Bot) -> dict[str, ScheduleItemRow]:
    return {r.title: r for r in await bot.rows(ScheduleItemRow) if r.status == "active"}  # type: ignore[attr-defined]


async def test_a_shopping_list_is_one_task_per_thing_and_each_is_done_alone(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周六要买的：猫粮、洗洁精、电池")
    items = await _active(bot)
    assert sorted(items) == ["买洗洁精", "买猫粮", "买电池"]
    assert all(r.kind == "task" and r.all_day and r.local_date == "2026-06-20" for r in items.values())
    await chat.say("猫粮买好了")
    assert sorted(await _active(bot)) == ["买洗洁精", "买电池"]


async def test_the_question_comes_after_the_others_and_the_answer_stores_it(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("周五晚上7点和同学聚餐")
    reply = await chat.say("周五上午见房东，下午三点理发，顺便看看周五还有什么")
    assert reply.index("15:00 理发") < reply.index("聚餐") < reply.index("几点")
    assert sorted(await _active(bot)) == ["和同学聚餐", "理发"]
    await chat.say("十点半")
    items = await _active(bot)
    assert items["见房东"].start_at == at(6, 19, 10, 30) and items["理发"].start_at == at(6, 19, 15)
