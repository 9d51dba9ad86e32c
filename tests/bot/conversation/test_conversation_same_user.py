"""Two messages of one user in flight at once run one after the other, not into each other.

Each chat unit inserts rows that point at the user (InnoDB takes a shared lock on the users row for the
foreign key) and ends by updating that row (the customer-service window): two such units of one user
both held the shared lock and then both wanted the exclusive one, a deadlock that InnoDB broke by
rolling one back, to be run again. The unit now locks the user's row when it reads it first, so the
second message waits for the first and reads its committed state (e.g. the question it asked).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Bot
from sqlalchemy import text

from bot.conversation import dialog
from schedule.model import ScheduleItemRow

ROUNDS = 12


async def _deadlocks(bot: Bot) -> int | None:
    async with bot.sessions() as session:
        if session.bind.dialect.name != "mysql":
            return None
        return int((await session.execute(text("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'"))).one()[1])


async def test_two_messages_of_one_user_at_once_both_land_without_a_deadlock(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("你好")  # the user exists before the race
    before = await _deadlocks(bot)
    for i in range(ROUNDS):
        answers = await asyncio.gather(chat.say(f"明天上午九点提醒我带材料{i}"), chat.say(f"明天下午三点开会{i}"))
        assert all("已记录" in a for a in answers), answers
    items: list[Any] = await bot.rows(ScheduleItemRow)
    assert len(items) == 2 * ROUNDS
    if before is not None:
        assert await _deadlocks(bot) == before  # serialised by the row lock, not broken up by InnoDB


async def test_the_second_message_sees_the_question_the_first_asked(bot: Bot,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The first message is still in its transaction (saving its question) when the second arrives."""
    original = dialog.save
    saving = asyncio.Event()

    async def slow_save(*args: Any, **kwargs: Any) -> None:
        saving.set()
        await asyncio.sleep(0.2)  # the answer's turn opens meanwhile, unless it has to wait for this one
        await original(*args, **kwargs)

    monkeypatch.setattr(dialog, "save", slow_save)
    chat = bot.chat()
    await chat.say("你好")
    saving.clear()
    first = asyncio.create_task(chat.say("我明天要去开会，帮我记录增加一个提醒"))
    await asyncio.wait_for(saving.wait(), 30)  # the question's turn holds the user's row: the answer comes second
    answered = await chat.say("下午三点，提前半小时")
    asked = await first
    assert "几点" in asked
    assert "已记录" in answered and "15:00" in answered and "14:30" in answered
