"""下周一到周五每天早上8点提醒我打卡: the reply names the last day, the worker pushes Monday to Friday of next
week and nothing after (the clock starts at Thursday 2026-06-18 10:00 in Shanghai)."""

from __future__ import annotations

from datetime import datetime, timedelta

from conftest import SH, Bot

from schedule.model import OutboundMessageRow


async def test_a_series_for_next_week_only(bot: Bot) -> None:
    chat = bot.chat()
    reply = await chat.say("下周一到周五每天早上8点提醒我打卡")
    assert reply == ("已记录：每周一到周五08:00 打卡，首次是6月22日（周一）08:00，最后一次是6月26日（周五）08:00，共 5 次。"
                     "到时提醒你。")
    pushed_on: list[str] = []
    day = datetime(2026, 6, 19, 8, 1, tzinfo=SH)
    for _ in range(14):  # 6/19 to 7/2, a minute after 08:00 each day
        bot.clock.set(day)
        await bot.deliver()
        rows = await bot.rows(OutboundMessageRow)
        if len(rows) > len(pushed_on):
            pushed_on.append(day.date().isoformat())
        day += timedelta(days=1)
    assert pushed_on == ["2026-06-22", "2026-06-23", "2026-06-24", "2026-06-25", "2026-06-26"]
