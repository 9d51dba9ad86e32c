"""A chat message's answer commits with its writes: the conversation hands a final answer over inside its
unit of work, so the webhook marks the message done there and opens no transaction of its own after it.
An answer still waiting for the agent or a page link is finished by the webhook as before."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Bot

from bot.wechat.messages import InboundMessage
from schedule.model import InboundMessageRow, ScheduleItemRow


@pytest.fixture
def finished_by_webhook(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    dispatcher = bot.app.state.wechat_router.dispatcher
    original, seen = dispatcher._finish, []

    async def spy(message: InboundMessage, *args: Any, **kwargs: Any) -> str:
        seen.append(message.content or "")
        return await original(message, *args, **kwargs)

    monkeypatch.setattr(dispatcher, "_finish", spy)
    return seen


async def test_final_answers_commit_with_the_messages_writes(bot: Bot, finished_by_webhook: list[str]) -> None:
    chat = bot.chat()
    created = await chat.say("明天下午三点开会")
    listed = await chat.say("明天有什么安排")
    chatted = await chat.say("讲个笑话吧")
    assert "开会" in created and "开会" in listed and bot.agent.answer_text in chatted
    assert finished_by_webhook == ["讲个笑话吧"]  # the agent answers after the transaction
    rows: list[Any] = [r for r in await bot.rows(InboundMessageRow)
                       if r.dedupe_key.startswith("msg:")]  # type: ignore[attr-defined]  # not the nonces
    assert [r.status for r in rows] == ["done"] * 3
    assert created in rows[0].reply and listed in rows[1].reply
    assert len(await bot.rows(ScheduleItemRow)) == 1
