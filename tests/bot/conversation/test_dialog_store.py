"""The pending-question store: saved over an older question, read back while fresh, and never failing a
message because another message of the same user changed the row meanwhile."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.conversation import dialog
from bot.conversation.context import Ask
from intent import parse
from schedule import users

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 6, 18, 10, 0, tzinfo=SH)


def question(text: str) -> Ask:
    intent = parse(text, now=NOW, tz=SH)
    assert intent.needs_clarification
    return Ask(intent, candidates=(3, 5))


async def new_user(sessions: async_sessionmaker[AsyncSession]) -> int:
    async with sessions.begin() as session:
        return (await users.get_or_create(session, "o-dialog", timezone="Asia/Shanghai", now_ms=0)).id


async def test_a_new_question_replaces_the_old_one_and_expires(sessions: async_sessionmaker[AsyncSession]) -> None:
    uid = await new_user(sessions)
    async with sessions.begin() as session:
        await dialog.save(session, uid, question("我明天要去开会，帮我记录增加一个提醒"), expires_at_ms=1_000)
    async with sessions.begin() as session:
        await dialog.save(session, uid, question("提醒我交材料"), expires_at_ms=2_000)
    async with sessions.begin() as session:
        pending = (await dialog.open_turn(session, uid)).pending(1_500)
        assert pending is not None and pending.candidates == (3, 5)
        assert pending.intent.pending is not None and pending.intent.pending.label == "交材料"
        assert (await dialog.open_turn(session, uid)).pending(2_000) is None  # expired
        await dialog.clear(session, uid)
        assert (await dialog.open_turn(session, uid)).pending(0) is None


async def test_two_messages_that_both_found_no_question_both_save(engine: AsyncEngine,
                                                                 sessions: async_sessionmaker[AsyncSession]) -> None:
    """Two messages of one user, both finding no open question, both asking one: the second save meets
    the row the first committed. It must replace it (the later question is the one kept), not fail the
    message with a duplicate key. (open_turn locks the user's row, so on MariaDB too the other message
    runs between the first's read and its save, as SQLite's serialised writers always did.)"""
    uid = await new_user(sessions)
    async with sessions.begin() as first:
        assert (await dialog.open_turn(first, uid)).pending(0) is None
    async with sessions.begin() as other:
        await dialog.save(other, uid, question("我明天要去开会，帮我记录增加一个提醒"), expires_at_ms=10_000)
    async with sessions.begin() as first:
        await dialog.save(first, uid, question("提醒我交材料"), expires_at_ms=20_000)
    async with sessions.begin() as session:
        opening = await dialog.open_turn(session, uid)
        pending = opening.pending(15_000)
        assert opening.expires_at == 20_000
        assert pending is not None and pending.intent.pending is not None and pending.intent.pending.label == "交材料"
