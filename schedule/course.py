"""Series several times a day, and courses with an end (pure): which dose is due, the times of a day, the first
and last occurrence, and a rule ended now.

A series several times a day is one row whose RRULE lists its times (`FREQ=DAILY;BYHOUR=7,21;BYMINUTE=30`,
with BYSETPOS when the times are not a product of hours and minutes, or `FREQ=MINUTELY;INTERVAL=n;BYHOUR=…`
for a step inside a window). One of its doses is closed by its local start (`domain.occurrence_key`), not by
its day.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from schedule.clock import from_ms
from schedule.domain import Item, Recurrence, key_closes
from schedule.recurrence import localize, occurrences
from schedule.rrule import parts_of

MAX_LISTED = 5000  # occurrences walked to find a bounded series' last one


def several_a_day(recurrence: Recurrence | None) -> bool:
    """Whether the rule can fire more than once on one day (BYHOUR/BYMINUTE lists, hourly or finer)."""
    if recurrence is None or not recurrence.rrule or recurrence.lunar is not None:
        return False
    parts = parts_of(recurrence.rrule)
    if parts.get("FREQ") in ("HOURLY", "MINUTELY", "SECONDLY"):
        return True
    return any("," in parts.get(key, "") for key in ("BYHOUR", "BYMINUTE"))


def _each(item: Item, after: datetime, before: datetime, *, closed: bool) -> Iterator[datetime]:
    """The item's occurrences in (after, before), aware, ascending: its first one, then the rule's; closed
    ones too when `closed`."""
    rec, anchor = item.recurrence, item.anchor_at
    if rec is None or anchor is None:
        return
    tz = ZoneInfo(item.timezone)
    start = from_ms(anchor).astimezone(tz)
    free = rec if not closed else replace(rec, skipped=())
    if after < start < before and (closed or not key_closes(rec.skipped, start.replace(tzinfo=None))):
        yield start
    yield from occurrences(free, dtstart=start, after=max(after, start), before=before, tz=tz)


def times_of_day(item: Item, on: date | None = None) -> list[time]:
    """The local times of the series on `on` (by default, of a whole day from its first one), closed ones too."""
    if item.anchor_at is None:
        return []
    tz = ZoneInfo(item.timezone)
    if on is None:  # the first day may hold only its last times: the day after it holds them all
        first = from_ms(item.anchor_at).astimezone(tz).date()
        return _times_on(item, first + timedelta(days=1), tz) or _times_on(item, first, tz)
    return _times_on(item, on, tz)


def _times_on(item: Item, day: date, tz: ZoneInfo) -> list[time]:
    begin = localize(datetime.combine(day, time()), tz)
    end = localize(datetime.combine(day + timedelta(days=1), time()), tz)
    return [at.astimezone(tz).time().replace(tzinfo=None)
            for at in _each(item, begin - timedelta(microseconds=1), end, closed=True)]


def bounded(recurrence: Recurrence | None) -> bool:
    return recurrence is not None and bool(recurrence.rrule) and any(
        key in parts_of(recurrence.rrule) for key in ("COUNT", "UNTIL"))


def last_occurrence(item: Item) -> tuple[datetime, int] | None:
    """The last occurrence of a series with an end (COUNT / UNTIL), aware, and how many it has; None when
    it goes on (or has more than MAX_LISTED)."""
    if not bounded(item.recurrence) or item.anchor_at is None:
        return None
    tz = ZoneInfo(item.timezone)
    start = from_ms(item.anchor_at).astimezone(tz)
    last, count = None, 0
    for at in _each(item, start - timedelta(microseconds=1), start + timedelta(days=366 * 12), closed=True):
        last, count = at, count + 1
        if count > MAX_LISTED:
            return None
    return (last, count) if last is not None else None


def due_dose(item: Item, now: datetime, on: date | None = None) -> datetime | None:
    """The dose a "done" is about: the open occurrence nearest `now` (on `on` when a day was said), as local
    wall clock; None when there is none within a day of now (or on that day)."""
    tz = ZoneInfo(item.timezone)
    here = now.astimezone(tz)
    if on is not None:
        begin = localize(datetime.combine(on, time()), tz)
        end = localize(datetime.combine(on + timedelta(days=1), time()), tz)
    else:
        begin, end = here - timedelta(hours=24), here + timedelta(hours=24)
    rec = item.recurrence
    if rec is None:
        return None
    done = set(rec.done)
    open_ = [at for at in _each(item, begin - timedelta(microseconds=1), end, closed=False)
             if not key_closes(done, at.astimezone(tz).replace(tzinfo=None))]
    if not open_:
        return None
    best = min(open_, key=lambda at: (abs((at - here).total_seconds()), at))
    return best.astimezone(tz).replace(tzinfo=None)


def ended_rule(rrule: str, at_local: datetime) -> str:
    """The rule ending at `at_local` (local wall clock, inclusive): its COUNT or UNTIL replaced by that UNTIL."""
    kept = [part for part in rrule.split(";") if part and part.split("=", 1)[0].upper() not in ("COUNT", "UNTIL")]
    return ";".join([*kept, f"UNTIL={at_local.strftime('%Y%m%dT%H%M%S')}"])
