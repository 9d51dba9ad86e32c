"""RRULE evaluation at a bounded cost, and the refusal of rules that never occur.

dateutil scans period by period until a rule matches or the year passes 9999, and UNTIL/COUNT only stop it
at a match: `FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30` walks ~8,000 years (seconds of CPU) on every call. Rules are
evaluated (`schedule.scan`) in a frame shifted towards year 9999 with the very same calendar (the Gregorian
calendar repeats every 400 years, and every 28 between non-leap centuries: `frame_shift`), so dateutil's own
end of time stops a scan soon after the window asked about.
"""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta
from functools import lru_cache

MAXYEAR = 9999
HORIZON_YEARS = 12  # an occurrence further than this after the point asked about is not looked for
WINDOW_YEARS = 10  # a rule must occur within this many years of its first day to be accepted
MAX_PER_DAY = 24  # occurrences a day a rule may have (hourly; intervals under 30 minutes are refused)


def refusal(body: str, dtstart: datetime) -> str | None:
    """Why a rule starting at `dtstart` (naive local) is refused, or None when it occurs within WINDOW_YEARS:
    a date that exists in no year, more than MAX_PER_DAY times a day, or no occurrence in the window (found
    at a cost bounded by the window: `schedule.scan`)."""
    return too_frequent(body) or _no_occurrence(body, dtstart)


def _no_occurrence(body: str, dtstart: datetime) -> str | None:
    from schedule.scan import window  # scan builds on this module's calendar frame

    reason = impossible(body)
    if reason is not None:
        return reason
    end = shift_years(dtstart, WINDOW_YEARS, clamp=True)
    if next(window(body, dtstart, dtstart - timedelta(microseconds=1), end), None) is None:
        return f"rrule has no occurrence in the {WINDOW_YEARS} years from the item's first day"
    return None


@lru_cache(maxsize=8192)
def never_occurs(body: str, dtstart: datetime) -> bool:
    """Cached per rule and start (an item version, every series of a user at the item quota and more): no
    occurrence within WINDOW_YEARS of its start. A rule stored before a check refused it still lists, within
    each request's budget, when it does occur (one firing too often, say)."""
    try:
        return _no_occurrence(body, dtstart) is not None
    except (ValueError, TypeError, KeyError, IndexError):
        return False  # a rule dateutil cannot read fails later, where it always did


def too_frequent(body: str) -> str | None:
    """Why the rule fires more than MAX_PER_DAY times a day (BYHOUR × BYMINUTE × BYSECOND, and for an hourly
    or finer rule what its INTERVAL leaves of them), or None."""
    parts = parts_of(body)
    hours, minutes, seconds = (len({v for v in parts.get(key, "").split(",") if v})
                               for key in ("BYHOUR", "BYMINUTE", "BYSECOND"))
    freq, interval = parts.get("FREQ", "DAILY"), max(int(parts.get("INTERVAL", "1") or 1), 1)
    if freq == "HOURLY":
        per_day = (hours or -(-24 // interval)) * (minutes or 1) * (seconds or 1)
    elif freq == "MINUTELY":
        per_day = min((hours or 24) * (minutes or -(-60 // interval)), -(-1440 // interval)) * (seconds or 1)
    elif freq == "SECONDLY":
        per_day = min((hours or 24) * (minutes or 60) * (seconds or -(-60 // interval)), -(-86_400 // interval))
    else:
        per_day = max(hours, 1) * max(minutes, 1) * max(seconds, 1)
    picked = len({v for v in parts.get("BYSETPOS", "").split(",") if v})
    if picked and freq == "DAILY":  # BYSETPOS picks that many of each day's BYHOUR × BYMINUTE
        per_day = min(per_day, picked)
    if per_day > MAX_PER_DAY:
        return f"rrule fires {per_day} times a day (at most {MAX_PER_DAY}: BYHOUR × BYMINUTE × BYSECOND)"
    return None



@lru_cache(maxsize=8192)
def parts_of(body: str) -> dict[str, str]:
    """KEY → value of an RRULE body, keys upper-case (read-only: shared by every caller)."""
    return {k.upper(): v.upper() for k, _, v in (p.partition("=") for p in body.split(";")) if v}


@lru_cache(maxsize=1024)
def impossible(body: str) -> str | None:
    """Why the rule's BYMONTH/BYMONTHDAY/BYYEARDAY can never meet (2月30日, 4月31日, day 366 in January),
    or None. Pure and instant: every day of a leap and of a common year is tried."""
    parts = dict(part.partition("=")[::2] for part in body.upper().split(";") if "=" in part)
    try:
        months = _ints(parts.get("BYMONTH")) or set(range(1, 13))
        month_days, year_days = _ints(parts.get("BYMONTHDAY")), _ints(parts.get("BYYEARDAY"))
    except ValueError:
        return None  # not ours to judge: the parser says what is wrong
    if not month_days and not year_days:
        return None
    for year in (2024, 2025):
        length = 366 if calendar.isleap(year) else 365
        for index in range(length):
            day = date(year, 1, 1) + timedelta(days=index)
            month_length = calendar.monthrange(year, day.month)[1]
            if day.month not in months:
                continue
            if month_days and day.day not in month_days and day.day - month_length - 1 not in month_days:
                continue
            if year_days and index + 1 not in year_days and index - length not in year_days:
                continue
            return None
    return "rrule parts BYMONTH/BYMONTHDAY/BYYEARDAY never meet (a date that does not exist, like 2月30日)"


def _ints(value: str | None) -> set[int]:
    return {int(v) for v in value.split(",") if v} if value else set()


def shift_years(moment: datetime, years: int, *, clamp: bool = False) -> datetime:
    year = moment.year + years
    if clamp:
        year = min(max(year, 1), MAXYEAR)
        if moment.month == 2 and moment.day == 29 and not calendar.isleap(year):
            return moment.replace(year=year, day=28)
    return moment.replace(year=year)


def _same_calendar(first: int, last: int, shift: int) -> bool:
    if date(first, 1, 1).weekday() != date(first + shift, 1, 1).weekday():
        return False
    return all(calendar.isleap(year) == calendar.isleap(year + shift) for year in range(first, last + 1))


@lru_cache(maxsize=4096)
def frame_shift(first: int, last: int) -> int:
    """Years to add so [first, last] lands just under 9999 with an identical calendar (0: no room)."""
    room = MAXYEAR - last
    for shift in range(room, max(room - 400, 0), -1):  # a multiple of 400 is always found
        if _same_calendar(first, last, shift):
            return shift
    return 0
