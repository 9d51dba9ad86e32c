"""A user's titles are that user's words only: matching one user's cancel never changes how another user's
text is cut, and jieba's dictionary stays as shipped however many titles are stored and matched.
The clock stands at Thursday 2026-06-18 10:00 in Shanghai."""

from __future__ import annotations

from conftest import Bot

from intent import target
from schedule.model import ScheduleItemRow


def _dictionary() -> tuple[int, int]:
    target.warm_up()
    tokenizer = target._SEGMENTER._tokenizer
    return len(tokenizer.FREQ), tokenizer.total


async def _statuses(bot: Bot) -> list[tuple[str, str]]:
    return [(row.title, row.status) for row in await bot.rows(ScheduleItemRow)
            if isinstance(row, ScheduleItemRow) and row.title == "打球"]


async def test_another_users_titles_do_not_change_how_a_cancel_is_matched(bot: Bot) -> None:
    bob, alice = bot.chat("o-bob"), bot.chat("o-alice")
    assert "已记录" in await bob.say("明天下午三点打球")
    assert "已记录" in await bob.say("后天下午三点打球")
    first = await bob.say("取消明天和小李打球")
    assert first.startswith("已取消") and "6月19日" in first, first
    shipped = _dictionary()
    for i, title in enumerate(["小李打", "周报交"] * 10):
        assert "已记录" in await alice.say(f"明天上午{7 + i % 5}点提醒我{title}")
    assert (await alice.say("取消小李打")).startswith("找到")  # her 小李打 items 小李打 are found by her words
    second = await bob.say("取消后天和小李打球")
    assert second.startswith("已取消") and "6月20日" in second, second  # cut and matched as before her titles
    assert await _statuses(bot) == [("打球", "cancelled"), ("打球", "cancelled")]
    assert _dictionary() == shipped
