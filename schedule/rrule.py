"""RRULE evaluation at a bounded cost, and the refusal of rules that never occur.

dateutil scans period by period until a rule matches or the year passes 9999, and UNTIL/COUNT only stop it
at a match: `FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30` walks ~8,000 years (seconds of CPU) on every call. Rules are
evaluated (`schedule.scan`) in a frame shifted towards year 9999 with the very same calendar (the Gregorian
calendar repeats every 400 years, and every 28 between non-leap centuries: `frame_shift`), so dateutil's own
end of time stops a scan soon after the window asked about.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from itertools import groupby
from math import gcd

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
    from schedule.scan import explicit, window  # scan builds on this module's calendar frame

    reason = impossible(body)
    if reason is not None:
        return reason
    end = shift_years(dtstart, WINDOW_YEARS, clamp=True)
    until = until_of(parts_of(body).get("UNTIL"))
    first = first_possible(explicit(body, dtstart), dtstart, min(end, until or end).date())
    never = f"rrule has no occurrence in the {WINDOW_YEARS} years from the item's first day"
    if first is None:
        return never
    if parts_of(body).get("FREQ", "DAILY") not in _PERIODIC:
        return None  # the day scan placed a step on an allowed time: exact, and dateutil's walk costs seconds
    # dateutil confirms, starting at the first day that can hold an occurrence: the pure scan skipped any gap
    # before it (a BYWEEKNO or INTERVAL gap, years of them), so its first step finds the occurrence
    after = dtstart - timedelta(microseconds=1)
    if first > dtstart.date():
        after = datetime.combine(first, time()) - timedelta(microseconds=1)
    return never if next(window(body, dtstart, after, end), None) is None else None


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


WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_PERIODIC = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")  # the frequencies whose INTERVAL and BYSETPOS the scan reads


def first_possible(body: str, dtstart: datetime, last: date) -> date | None:
    """The first day in [first, last] that can hold an occurrence of the rule (`scan.explicit`'s form, what
    dateutil is given), or None when none can: a pure scan of at most the window's days, whatever the rule.

    A day can hold one when it passes BYMONTH, BYMONTHDAY, BYYEARDAY, BYWEEKNO (weeks from WKST, the first
    one with four days in the year, counted from either end), BYDAY (2MO, -1FR: within the month, or within
    the year for a yearly rule without BYMONTH), and lies a whole number of INTERVALs of days, weeks, months
    or years from the first day's; with BYSETPOS, its period must hold enough such days (times the times of
    day) for a position asked for. An hourly or finer rule's steps must land on a time of day its BYHOUR,
    BYMINUTE and BYSECOND allow (worked out once per residue of the day, not step by step). A day refused here
    is surely not an occurrence; a day kept by a daily or coarser rule is confirmed by dateutil."""
    first = dtstart.date()
    parts = parts_of(body)
    freq, interval = parts.get("FREQ", "DAILY"), max(int(parts.get("INTERVAL", "1") or 1), 1)
    months, month_days, year_days = _ints(parts.get("BYMONTH")), _ints(parts.get("BYMONTHDAY")), \
        _ints(parts.get("BYYEARDAY"))
    week_numbers, positions = frozenset(_ints(parts.get("BYWEEKNO"))), _ints(parts.get("BYSETPOS"))
    wkst = WEEKDAYS.index(parts["WKST"]) if parts.get("WKST") in WEEKDAYS else 0
    plain, nth = _weekdays(parts.get("BYDAY", ""), ordinals=freq in ("MONTHLY", "YEARLY"))
    in_year = freq == "YEARLY" and not months  # 20MO: the year's 20th Monday, else the month's
    steps = None
    if freq not in _PERIODIC:
        finer = {"HOURLY": ("BYMINUTE", "BYSECOND"), "MINUTELY": ("BYSECOND",)}.get(freq, ())
        if positions and not _enough(_count(parts, finer), positions):
            return None  # a position past the size of every hour's (minute's) set
        steps = _step_days(parts, freq, interval, dtstart)
        if steps is None:
            return None
        interval, positions = 1, set()
    per_day = 1
    for key in ("BYHOUR", "BYMINUTE", "BYSECOND"):
        per_day *= max(len(_ints(parts.get(key))), 1)
    origin = _period_start(freq, first, wkst)
    if not positions:
        return next((day for day in _days(months, month_days, first, last) if _passes(
            day, plain, nth, in_year, year_days, week_numbers, wkst)
            and (interval == 1 or _periods_between(freq, origin, _period_start(freq, day, wkst)) % interval == 0)
            and (steps is None or _stepped_on(steps, (day - first).days))), None)
    # a position picks from its period's whole set: whole periods are counted, first and last included
    scan_last = min(_period_end(freq, last, wkst), date(MAXYEAR, 12, 31))
    for period, days in groupby((d for d in _days(months, month_days, origin, scan_last)
                                 if _passes(d, plain, nth, in_year, year_days, week_numbers, wkst)),
                                key=lambda d: _period_start(freq, d, wkst)):
        if interval > 1 and _periods_between(freq, origin, period) % interval:
            continue
        held = list(days)
        inside = [d for d in held if first <= d <= last]
        if inside and _enough(len(held) * per_day, positions):
            return inside[0]
    return None


def _days(months: set[int], month_days: set[int], first: date, last: date) -> Iterator[date]:
    """The days in [first, last] in BYMONTH's months and on BYMONTHDAY's days, ascending."""
    year, month = first.year, first.month
    while (year, month) <= (last.year, last.month):
        if not months or month in months:
            length = calendar.monthrange(year, month)[1]
            numbers = sorted({d if d > 0 else length + 1 + d for d in month_days}) if month_days \
                else range(1, length + 1)
            for number in numbers:
                if 1 <= number <= length and first <= (day := date(year, month, number)) <= last:
                    yield day
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


def _passes(day: date, plain: set[int], nth: set[tuple[int, int]], in_year: bool, year_days: set[int],
            week_numbers: frozenset[int], wkst: int) -> bool:
    """BYDAY, BYYEARDAY and BYWEEKNO allow the day."""
    year_length = 366 if calendar.isleap(day.year) else 365
    if plain or nth:
        weekday = day.weekday()
        if weekday not in plain and not any(w == weekday and _nth_matches(
                n, day, calendar.monthrange(day.year, day.month)[1], year_length, in_year) for w, n in nth):
            return False
    if year_days:
        index = day.timetuple().tm_yday
        if index not in year_days and index - year_length - 1 not in year_days:
            return False
    return not week_numbers or _in_weeks(day, week_numbers, wkst)


_Steps = tuple[int, frozenset[int], bool]  # (days in a cycle, the cycle's days a step can hit, the first day)


def _count(parts: dict[str, str], keys: tuple[str, ...]) -> int:
    size = 1
    for key in keys:
        size *= max(len(_ints(parts.get(key))), 1)
    return size


def _stepped_on(steps: _Steps, offset: int) -> bool:
    cycle, residues, first_day = steps
    return first_day if offset == 0 else offset % cycle in residues


def _step_days(parts: dict[str, str], freq: str, interval: int, dtstart: datetime) -> _Steps | None:
    """Which days an hourly or finer rule's steps (every INTERVAL hours/minutes/seconds from `dtstart`, naive
    wall clock as dateutil steps) land on a time BYHOUR × BYMINUTE × BYSECOND allows: day n after the first
    one does when n mod `cycle` is in `residues`. None when no day ever does."""
    step = interval * {"HOURLY": 3600, "MINUTELY": 60}.get(freq, 1)
    origin = dtstart.hour * 3600 + dtstart.minute * 60 + dtstart.second
    hours, minutes, seconds = (_ints(parts.get(key)) for key in ("BYHOUR", "BYMINUTE", "BYSECOND"))
    hours = hours or set(range(24))
    minutes = minutes or ({dtstart.minute} if freq == "HOURLY" else set(range(60)))
    seconds = seconds or ({dtstart.second} if freq in ("HOURLY", "MINUTELY") else set(range(60)))
    shared = gcd(86_400, step)  # a step lands on the times of day ≡ the first one's, modulo this
    if len(hours) * len(minutes) * len(seconds) <= 86_400 // shared:
        times = [h * 3600 + m * 60 + s for h in hours for m in minutes for s in seconds
                 if 0 <= h < 24 and 0 <= m < 60 and 0 <= s < 60 and (h * 3600 + m * 60 + s - origin) % shared == 0]
    else:
        times = [t for t in range(origin % shared, 86_400, shared)
                 if t // 3600 in hours and t // 60 % 60 in minutes and t % 60 in seconds]
    cycle = step // shared  # day n holds a step at time t when n·86400 ≡ origin − t (mod step)
    inverse = pow(86_400 // shared, -1, cycle) if cycle > 1 else 0
    residues = frozenset((origin - t) // shared * inverse % cycle for t in times)
    first_day = any(t >= origin and (t - origin) % step == 0 for t in times)
    if not residues and not first_day:
        return None
    return cycle, residues, first_day


def _weekdays(value: str, *, ordinals: bool) -> tuple[set[int], set[tuple[int, int]]]:
    """BYDAY as plain weekdays and (weekday, n) pairs; an ordinal counts only in monthly and yearly rules (as
    in dateutil: a weekly rule's 2MO is any Monday)."""
    plain: set[int] = set()
    nth: set[tuple[int, int]] = set()
    for entry in (v for v in value.split(",") if v):
        weekday = WEEKDAYS.index(entry[-2:]) if entry[-2:] in WEEKDAYS else None
        if weekday is None:
            continue
        count = entry[:-2].lstrip("+")
        if ordinals and count not in ("", "0") and count.lstrip("-").isdigit():
            nth.add((weekday, int(count)))
        else:
            plain.add(weekday)
    return plain, nth


def _nth_matches(n: int, day: date, month_length: int, year_length: int, in_year: bool) -> bool:
    if in_year:
        index = day.timetuple().tm_yday
        return (index - 1) // 7 + 1 == n if n > 0 else (year_length - index) // 7 + 1 == -n
    return (day.day - 1) // 7 + 1 == n if n > 0 else (month_length - day.day) // 7 + 1 == -n


def _enough(size: int, positions: set[int]) -> bool:
    return any(0 < p <= size or -size <= p < 0 for p in positions)


def _period_start(freq: str, day: date, wkst: int) -> date:
    if freq == "WEEKLY":
        return day - timedelta(days=(day.weekday() - wkst) % 7)
    if freq == "MONTHLY":
        return day.replace(day=1)
    if freq == "YEARLY":
        return day.replace(month=1, day=1)
    return day


def _period_end(freq: str, day: date, wkst: int) -> date:
    if freq == "WEEKLY":
        return _period_start(freq, day, wkst) + timedelta(days=6)
    if freq == "MONTHLY":
        return day.replace(day=calendar.monthrange(day.year, day.month)[1])
    if freq == "YEARLY":
        return day.replace(month=12, day=31)
    return day


def _periods_between(freq: str, start: date, period: date) -> int:
    if freq == "WEEKLY":
        return (period - start).days // 7
    if freq == "MONTHLY":
        return (period.year - start.year) * 12 + period.month - start.month
    if freq == "YEARLY":
        return period.year - start.year
    return (period - start).days


def _in_weeks(day: date, numbers: frozenset[int], wkst: int) -> bool:
    """Whether BYWEEKNO allows the day, as dateutil reads it: in its year's weeks, or in the days after the
    year's end that the year's last week reaches."""
    index = (day - date(day.year, 1, 1)).days
    if index in _week_days(day.year, numbers, wkst):
        return True
    if day.year > 1 and index < 7:
        return index + 365 + calendar.isleap(day.year - 1) in _week_days(day.year - 1, numbers, wkst)
    return False


@lru_cache(maxsize=1024)
def _week_days(year: int, numbers: frozenset[int], wkst: int) -> frozenset[int]:
    """The days (0 = 1 January, up to a week past the year's end) of the year's weeks in `numbers`: dateutil's
    own reckoning, step for step (week 1 is the first with four days in the year, weeks start at WKST; week 1
    of the next year and the last week of the last one count where they reach into this year)."""
    first_weekday, length = date(year, 1, 1).weekday(), 365 + calendar.isleap(year)
    chosen: set[int] = set()

    def week_from(index: int) -> None:
        for _ in range(7):
            chosen.add(index)
            index += 1
            if (first_weekday + index) % 7 == wkst:
                break

    no1wkst = firstwkst = (7 - first_weekday + wkst) % 7
    if no1wkst >= 4:
        no1wkst = 0
        weeks_length = length + (first_weekday - wkst) % 7
    else:
        weeks_length = length - no1wkst
    count = weeks_length // 7 + weeks_length % 7 // 4
    for number in numbers:
        if number < 0:
            number += count + 1
        if not 0 < number <= count:
            continue
        index = no1wkst + (number - 1) * 7 if number > 1 else no1wkst
        if number > 1 and no1wkst != firstwkst:
            index -= 7 - firstwkst
        week_from(index)
    if 1 in numbers:  # the next year's week 1 where it starts in this year
        index = no1wkst + count * 7 - (7 - firstwkst if no1wkst != firstwkst else 0)
        if index < length:
            week_from(index)
    if no1wkst:  # the last year's last week where it reaches into this year
        last_count = -1
        if -1 not in numbers:
            last_weekday = date(year - 1, 1, 1).weekday() if year > 1 else 0
            last_no1wkst = (7 - last_weekday + wkst) % 7
            if last_no1wkst >= 4:
                last_count = 52 + (365 + calendar.isleap(year - 1) + (last_weekday - wkst) % 7) % 7 // 4
            else:
                last_count = 52 + (length - no1wkst) % 7 // 4
        if last_count in numbers:
            chosen.update(range(no1wkst))
    return frozenset(i for i in chosen if i >= 0)


def until_of(value: str | None) -> datetime | None:
    """A rule's UNTIL as naive local wall time (a bare date is its midnight); None when absent or unreadable."""
    if not value or len(value) < 8 or not value[:8].isdigit():
        return None
    clock = value[9:15] if len(value) >= 15 and value[8] == "T" else "000000"
    try:
        return datetime.strptime(value[:8] + clock, "%Y%m%d%H%M%S")  # noqa: DTZ007 (naive local wall clock)
    except ValueError:
        return None


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
