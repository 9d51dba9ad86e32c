"""A rule's occurrences inside a window, at a cost bounded by the window rather than by the series' age.

dateutil walks a rule from its first day, and past a gap until the next match (years, for 29 Feb on a
Monday). Here the rule restarts near the window with the parts dateutil would infer from the first day
spelled out, so its periods stay aligned; a pure day filter (BYMONTH, BYMONTHDAY, BYYEARDAY, the BYDAY
weekdays: a superset of the rule's days) says whether the window can hold an occurrence at all, before and
between dateutil's steps; and the rule runs in a frame shifted towards year 9999 with the same calendar
(`rrule.frame_shift`), so dateutil's own end of time stops a step that finds nothing soon after the window.
All times are naive local wall clock, as `schedule.recurrence` expands rules.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from functools import lru_cache

from dateutil.rrule import rrule, rrulestr

from schedule.rrule import MAXYEAR, frame_shift, parts_of, shift_years, until_of

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
LAST = datetime(MAXYEAR, 12, 31, 23, 59, 59)  # noqa: DTZ001 (naive local wall clock)
MAX_COUNT_SCAN_YEARS = 100  # a COUNT rule's last occurrence is looked for this far from its first day
CACHED_RULES = 8192  # parsed rules kept: every series of a user at the item quota, twice over


def window(body: str, dtstart: datetime, after: datetime, before: datetime) -> Iterator[datetime]:
    """The rule's occurrences o with after < o < before and o ≥ dtstart, ascending."""
    parts = parts_of(body)
    if "COUNT" in parts:
        last = counted_last(body, dtstart)
        before = min(before, last + timedelta(microseconds=1)) if last is not None else dtstart
    until = until_of(parts.get("UNTIL"))
    if until is not None:
        before = min(before, until + timedelta(microseconds=1))  # UNTIL is inclusive
    before = min(before, LAST)
    low = max(after, dtstart - timedelta(microseconds=1))
    if before <= low:
        return
    day = candidate_day(parts, low.date(), before.date())
    if day is None:
        return
    start = aligned_start(parts, dtstart, day)
    last_year = (before - timedelta(microseconds=1)).year
    rule, shift = framed(explicit(body, dtstart), start, last_year)
    for found in rule.xafter(shift_years(max(low, start - timedelta(microseconds=1)), shift)):
        if found.year - shift > last_year:
            return  # past the frame, where the calendar is not the real one (and past the window)
        moment = shift_years(found, -shift)
        if moment >= before:
            return
        yield moment
        if candidate_day(parts, moment.date(), before.date()) is None:
            return  # nothing can follow inside the window: no step into the gap after it


