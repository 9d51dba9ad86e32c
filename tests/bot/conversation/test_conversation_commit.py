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


async def test_a_long_listing_commits_with_its_page_link_once_links_can_be_signed(
        bot: Bot, finished_by_webhook: list[str]) -> None:
    """More than eight entries get a page link. Before the signing key is known it may have to be read (or
    stored) first, so that first link is made after the transaction; from then on signing needs no database,
    the link is made inside the message's unit and the answer commits with it."""
    chat = bot.chat()
    for hour in range(9, 18):
        await chat.say(f"明天{hour}点提醒我做第{hour}件事")
    first = await chat.say("看看明天行程")
    assert finished_by_webhook == ["看看明天行程"]  # the key was loaded on the way
    again = await chat.say("明天有什么安排")
    assert finished_by_webhook == ["看看明天行程"]  # finished inside the unit
    for reply in (first, again):
        assert "共 9 项安排" in reply
        url = reply.rsplit("\n", 1)[1].removeprefix("查看行程页：")
        page = await bot.client.get(url.removeprefix(bot.app.state.settings.PUBLIC_BASE_URL))
        assert page.status_code == 200 and "做第17件事" in page.text
    rows: list[Any] = [r for r in await bot.rows(InboundMessageRow) if r.dedupe_key.startswith("msg:")]
    assert rows[-1].status == "done" and "/p/" in rows[-1].reply
