"""Rules that never occur within the window are refused, and rules that do are kept, for the rules that make
the check work hardest: BYWEEKNO, BYYEARDAY, BYSETPOS, nth weekdays, 31 Feb, 29 Feb on a weekday, INTERVAL
gaps, hourly and finer steps, starts in 2090–2099 (their window crosses 2100, a common year). The truth is
dateutil's own walk, run where its end of time (year 9999) comes soon after the window (an identical
calendar: same weekday on 1 January and same leap years). Timing lives in bench/rule_check_bench.py."""

from __future__ import annotations

import calendar
import random
from datetime import date, datetime, timedelta

import pytest
from dateutil.rrule import rrulestr

from schedule.rrule import WINDOW_YEARS, refusal, shift_years

RULES = [
    "FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO", "FREQ=YEARLY;BYWEEKNO=-53;BYDAY=MO", "FREQ=DAILY;BYWEEKNO=53",
    "FREQ=DAILY;INTERVAL=2;BYWEEKNO=53;BYMONTH=6", "FREQ=DAILY;INTERVAL=2;BYWEEKNO=-53;BYDAY=MO",
    "FREQ=WEEKLY;INTERVAL=2;BYWEEKNO=53;BYDAY=MO", "FREQ=WEEKLY;BYWEEKNO=53;BYDAY=TH;BYSETPOS=2",
    "FREQ=YEARLY;BYWEEKNO=53;BYMONTH=1;BYDAY=TH", "FREQ=YEARLY;BYWEEKNO=1;BYMONTH=12;BYDAY=MO,TU,WE",
    "FREQ=MONTHLY;BYWEEKNO=53;BYDAY=FR", "FREQ=WEEKLY;BYWEEKNO=1;WKST=SU;BYDAY=SA,SU",
    "FREQ=YEARLY;BYWEEKNO=52,53;BYDAY=SU;BYMONTH=1", "FREQ=DAILY;BYWEEKNO=53;BYYEARDAY=366",
    "FREQ=YEARLY;BYYEARDAY=366;BYDAY=MO", "FREQ=YEARLY;BYYEARDAY=-366;BYDAY=SU", "FREQ=DAILY;INTERVAL=7;BYYEARDAY=366;BYDAY=MO",
    "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=5;BYMONTH=2", "FREQ=WEEKLY;BYDAY=MO;BYSETPOS=5;BYMONTH=2",
    "FREQ=MONTHLY;BYMONTHDAY=29;BYMONTH=2;BYDAY=MO;BYSETPOS=1", "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13;BYSETPOS=-1",
    "FREQ=YEARLY;BYDAY=-1MO;BYMONTH=2;BYMONTHDAY=29", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=5MO",
    "FREQ=YEARLY;BYDAY=53MO", "FREQ=MONTHLY;BYDAY=5SU;BYMONTH=2",
    "FREQ=MONTHLY;BYMONTHDAY=31;BYMONTH=2", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO",
    "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=TU,WE", "FREQ=WEEKLY;BYDAY=MO;BYMONTH=2;BYMONTHDAY=29",
    "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "FREQ=MONTHLY;INTERVAL=12;BYMONTHDAY=29;BYMONTH=2;BYDAY=SA",
    "FREQ=DAILY;INTERVAL=7;BYDAY=TU", "FREQ=WEEKLY;INTERVAL=3;BYMONTH=2;BYMONTHDAY=29",
    "FREQ=HOURLY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "FREQ=HOURLY;INTERVAL=24;BYHOUR=10",
    "FREQ=HOURLY;INTERVAL=5;BYHOUR=3;BYWEEKNO=53", "FREQ=HOURLY;INTERVAL=7;BYWEEKNO=-53;BYDAY=MO;BYHOUR=9",
    "FREQ=MINUTELY;INTERVAL=90;BYHOUR=1;BYMINUTE=30;BYMONTH=2;BYMONTHDAY=29",
]


def _frame(first: int, last: int) -> int:
    """Years to add so [first, last] lands as close under 9999 as an identical calendar allows."""
    for shift in range(9999 - last, 0, -1):
        if date(first, 1, 1).weekday() == date(first + shift, 1, 1).weekday() and all(
                calendar.isleap(y) == calendar.isleap(y + shift) for y in range(first, last + 1)):
            return shift
    raise AssertionError("no frame")


def occurs(body: str, start: datetime) -> bool:
    """dateutil's answer: an occurrence within the window from `start` (`start` itself counts)."""
    end = shift_years(start, WINDOW_YEARS, clamp=True)
    shift = _frame(start.year - 1, end.year + 1)
    try:
        rule = rrulestr(body, dtstart=start.replace(year=start.year + shift))
    except ValueError:  # dateutil sees the steps can never meet BYHOUR/BYMINUTE: an empty rule
        return False
    try:
        found = rule.after(start.replace(year=start.year + shift), inc=True)
    except ValueError:  # the same, seen once iterating
        return False
    return found is not None and found.replace(year=found.year - shift) <= end


def starts(body: str) -> list[datetime]:
    pick = random.Random(body)
    chosen = [datetime(2090 + pick.randrange(10), 1, 1, 9), datetime(2098, 12, 28, 8, 30)]
    chosen += [datetime(2090, 1, 1, 9) + timedelta(days=pick.randrange(3650), hours=pick.randrange(24))
               for _ in range(2)]
    return [*chosen, datetime(2026, 6, 19, 9) + timedelta(days=pick.randrange(3650))]


@pytest.mark.parametrize("body", RULES)
def test_far_future_and_rare_rules_are_refused_exactly_when_dateutil_finds_no_occurrence(body: str) -> None:
    for start in starts(body):
        assert (refusal(body, start) is None) == occurs(body, start), (body, start)


def test_the_cases_cover_both_answers() -> None:
    answers = {refusal(body, start) is None for body in RULES for start in starts(body)}
    assert answers == {True, False}
