"""Digest timing: the next run of a daily digest at HH:MM local time (pure)."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from schedule.recurrence import is_cn_workday, localize


def parse_local_time(value: str) -> time:
    hours, _, minutes = value.partition(":")
    return time(int(hours), int(minutes))


def next_digest_run(local_time: str, *, tz: ZoneInfo, after: datetime, workdays: str | None = None) -> datetime:
    """The first HH:MM local strictly after `after` (on a working day when workdays == "cn")."""
    at = parse_local_time(local_time)
    day = after.astimezone(tz).date()
    for _ in range(40):
        candidate = localize(datetime.combine(day, at), tz)
        if candidate > after and (workdays != "cn" or is_cn_workday(day)):
            return candidate
        day += timedelta(days=1)
    raise ValueError("no digest run within 40 days")  # pragma: no cover - calendar has no 40-day holiday