def candidate_day(parts: dict[str, str], first: date, last: date) -> date | None:
    """The first day in [first, last] allowed by BYMONTH, BYMONTHDAY, BYYEARDAY and BYDAY's weekdays (an
    ordinal like 2MO counts as any Monday): every occurrence falls on such a day, not every such day has one."""
    months = _ints(parts.get("BYMONTH"))
    month_days, year_days = _ints(parts.get("BYMONTHDAY")), _ints(parts.get("BYYEARDAY"))
    weekdays = {WEEKDAYS.index(d[-2:]) for d in parts.get("BYDAY", "").split(",") if d[-2:] in WEEKDAYS}
    year, month = first.year, first.month
    while (year, month) <= (last.year, last.month):
        if not months or month in months:
            length = calendar.monthrange(year, month)[1]
            days = sorted({d if d > 0 else length + 1 + d for d in month_days}) if month_days \
                else range(1, length + 1)
            year_length = 366 if calendar.isleap(year) else 365
            for number in days:
                if not 1 <= number <= length:
                    continue
                day = date(year, month, number)
                if day < first:
                    continue
                if day > last:
                    return None
                if weekdays and day.weekday() not in weekdays:
                    continue
                if year_days:
                    index = day.timetuple().tm_yday
                    if index not in year_days and index - year_length - 1 not in year_days:
                        continue
                return day
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def aligned_start(parts: dict[str, str], dtstart: datetime, day: date) -> datetime:
    """A start for the rule at the beginning of the period holding `day`, a whole number of INTERVALs after
    `dtstart`'s period (so the periods dateutil steps through are the same); `dtstart` when that is its own."""
    freq, interval = parts.get("FREQ", "DAILY"), max(int(parts.get("INTERVAL", "1") or 1), 1)
    begin = dtstart.date()
    if freq == "WEEKLY":
        week_start = WEEKDAYS.index(parts.get("WKST", "MO")) if parts.get("WKST", "MO") in WEEKDAYS else 0
        begin -= timedelta(days=(begin.weekday() - week_start) % 7)
        periods = (day - begin).days // (7 * interval) * interval
        moved = begin + timedelta(days=7 * periods)
    elif freq == "MONTHLY":
        periods = ((day.year - begin.year) * 12 + day.month - begin.month) // interval * interval
        index = begin.year * 12 + begin.month - 1 + periods
        moved = date(index // 12, index % 12 + 1, 1)
    elif freq == "YEARLY":
        periods = (day.year - begin.year) // interval * interval
        moved = date(begin.year + periods, 1, 1)
    elif freq in _STEP_SECONDS:  # hourly and finer: whole steps from the first one, its wall-clock time kept
        step = _STEP_SECONDS[freq] * interval
        ahead = datetime.combine(day, time(), dtstart.tzinfo) - dtstart
        periods = int(ahead.total_seconds() // step)
        return dtstart if periods <= 0 else dtstart + timedelta(seconds=periods * step)
    else:
        periods = (day - begin).days // interval * interval
        moved = begin + timedelta(days=periods)
    return dtstart if periods <= 0 else datetime.combine(moved, time())


_STEP_SECONDS = {"HOURLY": 3600, "MINUTELY": 60, "SECONDLY": 1}
# The parts of the time of day dateutil takes from the first occurrence, by frequency.
_INFERRED = {"HOURLY": ("BYMINUTE", "BYSECOND"), "MINUTELY": ("BYSECOND",), "SECONDLY": ()}


@lru_cache(maxsize=CACHED_RULES)
def explicit(body: str, dtstart: datetime) -> str:
    """The rule without COUNT/UNTIL (the window cuts it) and with what dateutil infers from the first day
    written out (time of day; the day in the month, year or week), so it means the same from another start."""
    parts = {k: v for k, v in parts_of(body).items() if k not in ("COUNT", "UNTIL")}
    if "BYWEEKNO" in parts and parts.get("FREQ") != "YEARLY" and parts.get("INTERVAL", "1") == "1" \
            and "BYSETPOS" not in parts:
        # BYWEEKNO belongs to yearly rules (RFC 5545); dateutil reads it as a filter on the days of any rule,
        # which over a year's days is the same set, stepped a year at a time rather than a day.
        parts["FREQ"] = "YEARLY"
        parts.setdefault("BYDAY", ",".join(WEEKDAYS))
    inferred = _INFERRED.get(parts.get("FREQ", "DAILY"), ("BYHOUR", "BYMINUTE", "BYSECOND"))
    for key, value in (("BYHOUR", dtstart.hour), ("BYMINUTE", dtstart.minute), ("BYSECOND", dtstart.second)):
        if key in inferred:  # an hourly rule takes its minute from the first one, not its hour
            parts.setdefault(key, str(value))
    if not any(key in parts for key in ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY")):
        freq = parts.get("FREQ")
        if freq == "YEARLY":
            parts.setdefault("BYMONTH", str(dtstart.month))
            parts["BYMONTHDAY"] = str(dtstart.day)
        elif freq == "MONTHLY":
            parts["BYMONTHDAY"] = str(dtstart.day)
        elif freq == "WEEKLY":
            parts["BYDAY"] = WEEKDAYS[dtstart.weekday()]
    return ";".join(f"{k}={v}" for k, v in parts.items())


@lru_cache(maxsize=CACHED_RULES)
def framed(body: str, start: datetime, last_year: int) -> tuple[rrule, int]:
    """The parsed rule from `start`, shifted so the years up to `last_year` end just under 9999."""
    shift = frame_shift(start.year, min(last_year, MAXYEAR - 1))
    parsed: rrule = rrulestr(body, dtstart=shift_years(start, shift), forceset=False, cache=False)
    return parsed, shift


@lru_cache(maxsize=CACHED_RULES)
def counted_last(body: str, dtstart: datetime) -> datetime | None:
    """The last occurrence of a COUNT rule (looked for within MAX_COUNT_SCAN_YEARS), once per series."""
    count = int(parts_of(body)["COUNT"])
    free = ";".join(f"{k}={v}" for k, v in parts_of(body).items() if k != "COUNT")
    end = shift_years(dtstart, MAX_COUNT_SCAN_YEARS, clamp=True)
    last = None
    for index, found in enumerate(window(free, dtstart, dtstart - timedelta(microseconds=1), end)):
        last = found
        if index + 1 >= count:
            break
    return last


def _ints(value: str | None) -> set[int]:
    try:
        return {int(v) for v in value.split(",") if v} if value else set()
    except ValueError:
        return set()
