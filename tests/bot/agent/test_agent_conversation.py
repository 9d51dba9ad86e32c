"""What the rules hand over reaches the agent with the conversation so far and the item in focus, so an
LLM can finish a follow-up with a tool call on that item (real webhook, fake OpenAI-compatible server)."""

from __future__ import annotations

from sqlalchemy import select

from schedule.model import ScheduleItemRow
from schedule.testing import FrozenClock
from tests.bot.agent.test_agent_webhook import agent_bot, content_of, post


async def test_a_follow_up_the_rules_hand_over_is_finished_on_the_focus(database_url: str,
                                                                        clock: FrozenClock) -> None:
    async with agent_bot(database_url, clock) as bot:
        await post(bot.client, clock, "o-ctx", "明天下午三点去银行", 7101)
        created = content_of(await post(bot.client, clock, "o-ctx", "后天上午十点和李总见面", 7102))
        assert created.startswith("已记录：6月20日（周六）10:00 和李总见面")
        async with bot.sessions() as session:
            meeting = await session.scalar(select(ScheduleItemRow).where(ScheduleItemRow.title == "和李总见面"))
        assert meeting is not None
        bot.llm.call_tools(("schedule_update_item", {"item_id": meeting.id, "location": "线上（腾讯会议）"}))
        bot.llm.reply("好的，已改成线上：6月20日（周六）10:00 和李总见面。")
        answer = content_of(await post(bot.client, clock, "o-ctx", "这个能不能改成线上开呢", 7103))
        async with bot.sessions() as session:
            rows = {r.title: r.location for r in (await session.scalars(select(ScheduleItemRow))).all()}
        messages = bot.llm.requests[0]["messages"]
    assert answer == "好的，已改成线上：6月20日（周六）10:00 和李总见面。"
    assert rows == {"去银行": None, "和李总见面": "线上（腾讯会议）"}  # the item in focus, not the other one
    said = [m["content"] for m in messages if m["role"] == "user"]
    assert said == ["明天下午三点去银行", "后天上午十点和李总见面", "这个能不能改成线上开呢"]  # rule-handled turns too
    replies = [m["content"] for m in messages if m["role"] == "assistant"]
    assert replies[1] == created
    [focus] = [m["content"] for m in messages[1:] if m["role"] == "system"]
    assert f"id={meeting.id}：日程“和李总见面”，6月20日（周六）10:00" in focus
