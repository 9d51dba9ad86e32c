"""Tool arguments' instants are years 2000–2100, refused otherwise with a message the model can act on (a year
1 or 9999 once stored made that user's listings fail for good); and a tool call that writes is one
transaction: when it fails, nothing it wrote is kept and the reply does not claim it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from fakes.llm import FakeLLM
from schedule.clock import to_ms
from schedule.domain import User
from schedule.model import ScheduleItemRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]
SH = timezone(timedelta(hours=8))


def tool_results(llm: FakeLLM, request: int = 1) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in llm.requests[request]["messages"] if m["role"] == "tool"]


async def rows(sessions: Sessions, model: type) -> list[Any]:
    async with sessions() as session:
        return list((await session.scalars(select(model))).all())


OUT_OF_RANGE = [
    ("schedule_create_item", {"kind": "event", "title": "开会", "start_at": "9999-12-31T23:00:00-05:00"}),
    ("schedule_create_item", {"kind": "event", "title": "开会", "start_at": "0001-01-01T00:00:00+08:00"}),
    ("schedule_create_item", {"kind": "task", "title": "交材料", "due_at": "1999-12-31T12:00:00+08:00"}),
    ("schedule_create_item", {"kind": "task", "title": "交材料", "due_at": "2026-06-19T12:00:00+08:00",
                              "remind_at": "2101-01-01T08:00:00+08:00"}),
    ("schedule_list_items", {"start": "0001-01-01T00:00:00", "end": "0001-01-02T00:00:00"}),
]


@pytest.mark.parametrize(("tool", "arguments"), OUT_OF_RANGE)
async def test_an_instant_outside_2000_to_2100_is_refused_with_a_reason(
        llm: FakeLLM, make_agent, service: ScheduleService, alice: User, clock: FrozenClock, sessions: Sessions,
        tool: str, arguments: dict[str, Any]) -> None:
    llm.call_tools((tool, arguments)).reply("好的")
    await make_agent().answer(alice, "记一下", now=clock.now())
    [result] = tool_results(llm)
    assert (result["ok"], result["error"]) == (False, "invalid_arguments")
    assert any("只接受 2000 到 2100 年之间的时间" in d["problem"] for d in result["details"]), result
    assert await rows(sessions, ScheduleItemRow) == []
    far = datetime(2000, 1, 1, tzinfo=UTC), datetime(2101, 1, 1, tzinfo=UTC)
    assert await service.list_items(alice.id, start_ms=to_ms(far[0]), end_ms=to_ms(far[1]),
                                    include_undated_tasks=True) == []


async def test_the_first_and_last_years_are_accepted(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                                     sessions: Sessions) -> None:
    llm.call_tools(("schedule_create_item", {"kind": "task", "title": "千禧", "due_at": "2000-01-01T00:00:00+08:00"}),
                   ("schedule_create_item", {"kind": "task", "title": "世纪末", "due_at": "2100-12-31T23:59:00"}))
    llm.reply("好的")
    await make_agent().answer(alice, "记两条", now=clock.now())
    assert [r["ok"] for r in tool_results(llm)] == [True, True]
    assert sorted(r.title for r in await rows(sessions, ScheduleItemRow)) == ["世纪末", "千禧"]


async def test_a_tool_call_that_fails_after_writing_keeps_nothing_and_claims_nothing(
        llm: FakeLLM, make_agent, service: ScheduleService, alice: User, clock: FrozenClock,
        sessions: Sessions) -> None:
    """An item stored before the bounds (year 1): renaming it writes the row, then its time cannot be shown."""
    stamp = to_ms(clock.now())
    async with sessions.begin() as session:
        legacy = (await session.execute(insert(ScheduleItemRow).values(
            user_id=alice.id, kind="event", title="旧数据", status="active",
            start_at=to_ms(datetime(1, 1, 1, tzinfo=SH)), all_day=False, timezone="Asia/Shanghai",
            source_channel="agent", created_at=stamp, updated_at=stamp))).inserted_primary_key[0]
    llm.call_tools(("schedule_update_item", {"item_id": legacy, "title": "新标题"})).reply("改好了")
    answer = await make_agent().answer(alice, "把旧数据改名叫新标题", now=clock.now())
    [result] = tool_results(llm)
    assert (result["ok"], result["error"]) == (False, "tool_failed")
    assert "没有保存任何改动" in result["message"]
    assert [(r.title, r.updated_at) for r in await rows(sessions, ScheduleItemRow)] == [("旧数据", stamp)]
    assert "已修改" not in answer

