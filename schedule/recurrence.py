"""Next occurrence of a recurring item: pure calendar math in the user's timezone.

RRULE expansion runs on local wall-clock times (so a weekly 09:00 stays 09:00 across
DST changes); `workdays: cn` filters days through the official calendar (`schedule.holidays`: 调休 included
where published, the statutory holidays in any year); lunar rules go through lunardate.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from lunardate import LunarDate

from schedule.domain import Lunar, Recurrence, key_closes
from schedule.holidays import is_cn_workday as is_cn_workday  # where the calendar used to live
from schedule.rrule import HORIZON_YEARS, WINDOW_YEARS, never_occurs, refusal
from schedule.scan import window

LUNAR_LAST_YEAR = 2099  # lunardate converts lunar years up to here
MAX_NON_WORKING = 200  # a working-day series' days skipped in a row before the scan gives up (2 a week: 2 years)


def localize(naive: datetime, tz: ZoneInfo) -> datetime:
    """Wall-clock → aware; a wall time skipped by DST moves forward by the gap."""
    aware = naive.replace(tzinfo=tz, fold=0)
    roundtrip = aware.astimezone(ZoneInfo("UTC")).astimezone(tz).replace(tzinfo=None)
    if roundtrip != naive:  # nonexistent local time (spring forward)
        aware = (naive + (roundtrip - naive)).replace(tzinfo=tz)
    return aware


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


def occurrences(recurrence: Recurrence, *, dtstart: datetime, after: datetime, before: datetime,
                tz: ZoneInfo) -> Iterator[datetime]:
    """The series' occurrences o with after < o < before (aware), ascending: cancelled days left out, working
    days only for `workdays: cn`. The cost follows the window, not the series' age (`schedule.scan`)."""
    start_local = dtstart.astimezone(tz).replace(tzinfo=None)
    after_local, before_local = _local(after, tz), _local(before, tz)
    if recurrence.lunar is not None:
        found: Iterator[datetime] = _lunar_window(recurrence.lunar, start_local, after_local, before_local)
    else:
        body = recurrence.rrule or ("FREQ=DAILY" if recurrence.workdays else None)
        if body is None or never_occurs(body, start_local):  # a rule stored before submissions were checked
            return
        found = window(local_until(body, tz), start_local, after_local, before_local)
    passed = 0
    for candidate in found:
        if recurrence.workdays == "cn" and not is_cn_workday(candidate.date()):
            passed += 1
            if passed > MAX_NON_WORKING:
                return  # a rule whose days are hardly ever working days: bounded like any other scan
            continue
        if key_closes(recurrence.skipped, candidate):
            continue
        aware = localize(candidate, tz)
        if after < aware < before:
            yield aware


def next_occurrence(recurrence: Recurrence, *, dtstart: datetime, after: datetime, tz: ZoneInfo) -> datetime | None:
    """The first occurrence strictly after `after` (aware) within HORIZON_YEARS, or None when the rule has ended.

    `dtstart` (aware) gives the series' first day and its local time of day.
    """
    try:
        horizon = after + timedelta(days=366 * HORIZON_YEARS)
    except OverflowError:  # asked about the last years a datetime holds: the horizon is the end of time
        horizon = datetime.max.replace(tzinfo=UTC)
    return next(occurrences(recurrence, dtstart=dtstart, after=after, before=horizon, tz=tz), None)


def occurs_on(recurrence: Recurrence, *, anchor_ms: int, tz: ZoneInfo, day: date) -> bool:
    """Whether the series (first instant `anchor_ms`) has an occurrence on that local day, closed (skipped or
    done) or not: its first one, or one its rule makes (working days, lunar dates and UNTIL included)."""
    dtstart = datetime.fromtimestamp(anchor_ms / 1000, UTC)
    if dtstart.astimezone(tz).date() == day:
        return True
    try:
        start = localize(datetime.combine(day, time()), tz)
        end = localize(datetime.combine(day + timedelta(days=1), time()), tz)
    except OverflowError:
        return False
    rule = replace(recurrence, skipped=())
    return next(occurrences(rule, dtstart=dtstart, after=start - timedelta(microseconds=1), before=end, tz=tz),
                None) is not None


def first_occurrence(recurrence: Recurrence, *, dtstart: datetime, tz: ZoneInfo) -> datetime | None:
    """The first occurrence at or after dtstart (dtstart itself when it matches the rule)."""
    return next_occurrence(recurrence, dtstart=dtstart, after=dtstart - timedelta(seconds=1), tz=tz)


def refused(rrule_body: str | None, *, anchor_ms: int | None, tz: str) -> str | None:
    """Why a series with this RRULE and first day cannot be stored (it never occurs), or None."""
    return refused_recurrence(Recurrence(rrule=rrule_body) if rrule_body else None, anchor_ms=anchor_ms, tz=tz)


def refused_recurrence(recurrence: Recurrence | None, *, anchor_ms: int | None, tz: str) -> str | None:
    """Why a series cannot be stored, or None: its RRULE never occurs or fires too often (`rrule.refusal`), or,
    with a lunar date or working days, it has no occurrence within WINDOW_YEARS of its first day."""
    if recurrence is None or anchor_ms is None:
        return None
    zone = ZoneInfo(tz)
    start = datetime.fromtimestamp(anchor_ms / 1000, zone)
    try:
        if recurrence.rrule and recurrence.lunar is None:
            reason = refusal(local_until(recurrence.rrule, zone), start.replace(tzinfo=None))
            if reason is not None or not recurrence.workdays:
                return reason
        end = start + timedelta(days=366 * WINDOW_YEARS)
        if next(occurrences(recurrence, dtstart=start, after=start - timedelta(seconds=1), before=end, tz=zone),
                None) is None:
            what = "lunar date" if recurrence.lunar else "rule on working days"
            return f"the {what} has no occurrence in the {WINDOW_YEARS} years from the item's first day"
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        return f"rrule is invalid ({str(exc)[:80] or type(exc).__name__})"
    return None


def local_until(body: str, tz: ZoneInfo) -> str:
    """The body with a UTC `UNTIL=…Z` (RFC 5545's form beside a zoned start) as the series' local wall clock."""
    if "Z" not in body.upper():
        return body
    parts = []
    for part in body.split(";"):
        key, _, value = part.partition("=")
        if key.upper() == "UNTIL" and value.upper().endswith("Z") and len(value) == 16:
            moment = datetime.strptime(value[:15], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
            part = f"{key}={moment.astimezone(tz).strftime('%Y%m%dT%H%M%S')}"
        parts.append(part)
    return ";".join(parts)


def _local(moment: datetime, tz: ZoneInfo) -> datetime:
    """Aware → naive local, clamped to the years a datetime holds (an open range ends at 9999)."""
    try:
        return moment.astimezone(tz).replace(tzinfo=None)
    except OverflowError:
        return datetime.max if moment.year > 1 else datetime.min  # noqa: DTZ901 (naive local wall clock)


def _lunar_window(lunar: Lunar, start_local: datetime, after_local: datetime, before_local: datetime
                  ) -> Iterator[datetime]:
    year = max(after_local.year - 1, start_local.year - 1)
    for candidate_year in range(year, min(before_local.year + 1, LUNAR_LAST_YEAR) + 1):
        solar = _lunar_to_solar(candidate_year, lunar)
        if solar is None:
            continue
        moment = datetime.combine(solar, start_local.time())
        if moment >= before_local:
            return
        if moment > after_local and moment >= start_local:
            yield moment
