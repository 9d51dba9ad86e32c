"""One-tap actions of the private page, each a ScheduleService call (the one write path)."""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from schedule.clock import from_ms, to_ms
from schedule.domain import NewReminder
from schedule.errors import InvalidChange
from schedule.recurrence import localize
from schedule.service import ScheduleService

SNOOZE_CHOICES = ("10m", "1h", "morning")
MORNING = time(8, 0)


def snooze_at(choice: str, *, now_ms: int, tz: str) -> int:
    """10 分钟 / 1 小时 later (to the minute, so a double tap is one reminder), or the next 08:00."""
    if choice == "10m":
        return (now_ms + 10 * 60_000) // 60_000 * 60_000
    if choice == "1h":
        return (now_ms + 60 * 60_000) // 60_000 * 60_000
    if choice == "morning":
        zone = ZoneInfo(tz)
        now = from_ms(now_ms).astimezone(zone)
        day = now.date() if now.time() < MORNING else now.date() + timedelta(days=1)
        return to_ms(localize(datetime.combine(day, MORNING), zone))
    raise ValueError(f"unknown snooze choice {choice!r}")


class PageActions:
    """complete / cancel / snooze / dismiss for one user; a closed item makes the action a no-op."""

    def __init__(self, service: ScheduleService) -> None:
        self._service = service

    async def complete(self, user_id: int, item_id: int) -> None:
        item = await self._service.get_item(user_id, item_id)
        if item.status == "active" and item.kind == "task":
            await self._service.complete_item(user_id, item_id)

    async def cancel(self, user_id: int, item_id: int) -> None:
        item = await self._service.get_item(user_id, item_id)
        if item.status == "active":
            await self._service.cancel_item(user_id, item_id)

    async def snooze(self, user_id: int, item_id: int, choice: str, *, now_ms: int, tz: str) -> None:
        remind_at = snooze_at(choice, now_ms=now_ms, tz=tz)
        with suppress(InvalidChange):  # the item was closed meanwhile: nothing to remind of
            await self._service.create_reminder(user_id, item_id, NewReminder(remind_at=remind_at))

    async def dismiss(self, user_id: int, reminder_id: int) -> None:
        await self._service.cancel_reminder(user_id, reminder_id)
