"""Digest timing: the next run of a daily digest at HH:MM local time (pure)."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from schedule.recurrence import is_cn_workday, localize


def parse_local_time(value: str) -> time:
    hours, _, minutes = value.partition(":")
    return time(int(hours), int(minutes))


_BYDAY = re.compile(r"BYDAY=([A-Z,]+)")
_WEEKDAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


def digest_days(rrule: str | None) -> frozenset[int] | None:
    """The weekdays (0 = Monday) a digest's rule allows (FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR), None for every day."""
    found = _BYDAY.search((rrule or "").upper())
    if found is None:
        return None
    days = frozenset(_WEEKDAY_CODES.index(code) for code in found.group(1).split(",") if code in _WEEKDAY_CODES)
    return days or None


def next_digest_run(local_time: str, *, tz: ZoneInfo, after: datetime, workdays: str | None = None,
                    rrule: str | None = None) -> datetime:
    """The first HH:MM local strictly after `after`: on a working day when workdays == "cn", on one of the
    rule's weekdays when it has BYDAY (周末不用发: Monday to Friday)."""
    at = parse_local_time(local_time)
    day = after.astimezone(tz).date()
    weekdays = digest_days(rrule)
    for _ in range(40):
        candidate = localize(datetime.combine(day, at), tz)
        if candidate > after and (workdays != "cn" or is_cn_workday(day)) \
                and (weekdays is None or day.weekday() in weekdays):
            return candidate
        day += timedelta(days=1)
    raise ValueError("no digest run within 40 days")  # pragma: no cover - calendar has no 40-day holiday
