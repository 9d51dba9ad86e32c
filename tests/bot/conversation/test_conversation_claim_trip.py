"""On MariaDB a chat message's first read (the user's row, locked) goes to the database in the claim's trip, after
its COMMIT, and the conversation carries on in that transaction: one round trip fewer per message. A retry, a
replay, a turn that never uses its unit and a failed read all end that transaction and leave no lock behind."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import TOKEN, Bot, SteeredHandler
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from fakes.wechat import sign_request, text_message
from schedule import db
from schedule.model import InboundMessageRow, ScheduleItemRow, UserRow


def _mariadb(bot: Bot) -> None:
    if bot.app.state.engine.dialect.name == "sqlite":
        pytest.skip("MariaDB only: SQLite's claims commit in groups, with no trip of their own")


async def _unlocked(database_url: str, user_id: int) -> bool:
    """Whether another connection gets the user's row lock at once (it would wait at most a second)."""
    other = db.create_engine(database_url)
    try:
        async with other.begin() as conn:
            await conn.execute(text("SET SESSION innodb_lock_wait_timeout = 1"))
            await conn.execute(select(UserRow.id).where(UserRow.id == user_id).with_for_update())
            return True
    except Exception as exc:
        if "1205" not in str(exc):  # lock wait timeout
            raise
        return False
    finally:
        await other.dispose()


async def _user_id(bot: Bot, openid: str = "o-alice") -> int:
    [user] = await bot.rows(UserRow, wechat_openid=openid)
    return int(user.id)  # type: ignore[attr-defined]


async def test_a_create_message_takes_three_trips(bot: Bot, trips: list[str]) -> None:
    _mariadb(bot)
    chat = bot.chat()
    await chat.say("你好")  # the user exists and the webhook knows its id
    trips.clear()
    reply = await chat.say("明天上午九点提醒我带材料")
    assert "已记录" in reply
    assert len(trips) == 3, trips  # claim + the user's row; item + reminder; finish + COMMIT
    assert "INSERT IGNORE INTO inbound_messages" in trips[0]
    [item] = await bot.rows(ScheduleItemRow)
    assert item.title == "带材料"  # type: ignore[attr-defined]


async def test_a_retry_answers_the_stored_reply_and_holds_no_lock(bot: Bot, database_url: str) -> None:
    _mariadb(bot)
    chat = bot.chat()
    await chat.say("你好")
    body = text_message(chat.openid, "明天下午三点开会", msg_id=777_001, create_time=int(bot.clock.now().timestamp()))
    first = await chat.post(body)
    again = await chat.post(body)  # WeChat's retry of the same MsgId with a new nonce
    assert "已记录" in first and again == first
    assert await _unlocked(database_url, await _user_id(bot))
    assert "已记录" in await chat.say("明天上午十点提醒我交表")  # the next message is not held up either
    assert len(await bot.rows(ScheduleItemRow)) == 2


async def test_a_replayed_signature_is_refused_and_holds_no_lock(bot: Bot, database_url: str) -> None:
    _mariadb(bot)
    chat = bot.chat()
    await chat.say("你好")
    params = sign_request(TOKEN, timestamp=int(bot.clock.now().timestamp()), nonce="reused-nonce")
    now = int(bot.clock.now().timestamp())
    first = await bot.client.post("/wechat", params=params, content=text_message(
        chat.openid, "明天下午三点开会", msg_id=777_101, create_time=now).encode())
    forged = await bot.client.post("/wechat", params=params, content=text_message(
        chat.openid, "把明天的会取消", msg_id=777_102, create_time=now).encode())
    assert (first.status_code, forged.status_code) == (200, 403)
    assert await _unlocked(database_url, await _user_id(bot))
    assert len(await bot.rows(ScheduleItemRow, status="active")) == 1


async def test_a_turn_that_uses_no_unit_still_ends_the_transaction(steered_bot: tuple[Bot, SteeredHandler],
                                                                    database_url: str, engine: AsyncEngine) -> None:
    """A help request reads in its unit too; a turn that answers without the database (here: the handler passed
    in answers by itself, its opening read still sent with the claim) must still end what the claim began."""
    bot, handler = steered_bot
    _mariadb(bot)
    chat = bot.chat()
    await chat.say("你好")
    handler.answer = "不用数据库的回答"
    checked_out = engine.pool.checkedout()  # type: ignore[attr-defined]
    answer = await chat.say("随便说点什么")
    assert answer == "不用数据库的回答"
    assert await _unlocked(database_url, await _user_id(bot))
    assert engine.pool.checkedout() == checked_out  # type: ignore[attr-defined]
    rows: list[Any] = await bot.rows(InboundMessageRow)
    [row] = [r for r in rows if r.reply and "不用数据库" in r.reply]
    assert row.status == "done"


async def test_two_messages_of_one_user_sent_at_once_take_turns(bot: Bot) -> None:
    """The second claim's read waits for the first message's unit (the row lock), then sees its question."""
    _mariadb(bot)
    chat = bot.chat()
    await chat.say("你好")
    results = await asyncio.gather(*(chat.say(f"明天下午{h}点提醒我开会{h}") for h in range(1, 7)))
    assert all("已记录" in r for r in results), results
    assert len(await bot.rows(ScheduleItemRow)) == 6


async def test_without_the_handoff_each_message_takes_one_trip_more(steered_bot: tuple[Bot, SteeredHandler],
                                                                    trips: list[str]) -> None:
    """The same message through a handler that names no opening read: the user's row is read in a trip of its
    own. (What the first test's three trips are measured against.)"""
    bot, handler = steered_bot
    _mariadb(bot)
    handler.opening_read = False
    chat = bot.chat()
    await chat.say("你好")
    trips.clear()
    assert "已记录" in await chat.say("明天上午九点提醒我带材料")
    assert len(trips) == 4, trips


async def test_retries_in_flight_with_their_original_store_one_item_and_leave_no_lock(bot: Bot,
                                                                                     database_url: str) -> None:
    """WeChat's retries of a message still being handled: one claim wins, the others' reads wait for its unit
    (or come first and answer `success`); nothing is stored twice, nothing deadlocks, no lock stays."""
    _mariadb(bot)
    chat = bot.chat()
    await chat.say("你好")
    body = text_message(chat.openid, "明天下午三点开会", msg_id=777_201, create_time=int(bot.clock.now().timestamp()))
    replies = await asyncio.gather(*(chat.post(body) for _ in range(3)))
    assert sum("已记录" in r for r in replies) >= 1 and all(r == "" or "已记录" in r for r in replies), replies
    assert len(await bot.rows(ScheduleItemRow)) == 1
    assert await _unlocked(database_url, await _user_id(bot))
