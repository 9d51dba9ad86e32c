"""Test doubles shipped with the package: a frozen, manually advanced clock and a recording channel; a user's
item quota filled in one statement."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule.channel import DeliveryFailure, Outgoing, Receipt
from schedule.clock import PinnedClock
from schedule.model import ScheduleItemRow

FrozenClock = PinnedClock  # the tests' name for the pinned clock


class RecordingChannel:
    """A Channel double: records every message; scripted failures are raised first, in order."""

    def __init__(self, name: str = "wechat", *, failures: list[DeliveryFailure] | None = None,
                 needs_window: bool = False) -> None:
        self.name = name
        self.needs_window = needs_window
        self.sent: list[Outgoing] = []
        self.attempts: list[Outgoing] = []
        self.failures = list(failures or [])
        self._counter = 0

    async def send(self, message: Outgoing) -> Receipt:
        self.attempts.append(message)
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append(message)
        parts: dict[int, str | None] = {}
        for index in range(int(message.payload.get("parts", 1))):
            if index not in message.sent_parts:
                self._counter += 1
                parts[index] = f"{self.name}-{self._counter}"
        return Receipt(parts)


async def active_items(sessions: async_sessionmaker[AsyncSession], user_id: int) -> int:
    async with sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(ScheduleItemRow).where(
            ScheduleItemRow.user_id == user_id, ScheduleItemRow.status == "active")) or 0)


async def fill_to_quota(sessions: async_sessionmaker[AsyncSession], user_id: int, *, quota: int, now_ms: int) -> None:
    """Active one-off events (in March 2027, outside the ranges tests look at) until the user has `quota`,
    written at `now_ms` as creates would be."""
    missing = quota - await active_items(sessions, user_id)
    start = int(datetime(2027, 3, 1, 1, 0, tzinfo=UTC).timestamp() * 1000)
    async with sessions.begin() as session:
        await session.execute(insert(ScheduleItemRow), [
            {"user_id": user_id, "kind": "event", "title": f"占位{n}", "status": "active",
             "start_at": start + n * 60_000, "all_day": False, "timezone": "Asia/Shanghai", "source_channel": "api",
             "created_at": now_ms, "updated_at": now_ms}
            for n in range(missing)])
