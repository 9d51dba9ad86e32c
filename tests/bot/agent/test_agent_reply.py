"""OpenAIAgent over real loopback HTTP: the request it sends, plain replies, per-user history."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from fakes.llm import FakeLLM
from schedule.domain import User
from schedule.model import AgentMessageRow
from schedule.testing import FrozenClock

TOOLS = {"schedule_create_item", "schedule_list_items", "schedule_update_item", "schedule_cancel_item",
         "schedule_create_reminder", "schedule_render_plan_page"}


async def _history(sessions: async_sessionmaker[AsyncSession], user: User) -> list[tuple[str, str]]:
    async with sessions() as session:
        rows = (await session.scalars(select(AgentMessageRow).where(AgentMessageRow.user_id == user.id)
                                      .order_by(AgentMessageRow.id))).all()
    return [(row.role, row.content) for row in rows]


async def test_plain_reply_and_the_request_sent(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                                sessions) -> None:
    llm.reply("会议纪要一般写时间、参会人、结论和待办。")
    answer = await make_agent().answer(alice, "会议纪要怎么写", now=clock.now())
    assert answer == "会议纪要一般写时间、参会人、结论和待办。"
    [request] = llm.requests
    assert request["model"] == "fake-model"
    system, user_message = request["messages"]
    assert system["role"] == "system"
    assert "2026年6月18日（周四）10:00" in system["content"] and "Asia/Shanghai" in system["content"]
    assert user_message == {"role": "user", "content": "会议纪要怎么写"}
    assert {tool["function"]["name"] for tool in request["tools"]} == TOOLS
    create = next(t for t in request["tools"] if t["function"]["name"] == "schedule_create_item")
    assert create["function"]["parameters"]["properties"]["start_at"]["anyOf"][0]["format"] == "date-time"
    assert await _history(sessions, alice) == [("user", "会议纪要怎么写"),
                                               ("assistant", "会议纪要一般写时间、参会人、结论和待办。")]


async def test_system_prompt_uses_the_users_timezone(llm: FakeLLM, make_agent, service, clock: FrozenClock) -> None:
    traveller = await service.get_or_create_user("o-ny", timezone="America/New_York")
    await make_agent().answer(traveller, "现在几点", now=clock.now())
    system = llm.requests[0]["messages"][0]["content"]
    assert "2026年6月17日（周三）22:00" in system and "America/New_York" in system and "UTC-04:00" in system


async def test_history_is_per_user_and_trimmed(llm: FakeLLM, make_agent, alice: User, bob: User,
                                               clock: FrozenClock, sessions) -> None:
    agent = make_agent(keep=4)
    for n in range(1, 4):
        llm.reply(f"答{n}")
        assert await agent.answer(alice, f"问{n}", now=clock.now()) == f"答{n}"
    llm.reply("你好，鲍勃")
    await agent.answer(bob, "我是谁", now=clock.now())
    third, bobs = llm.requests[2]["messages"], llm.requests[3]["messages"]
    assert [(m["role"], m["content"]) for m in third[1:]] == [
        ("user", "问1"), ("assistant", "答1"), ("user", "问2"), ("assistant", "答2"), ("user", "问3")]
    assert [(m["role"], m["content"]) for m in bobs[1:]] == [("user", "我是谁")]
    assert await _history(sessions, alice) == [("user", "问2"), ("assistant", "答2"), ("user", "问3"),
                                               ("assistant", "答3")]
    assert await _history(sessions, bob) == [("user", "我是谁"), ("assistant", "你好，鲍勃")]


async def test_history_can_be_off(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock, sessions) -> None:
    agent = make_agent(keep=0)
    await agent.answer(alice, "一", now=clock.now())
    await agent.answer(alice, "二", now=clock.now())
    assert [len(r["messages"]) for r in llm.requests] == [2, 2]
    assert await _history(sessions, alice) == []


async def test_long_text_is_stored_capped(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                          sessions) -> None:
    await make_agent().answer(alice, "长" * 5000, now=clock.now())
    stored = await _history(sessions, alice)
    assert [len(content) for _, content in stored] == [2000, len("好的。")]
    assert len(llm.requests[0]["messages"][-1]["content"]) == 2000
