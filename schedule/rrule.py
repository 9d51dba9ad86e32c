"""RRULE evaluation at a bounded cost, and the refusal of rules that never occur.

dateutil scans period by period until a rule matches or the year passes 9999, and UNTIL/COUNT only stop it
at a match: `FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30` walks ~8,000 years (seconds of CPU) on every call. Here a
rule is evaluated in a frame shifted towards year 9999 with the very same calendar (the Gregorian calendar
repeats every 400 years, and every 28 between non-leap centuries), so dateutil's own end of time stops
each scan within about HORIZON_YEARS + 28 (at most + 400) years of the point asked about.
"""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta
from functools import lru_cache

from dateutil.rrule import rrule, rrulestr

MAXYEAR = 9999
HORIZON_YEARS = 12  # an occurrence further than this after the point asked about is not looked for
WINDOW_YEARS = 10  # a rule must occur within this many years of its first day to be accepted


class BoundedRule:
    """One rule from one local start (naive wall clock), asked for occurrences within a horizon."""

    def __init__(self, body: str, dtstart: datetime, *, around: datetime, horizon_years: int = HORIZON_YEARS):
        first = max(min(dtstart.year, around.year) - 1, 1)
        self.last_year = min(max(dtstart.year, around.year) + horizon_years, MAXYEAR - 1)
        self.shift = _calendar_shift(first, self.last_year + 1)
        # cache=True: a listing asks one series many times (a week of a daily series, every page view); the
        # occurrences found once are reused, and the horizon bounds how many there can be
        self._rule: rrule = rrulestr(_shift_until(body, self.shift, self.last_year),
                                     dtstart=_years(dtstart, self.shift), forceset=False, cache=True)

    def after(self, moment: datetime) -> datetime | None:
        """The first occurrence strictly after `moment`, or None (ended, or beyond the horizon)."""
        if moment.year > self.last_year:
            return None
        found: datetime | None = self._rule.after(_years(moment, self.shift), inc=False)
        if found is None or found.year - self.shift > self.last_year:
            return None
        return _years(found, -self.shift)


@lru_cache(maxsize=512)
def bounded_rule(body: str, dtstart: datetime, around_year: int) -> BoundedRule:
    """The rule for scans near `around_year`, kept: parsing and framing it once per series and year, not once per
    occurrence asked for (the frame depends on the year only)."""
    return BoundedRule(body, dtstart, around=dtstart.replace(year=around_year, month=6, day=1))


def bounded_after(body: str, *, dtstart: datetime, after: datetime) -> datetime | None:
    return BoundedRule(body, dtstart, around=after).after(after)


def refusal(body: str, dtstart: datetime) -> str | None:
    """Why a rule starting at `dtstart` (naive local) is refused, or None when it occurs within WINDOW_YEARS."""
    reason = impossible(body)
    if reason is not None:
        return reason
    rule = BoundedRule(body, dtstart, around=dtstart, horizon_years=WINDOW_YEARS)
    found = rule.after(dtstart - timedelta(seconds=1))
    if found is None or found > _years(dtstart, WINDOW_YEARS, clamp=True):
        return f"rrule has no occurrence in the {WINDOW_YEARS} years from the item's first day"
    return None


@lru_cache(maxsize=4096)
def never_occurs(body: str, dtstart: datetime) -> bool:
    """Cached per rule and start (an item version): no occurrence within WINDOW_YEARS of its start."""
    try:
        return refusal(body, dtstart) is not None
    except (ValueError, TypeError, KeyError, IndexError):
        return False  # a rule dateutil cannot read fails later, where it always did


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


def _years(moment: datetime, years: int, *, clamp: bool = False) -> datetime:
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
def _calendar_shift(first: int, last: int) -> int:
    """Years to add so [first, last] lands just under 9999 with an identical calendar (0: no room)."""
    room = MAXYEAR - last
    for shift in range(room, max(room - 400, 0), -1):  # a multiple of 400 is always found
        if _same_calendar(first, last, shift):
            return shift
    return 0


def _shift_until(body: str, shift: int, last_year: int) -> str:
    """The body with UNTIL moved by `shift` years; an UNTIL beyond the horizon is dropped (it cuts nothing)."""
    parts = []
    for part in body.split(";"):
        key, _, value = part.partition("=")
        if key.upper() == "UNTIL" and len(value) >= 8 and value[:4].isdigit():
            year = int(value[:4])
            if year > last_year:
                continue
            part = f"{key}={year + shift:04d}{value[4:]}"
        parts.append(part)
    return ";".join(parts)
