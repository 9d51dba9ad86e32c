"""Tool calls through the fake LLM: validated arguments, writes for the caller only, errors back to the model."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from fakes.llm import FakeLLM
from schedule.clock import to_ms
from schedule.domain import NewItem, NewReminder, User
from schedule.model import AgentMessageRow, ReminderRow, ScheduleItemRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]
MEETING = {"kind": "event", "title": "项目会", "start_at": "2026-06-19T15:00:00+08:00", "remind_offset_minutes": 60}


def ms(text: str) -> int:
    return to_ms(datetime.fromisoformat(text))


def tool_results(llm: FakeLLM, request: int = 1) -> list[dict[str, Any]]:
    """The tool messages the agent sent back to the model in the given request."""
    return [json.loads(m["content"]) for m in llm.requests[request]["messages"] if m["role"] == "tool"]


async def items_of(sessions: Sessions, user: User) -> list[ScheduleItemRow]:
    async with sessions() as session:
        return list((await session.scalars(select(ScheduleItemRow).where(ScheduleItemRow.user_id == user.id))).all())


async def count(sessions: Sessions, model: type) -> int:
    async with sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def test_a_tool_call_creates_an_item_for_the_caller_only(llm: FakeLLM, make_agent, alice: User, bob: User,
                                                               clock: FrozenClock, sessions: Sessions) -> None:
    llm.call_tools(("schedule_create_item", MEETING)).reply("已记录：6月19日（周五）15:00 项目会，14:00 提醒你。")
    answer = await make_agent().answer(alice, "明天下午三点项目会，提前一小时提醒", now=clock.now())
    assert answer == "已记录：6月19日（周五）15:00 项目会，14:00 提醒你。"
    [row] = await items_of(sessions, alice)
    assert (row.kind, row.title, row.start_at, row.source_channel) == (
        "event", "项目会", ms("2026-06-19T15:00:00+08:00"), "agent")
    assert row.source_text == "明天下午三点项目会，提前一小时提醒"
    async with sessions() as session:
        [reminder] = (await session.scalars(select(ReminderRow))).all()
    assert (reminder.item_id, reminder.user_id, reminder.remind_at, reminder.offset_minutes) == (
        row.id, alice.id, ms("2026-06-19T14:00:00+08:00"), 60)
    assert await items_of(sessions, bob) == []
    [result] = tool_results(llm)
    assert result["ok"] and result["item"]["id"] == row.id
    assert result["item"]["when"] == "6月19日（周五）15:00 项目会"
    assert result["item"]["reminders"] == ["2026-06-19T14:00+08:00"]
    assistant = llm.requests[1]["messages"][-2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["function"]["name"] == "schedule_create_item"


async def test_a_time_without_offset_is_read_in_the_users_timezone(llm: FakeLLM, make_agent, service,
                                                                   clock: FrozenClock, sessions: Sessions) -> None:
    traveller = await service.get_or_create_user("o-ny", timezone="America/New_York")
    llm.call_tools(("schedule_create_item", {"kind": "task", "title": "交房租", "due_at": "2026-06-19T09:00:00"}))
    await make_agent().answer(traveller, "明早九点交房租", now=clock.now())
    [row] = await items_of(sessions, traveller)
    assert (row.due_at, row.timezone) == (ms("2026-06-19T09:00:00-04:00"), "America/New_York")


async def test_another_users_item_id_fails_cleanly(llm: FakeLLM, make_agent, service: ScheduleService, alice: User,
                                                  bob: User, clock: FrozenClock, sessions: Sessions) -> None:
    bobs = await service.create_item(bob.id, NewItem(kind="event", title="鲍勃的会", timezone="Asia/Shanghai",
                                                     start_at=ms("2026-06-19T15:00:00+08:00"),
                                                     reminders=(NewReminder(ms("2026-06-19T14:00:00+08:00")),)))
    llm.call_tools(("schedule_cancel_item", {"item_id": bobs.id}),
                   ("schedule_update_item", {"item_id": bobs.id, "title": "改掉"}),
                   ("schedule_create_reminder", {"item_id": bobs.id, "offset_minutes": 10}))
    llm.reply("没有找到这个条目。")
    assert await make_agent().answer(alice, f"取消 {bobs.id} 号", now=clock.now()) == "没有找到这个条目。"
    assert [(r["ok"], r["error"]) for r in tool_results(llm)] == [(False, "not_found")] * 3
    after = await service.get_item(bob.id, bobs.id)
    assert (after.status, after.title, [r.status for r in after.reminders]) == ("active", "鲍勃的会", ["pending"])
    assert await count(sessions, ReminderRow) == 1


@pytest.mark.parametrize(("arguments", "field"), [
    ({"kind": "event", "title": "会议"}, "arguments"),  # an event without start_at
    ({"kind": "task", "title": "", "due_at": "2026-06-19T09:00:00+08:00"}, "title"),
    ({"kind": "meeting", "title": "会议", "start_at": "2026-06-19T15:00:00+08:00"}, "kind"),
    ({**MEETING, "start_at": "下午三点"}, "start_at"),
    ({**MEETING, "user_id": 2}, "user_id"),  # the caller is never chosen by the model
    ({**MEETING, "end_at": "2026-06-19T14:00:00+08:00"}, "arguments"),
    ('{"kind": "event", "title": "会议", ', "arguments"),  # broken JSON
])
async def test_invalid_arguments_are_refused_and_reported(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                                          sessions: Sessions, arguments: Any, field: str) -> None:
    llm.call_tools(("schedule_create_item", arguments)).reply("参数有误，请再说一遍时间。")
    assert await make_agent().answer(alice, "记个会", now=clock.now()) == "参数有误，请再说一遍时间。"
    [result] = tool_results(llm)
    assert (result["ok"], result["error"]) == (False, "invalid_arguments")
    assert field in {d["field"] for d in result["details"]}
    assert await count(sessions, ScheduleItemRow) == 0


async def test_unknown_tool_is_reported(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock) -> None:
    llm.call_tools(("drop_database", {})).reply("做不到。")
    assert await make_agent().answer(alice, "删库", now=clock.now()) == "做不到。"
    assert tool_results(llm)[0]["error"] == "unknown_tool"


async def test_list_update_and_reminder_tools(llm: FakeLLM, make_agent, service: ScheduleService, alice: User,
                                              clock: FrozenClock) -> None:
    item = await service.create_item(alice.id, NewItem(
        kind="event", title="体检", timezone="Asia/Shanghai", start_at=ms("2026-06-19T09:00:00+08:00"),
        reminders=(NewReminder(ms("2026-06-19T08:00:00+08:00"), offset_minutes=60),)))
    llm.call_tools(("schedule_list_items", {"start": "2026-06-19T00:00:00+08:00", "end": "2026-06-20T00:00:00+08:00"}))
    llm.call_tools(("schedule_update_item", {"item_id": item.id, "start_at": "2026-06-19T10:00:00+08:00"}),
                   ("schedule_create_reminder", {"item_id": item.id, "offset_minutes": 15}))
    llm.reply("体检改到 10:00，9:00 和 9:45 提醒你。")
    await make_agent().answer(alice, "明天体检推迟一小时，开始前15分钟再提醒一次", now=clock.now())
    [listing] = tool_results(llm, 1)
    assert listing["count"] == 1 and listing["items"][0]["id"] == item.id
    update, reminder = tool_results(llm, 2)[1:]  # after the listing
    assert update["ok"] and update["item"]["start_at"] == "2026-06-19T10:00+08:00"
    assert reminder["ok"] and reminder["reminder"]["remind_at"] == "2026-06-19T09:45+08:00"
    after = await service.get_item(alice.id, item.id)
    assert after.start_at == ms("2026-06-19T10:00:00+08:00")
    assert sorted(r.remind_at for r in after.reminders) == [ms("2026-06-19T09:00:00+08:00"),
                                                            ms("2026-06-19T09:45:00+08:00")]


async def test_cancel_tool_cancels_the_callers_item(llm: FakeLLM, make_agent, service: ScheduleService, alice: User,
                                                    clock: FrozenClock) -> None:
    item = await service.create_item(alice.id, NewItem(kind="task", title="买票", timezone="Asia/Shanghai"))
    week = {"start": "2026-06-18T00:00:00+08:00", "end": "2026-06-25T00:00:00+08:00"}
    llm.call_tools(("schedule_list_items", week), ("schedule_list_items", {**week, "include_undated_tasks": True}))
    llm.call_tools(("schedule_cancel_item", {"item_id": item.id})).reply("已取消买票。")
    await make_agent().answer(alice, "买票不用了", now=clock.now())
    dated, undated = tool_results(llm, 1)
    assert dated["count"] == 0 and [i["title"] for i in undated["items"]] == ["买票"]
    assert (await service.get_item(alice.id, item.id)).status == "cancelled"


async def test_plan_page_uses_the_injected_link(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock) -> None:
    asked: list[tuple[int, int, int]] = []

    async def page_link(user_id: int, start_ms: int, end_ms: int) -> str:
        asked.append((user_id, start_ms, end_ms))
        return "https://example.test/p/abc"

    week = {"start": "2026-06-15T00:00:00+08:00", "end": "2026-06-22T00:00:00+08:00"}
    llm.call_tools(("schedule_render_plan_page", week)).reply("本周行程：https://example.test/p/abc")
    await make_agent(page_link=page_link).answer(alice, "生成本周行程页面", now=clock.now())
    assert asked == [(alice.id, ms(week["start"]), ms(week["end"]))]
    assert tool_results(llm)[0]["url"] == "https://example.test/p/abc"


async def test_plan_page_without_pages_lists_the_range(llm: FakeLLM, make_agent, service: ScheduleService,
                                                       alice: User, clock: FrozenClock) -> None:
    await service.create_item(alice.id, NewItem(kind="event", title="周会", timezone="Asia/Shanghai",
                                                start_at=ms("2026-06-19T10:00:00+08:00")))
    await service.create_item(alice.id, NewItem(kind="event", title="下周的会", timezone="Asia/Shanghai",
                                                start_at=ms("2026-06-23T10:00:00+08:00")))
    llm.call_tools(("schedule_render_plan_page",
                    {"start": "2026-06-15T00:00:00+08:00", "end": "2026-06-22T00:00:00+08:00"}))
    await make_agent().answer(alice, "生成本周行程页面", now=clock.now())
    [result] = tool_results(llm)
    assert result["url"] is None and [i["title"] for i in result["items"]] == ["周会"]


async def test_the_tool_loop_is_bounded(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                        sessions: Sessions) -> None:
    day = {"start": "2026-06-18T00:00:00+08:00", "end": "2026-06-19T00:00:00+08:00"}
    for _ in range(6):
        llm.call_tools(("schedule_list_items", day))
    answer = await make_agent(max_tool_rounds=3).answer(alice, "看看今天", now=clock.now())
    assert len(llm.requests) == 3
    assert "没能一次处理完" in answer
    assert await count(sessions, AgentMessageRow) == 2
