"""Bounded RRULE evaluation: rules that never occur are refused and never scanned for
seconds, and the bounded scan gives exactly dateutil's answers within its horizon."""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta

import pytest
from dateutil.rrule import rrulestr

from schedule.recurrence import next_occurrence
from schedule.rrule import HORIZON_YEARS, impossible, never_occurs, refusal
from schedule.scan import window

NEVER = ["FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "FREQ=YEARLY;BYMONTH=4,6,9,11;BYMONTHDAY=31",
         "FREQ=WEEKLY;BYYEARDAY=100;BYMONTH=1", "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=-30"]
POSSIBLE = ["FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE", "FREQ=MONTHLY;BYMONTHDAY=31", "FREQ=MONTHLY;BYMONTHDAY=-1",
            "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=YEARLY;BYWEEKNO=53;BYDAY=TH", "FREQ=MONTHLY;BYDAY=-1FR",
            "FREQ=DAILY;INTERVAL=3;COUNT=10", "FREQ=WEEKLY;INTERVAL=2;UNTIL=20300101", "FREQ=YEARLY;BYYEARDAY=366",
            "FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR"]
# Possible dates, but from 2026 the first one is further than the window: 2026, 2030… are never leap years;
# the next 29 February on a Monday is in 2044.
RARE = ["FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO"]


@pytest.mark.parametrize("body", NEVER)
def test_dates_that_exist_in_no_year_are_refused_without_a_scan(body: str) -> None:
    assert impossible(body) is not None and refusal(body, datetime(2026, 6, 19, 9)) is not None


@pytest.mark.parametrize("body", POSSIBLE)
def test_rules_that_occur_are_accepted(body: str) -> None:
    assert impossible(body) is None and refusal(body, datetime(2026, 6, 19, 9)) is None


def test_a_rule_that_never_occurs_for_another_reason_is_refused_within_a_bounded_time() -> None:
    """Week 1 is never in June: not a month/day clash, so the scan itself decides — and is bounded."""
    body = "FREQ=DAILY;BYWEEKNO=1;BYMONTH=6"
    assert impossible(body) is None
    started = time.perf_counter()
    reason = refusal(body, datetime(2026, 6, 19, 9))
    assert reason is not None and "10 years" in reason
    assert time.perf_counter() - started < 0.5  # dateutil alone: seconds (it walks to year 9999)


@pytest.mark.parametrize("body", RARE)
def test_rules_whose_first_occurrence_is_beyond_the_window_are_refused(body: str) -> None:
    assert impossible(body) is None and refusal(body, datetime(2026, 6, 19, 9)) is not None
    assert refusal(body, datetime(2016, 2, 1, 9)) is None  # 2016-02-29 was a Monday, and 2016 a leap year


@pytest.mark.parametrize("body", POSSIBLE + RARE)
def test_the_bounded_scan_agrees_with_dateutil_within_the_horizon(body: str) -> None:
    pick = random.Random(body)
    for _ in range(25):
        start = datetime(2024, 1, 1, 9) + timedelta(days=pick.randrange(4000))
        after = start + timedelta(days=pick.randrange(-3, 3000), hours=pick.randrange(24))
        expected = rrulestr(body, dtstart=start).after(after)
        if expected is not None and expected.year > after.year + HORIZON_YEARS:
            expected = None
        horizon = after.replace(year=after.year + HORIZON_YEARS + 1, month=1, day=1)
        assert next(window(body, start, after, horizon), None) == expected, (body, start, after)


def test_a_stored_rule_that_never_occurs_costs_no_scan_at_run_time() -> None:
    """A row stored before submissions were checked: every expansion answers at once (the issue measured
    ~4 s per expansion)."""
    from zoneinfo import ZoneInfo

    from schedule.domain import Recurrence

    tz = ZoneInfo("Asia/Shanghai")
    rule = Recurrence(rrule="FREQ=DAILY;BYWEEKNO=1;BYMONTH=6")
    start = datetime(2026, 6, 19, 9, tzinfo=tz)
    next_occurrence(rule, dtstart=start, after=start, tz=tz)  # the first look pays the bounded scan once
    started = time.perf_counter()
    for day in range(50):
        assert next_occurrence(rule, dtstart=start, after=start + timedelta(days=day), tz=tz) is None
    assert time.perf_counter() - started < 0.05
    assert never_occurs("FREQ=DAILY;BYWEEKNO=1;BYMONTH=6", start.replace(tzinfo=None))
