"""Agent-written text gets the control-character blanking the API and chat apply: NUL,
vertical tab and bidi overrides never reach the store, pages, ICS or pushes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent.tools import CreateItemArgs, UpdateItemArgs
from fakes.llm import FakeLLM
from schedule.domain import User
from schedule.model import ScheduleItemRow
from schedule.testing import FrozenClock

DIRTY_TITLE = "项目\x00会\x0b\u202eevil\u202c"
DIRTY_PLACE = "3楼\u200b\x1b[31m会议室"


def test_tool_arguments_blank_control_characters() -> None:
    args = CreateItemArgs.model_validate({"kind": "task", "title": DIRTY_TITLE, "location": DIRTY_PLACE})
    assert args.title == "项目 会 evil" and args.location == "3楼 [31m会议室"
    update = UpdateItemArgs.model_validate({"item_id": 1, "title": "\u202e周会\x7f"})
    assert update.title == "周会"
    with pytest.raises(ValidationError):
        UpdateItemArgs.model_validate({"item_id": 1, "title": "\x00\x0b\u202e"})  # nothing left of it


async def test_an_item_the_agent_writes_is_stored_without_control_characters(
        llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,  # type: ignore[no-untyped-def]
        sessions: async_sessionmaker[AsyncSession]) -> None:
    llm.call_tools(("schedule_create_item", {"kind": "event", "title": DIRTY_TITLE, "location": DIRTY_PLACE,
                                             "start_at": "2026-06-19T15:00:00+08:00"})).reply("好的")
    await make_agent().answer(alice, "明天下午三点项目会", now=clock.now())
    async with sessions() as session:
        row = (await session.scalars(select(ScheduleItemRow).where(ScheduleItemRow.user_id == alice.id))).one()
    assert (row.title, row.location) == ("项目 会 evil", "3楼 [31m会议室")
    assert not any(ord(c) < 32 or 0x202A <= ord(c) <= 0x202E for c in row.title + (row.location or ""))
