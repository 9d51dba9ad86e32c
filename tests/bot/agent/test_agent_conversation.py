"""Rule 23: what the rules hand over reaches the agent with the conversation so far and the item in focus, so an
LLM can finish a follow-up with a tool call on that item (real webhook, fake OpenAI-compatible server)."""

from __future__ import annotations

from sqlalchemy import select

from bot.agent import AgentHistory
from bot.agent.openai_agent import OpenAIAgent
from bot.agent.testing import FakeLLM
from bot.app import create_app
from bot.testing import FakeWeChatAPI
from schedule.db import create_engine, session_factory
from schedule.model import ScheduleItemRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock
from tests.bot.agent.test_agent_webhook import config, content_of, post, running


async def test_a_follow_up_the_rules_hand_over_is_finished_on_the_focus(database_url: str,
                                                                        clock: FrozenClock) -> None:
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    try:
        async with FakeLLM() as llm, FakeWeChatAPI() as api:
            agent = OpenAIAgent(base_url=llm.base_url, api_key=llm.api_key, model="fake-model",
                                service=ScheduleService(sessions, clock), history=AgentHistory(sessions, clock),
                                max_retries=0)
            app = create_app(config(api, database_url), clock=clock, agent=agent, engine=engine,
                             run_worker=False, reply_budget_s=2.0)
            async with running(app) as client:
                await post(client, clock, "o-ctx", "明天下午三点去银行", 7101)
                created = content_of(await post(client, clock, "o-ctx", "后天上午十点和李总见面", 7102))
                assert created.startswith("已记录：6月20日（周六）10:00 和李总见面")
                async with sessions() as session:
                    meeting = await session.scalar(select(ScheduleItemRow).where(ScheduleItemRow.title == "和李总见面"))
                assert meeting is not None
                llm.call_tools(("schedule_update_item", {"item_id": meeting.id, "location": "线上（腾讯会议）"}))
                llm.reply("好的，已改成线上：6月20日（周六）10:00 和李总见面。")
                answer = content_of(await post(client, clock, "o-ctx", "这个能不能改成线上开呢", 7103))
            await agent.aclose()
        async with sessions() as session:
            rows = {r.title: r.location for r in (await session.scalars(select(ScheduleItemRow))).all()}
    finally:
        await engine.dispose()
    assert answer == "好的，已改成线上：6月20日（周六）10:00 和李总见面。"
    assert rows == {"去银行": None, "和李总见面": "线上（腾讯会议）"}  # the item in focus, not the other one
    messages = llm.requests[0]["messages"]
    said = [m["content"] for m in messages if m["role"] == "user"]
    assert said == ["明天下午三点去银行", "后天上午十点和李总见面", "这个能不能改成线上开呢"]  # rule-handled turns too
    replies = [m["content"] for m in messages if m["role"] == "assistant"]
    assert replies[1] == created
    [focus] = [m["content"] for m in messages[1:] if m["role"] == "system"]
    assert f"id={meeting.id}：日程“和李总见面”，6月20日（周六）10:00" in focus
