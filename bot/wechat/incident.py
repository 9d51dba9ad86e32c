"""Configuration incidents standing now, for /healthz and `doctor`: the channel pauses every worker shares
(schedule.pauses) whose WeChat errcode only the account owner can fix, each with the setting to fix."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.wechat.errors import FailureClass, rule_for
from schedule import pauses
from schedule.clock import from_ms
from schedule.db import in_transaction


async def standing(sessions: async_sessionmaker[AsyncSession], now: int) -> list[str]:
    """One line per paused channel whose cause is a configuration errcode (40164, 40013, 40037 …)."""
    active = await in_transaction(sessions, lambda session: pauses.active(session, now))
    lines = []
    for channel, pause in sorted(active.items()):
        code = int(pause.code) if pause.code and pause.code.lstrip("-").isdigit() else None
        rule = rule_for(code) if code is not None else None
        if rule is None or rule.failure is not FailureClass.CONFIG:
            continue
        then = "rows go down the ladder" if pause.ladder else "rows wait without spending attempts"
        lines.append(f"{channel} paused until {from_ms(pause.until).isoformat()} by errcode {code} "
                     f"({rule.meaning}): fix {rule.setting}; {then}")
    return lines
