"""Chinese date/time formatting in the user's timezone (the only place instants become wall clock)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

WEEKDAYS = "一二三四五六日"


def local(ms: int, tz: str) -> datetime:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)).astimezone(ZoneInfo(tz))


def weekday(day: date) -> str:
    return f"周{WEEKDAYS[day.weekday()]}"


def day_label(day: date) -> str:
    """6月19日（周五）"""
    return f"{day.month}月{day.day}日（{weekday(day)}）"


def clock_label(moment: datetime) -> str:
    return f"{moment.hour:02d}:{moment.minute:02d}"


def moment_label(ms: int, tz: str, *, all_day: bool = False) -> str:
    """6月19日（周五）15:00 — or just the day for all-day items (every reply names the absolute time and weekday)."""
    moment = local(ms, tz)
    return day_label(moment.date()) if all_day else f"{day_label(moment.date())}{clock_label(moment)}"
