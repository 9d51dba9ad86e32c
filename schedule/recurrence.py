"""Next occurrence of a recurring item: pure calendar math in the user's timezone.

RRULE expansion runs on local wall-clock times (so a weekly 09:00 stays 09:00 across
DST changes); `workdays: cn` filters days through chinese-calendar (调休 included),
falling back to Mon–Fri for years it has no data for; lunar rules go through lunardate.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from lunardate import LunarDate

from schedule.domain import Lunar, Recurrence
from schedule.rrule import bounded_rule, never_occurs, refusal

_MAX_SCAN = 800  # occurrences examined before giving up (workday filtering skips some)


def is_cn_workday(day: date) -> bool:
    """Official Chinese working day (调休 Saturdays count, holidays don't); Mon–Fri when unknown."""
    import chinese_calendar

    try:
        return bool(chinese_calendar.is_workday(day))
    except NotImplementedError:
        return day.weekday() < 5


def localize(naive: datetime, tz: ZoneInfo) -> datetime:
    """Wall-clock → aware; a wall time skipped by DST moves forward by the gap."""
    aware = naive.replace(tzinfo=tz, fold=0)
    roundtrip = aware.astimezone(ZoneInfo("UTC")).astimezone(tz).replace(tzinfo=None)
    if roundtrip != naive:  # nonexistent local time (spring forward)
        aware = (naive + (roundtrip - naive)).replace(tzinfo=tz)
    return aware


def _lunar_next(lunar: Lunar, dtstart_local: datetime, after_local: datetime, tz: ZoneInfo) -> datetime | None:
    year = max(after_local.year - 1, dtstart_local.year - 1)
    for candidate_year in range(year, min(year + 4, 2100)):
        solar = _lunar_to_solar(candidate_year, lunar)
        if solar is None:
            continue
        moment = datetime.combine(solar, dtstart_local.time())
        if moment > after_local and moment >= dtstart_local:
            return localize(moment, tz)
    return None


def _lunar_to_solar(lunar_year: int, lunar: Lunar) -> date | None:
    day = lunar.day
    while day >= 28:  # 三十 of a 29-day month falls back to the month's last day
        try:
            return LunarDate(lunar_year, lunar.month, day, lunar.leap).to_solar_date()  # type: ignore[no-any-return]
        except ValueError:
            if lunar.leap:
                return None  # that year has no such leap month
            day -= 1
    try:
        return LunarDate(lunar_year, lunar.month, day, lunar.leap).to_solar_date()  # type: ignore[no-any-return]
    except ValueError:
        return None


def next_occurrence(recurrence: Recurrence, *, dtstart: datetime, after: datetime, tz: ZoneInfo) -> datetime | None:
    """The first occurrence strictly after `after` (aware), or None when the rule has ended.

    `dtstart` (aware) gives the series' first day and its local time of day.
    """
    for _ in range(_MAX_SCAN):
        found = _next_unskipped(recurrence, dtstart=dtstart, after=after, tz=tz)
        if found is None or found.astimezone(tz).date().isoformat() not in recurrence.skipped:
            return found
        after = found  # a cancelled occurrence (EXDATE): the series goes on after it
    return None


def _next_unskipped(recurrence: Recurrence, *, dtstart: datetime, after: datetime, tz: ZoneInfo) -> datetime | None:
    start_local = dtstart.astimezone(tz).replace(tzinfo=None)
    after_local = after.astimezone(tz).replace(tzinfo=None)
    if recurrence.lunar is not None:
        return _lunar_next(recurrence.lunar, start_local, after_local, tz)
    body = recurrence.rrule or ("FREQ=DAILY" if recurrence.workdays else None)
    if body is None:
        return None
    if never_occurs(body, start_local):  # a rule stored before submissions were checked: no scan at all
        return None
    rule = bounded_rule(body, start_local, after_local.year)  # each scan stops within ~12–40 years
    cursor = after_local
    for _ in range(_MAX_SCAN):
        candidate = rule.after(cursor)
        if candidate is None:
            return None
        if recurrence.workdays == "cn" and not is_cn_workday(candidate.date()):
            cursor = candidate
            continue
        aware = localize(candidate, tz)
        if aware > after:
            return aware
        cursor = candidate
    return None


def first_occurrence(recurrence: Recurrence, *, dtstart: datetime, tz: ZoneInfo) -> datetime | None:
    """The first occurrence at or after dtstart (dtstart itself when it matches the rule)."""
    return next_occurrence(recurrence, dtstart=dtstart, after=dtstart - timedelta(seconds=1), tz=tz)


def refused(rrule_body: str | None, *, anchor_ms: int | None, tz: str) -> str | None:
    """Why a series with this RRULE and first day cannot be stored (it never occurs), or None."""
    if not rrule_body or anchor_ms is None:
        return None
    start_local = datetime.fromtimestamp(anchor_ms / 1000, ZoneInfo(tz)).replace(tzinfo=None)
    try:
        return refusal(rrule_body, start_local)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        return f"rrule is invalid ({str(exc)[:80] or type(exc).__name__})"


def cn_calendar_known(year: int) -> bool:
    """Whether chinese-calendar has that year's official holidays and 调休 days (else Mon–Fri is assumed)."""
    import chinese_calendar

    try:
        chinese_calendar.is_workday(date(year, 6, 1))
    except NotImplementedError:
        return False
    return True
