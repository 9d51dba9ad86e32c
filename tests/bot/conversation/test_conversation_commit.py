"""A chat message's answer commits with its writes: the conversation's turn is final inside the unit of work the
webhook hands it, so the webhook marks the message done there and opens no transaction of its own after it.
An answer still waiting for the agent or a page link is finished after the unit (`finish`), and an answer is
never sent as saved unless the commit that saved it succeeded."""

from __future__ import annotations

from typing import Any

from conftest import Bot, SteeredHandler

from bot.conversation.handler import NOT_SAVED
from schedule.model import DialogStateRow, InboundMessageRow, ScheduleItemRow


def _finished(handler: SteeredHandler) -> list[str]:
    """The messages answered after their unit, by `finish` (the webhook then finishes them on its own)."""
    return [turn.message.content or "" for turn in handler.finished]


async def test_final_answers_commit_with_the_messages_writes(steered_bot: tuple[Bot, SteeredHandler]) -> None:
    bot, handler = steered_bot
    chat = bot.chat()
    created = await chat.say("明天下午三点开会")
    listed = await chat.say("明天有什么安排")
    chatted = await chat.say("讲个笑话吧")
    assert "开会" in created and "开会" in listed and bot.agent.answer_text in chatted
    assert _finished(handler) == ["讲个笑话吧"]  # the agent answers after the transaction
    assert [turn.final for turn in handler.turns] == [True, True, False]
    rows: list[Any] = [r for r in await bot.rows(InboundMessageRow)
                       if r.dedupe_key.startswith("msg:")]  # type: ignore[attr-defined]  # not the nonces
    assert [r.status for r in rows] == ["done"] * 3
    assert created in rows[0].reply and listed in rows[1].reply
    assert len(await bot.rows(ScheduleItemRow)) == 1


async def test_a_long_listing_commits_with_its_page_link_once_links_can_be_signed(
        steered_bot: tuple[Bot, SteeredHandler]) -> None:
    """More than eight entries get a page link. Before the signing key is known it may have to be read (or
    stored) first, so that first link is made after the transaction; from then on signing needs no database,
    the link is made inside the message's unit and the answer commits with it."""
    bot, handler = steered_bot
    chat = bot.chat()
    for hour in range(9, 18):
        await chat.say(f"明天{hour}点提醒我做第{hour}件事")
    first = await chat.say("看看明天行程")
    assert _finished(handler) == ["看看明天行程"]  # the key was loaded on the way
    again = await chat.say("明天有什么安排")
    assert _finished(handler) == ["看看明天行程"]  # finished inside the unit
    for reply in (first, again):
        assert "共 9 项安排" in reply
        url = reply.rsplit("\n", 1)[1].removeprefix("查看行程页：")
        page = await bot.client.get(url.removeprefix(bot.app.state.settings.PUBLIC_BASE_URL))
        assert page.status_code == 200 and "做第17件事" in page.text
    rows: list[Any] = [r for r in await bot.rows(InboundMessageRow) if r.dedupe_key.startswith("msg:")]
    assert rows[-1].status == "done" and "/p/" in rows[-1].reply


async def test_a_unit_whose_last_trip_fails_says_nothing_was_saved(steered_bot: tuple[Bot, SteeredHandler]) -> None:
    """The conversation's turn is final (已记录) but the trip with the finishing writes and the COMMIT fails: the
    item, the dialogue and the inbound row's answer all roll back, and the user is told nothing was saved."""
    bot, handler = steered_bot
    chat = bot.chat()
    await chat.say("你好")
    handler.finished.clear()
    handler.failing_write = True
    answer = await chat.say("明天上午九点提醒我带材料")
    handler.failing_write = False
    assert handler.turns[-1].final and "已记录" in (handler.turns[-1].reply or "")  # what it would have said
    assert answer == NOT_SAVED and [t.failed for t in handler.finished] == [True]
    assert await bot.rows(ScheduleItemRow) == [] and not [r for r in await bot.rows(DialogStateRow)
                                                          if "带材料" in str(r.focus)]  # type: ignore[attr-defined]
    rows: list[Any] = [r for r in await bot.rows(InboundMessageRow) if r.dedupe_key.startswith("msg:")]
    assert rows[-1].status == "done" and NOT_SAVED in rows[-1].reply
    assert "已记录" in await chat.say("明天上午九点提醒我带材料")  # the same message again goes through
    assert len(await bot.rows(ScheduleItemRow)) == 1
