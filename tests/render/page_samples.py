"""Items for the page tests: built as ScheduleService returns them (domain values, epoch ms)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from schedule.clock import to_ms
from schedule.domain import Item, Recurrence, Reminder

SH = "Asia/Shanghai"


def at(y: int, mo: int, d: int, h: int = 0, mi: int = 0, tz: str = SH) -> int:
    return to_ms(datetime(y, mo, d, h, mi, tzinfo=ZoneInfo(tz)))


def event(item_id: int, title: str, start: int, end: int | None = None, *, tz: str = SH,
          reminders: tuple[Reminder, ...] = (), recurrence: Recurrence | None = None, status: str = "active",
          all_day: bool = False, local_date: str | None = None) -> Item:
    return Item(id=item_id, user_id=1, kind="event", title=title, status=status, timezone=tz,  # type: ignore[arg-type]
                start_at=start, end_at=end, reminders=reminders, recurrence=recurrence, all_day=all_day,
                local_date=local_date, created_at=at(2026, 6, 1), updated_at=at(2026, 6, 2))


def task(item_id: int, title: str, due: int | None, *, tz: str = SH, reminders: tuple[Reminder, ...] = (),
         status: str = "active", all_day: bool = False, local_date: str | None = None,
         recurrence: Recurrence | None = None) -> Item:
    return Item(id=item_id, user_id=1, kind="task", title=title, status=status, timezone=tz,  # type: ignore[arg-type]
                due_at=due, reminders=reminders, all_day=all_day, local_date=local_date, recurrence=recurrence,
                created_at=at(2026, 6, 1), updated_at=at(2026, 6, 3))


def reminder(reminder_id: int, item_id: int, remind_at: int, *, status: str = "pending",
             offset: int | None = None) -> Reminder:
    return Reminder(id=reminder_id, item_id=item_id, remind_at=remind_at, offset_minutes=offset, channel="wechat",
                    status=status)
