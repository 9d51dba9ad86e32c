"""Expansion at a bounded cost: a rule read from a window's start gives exactly dateutil's full walk from the
series' first day, a request's expansion stops at its budget with the earliest occurrences, rules firing more
than 24 times a day are refused, and lunar and working-day series that never fire are refused."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr

from schedule.clock import to_ms
from schedule.domain import Item, Lunar, Recurrence
from schedule.occurrence import Budget, each_occurrence
from schedule.recurrence import local_until, next_occurrence, refused_recurrence
from schedule.rrule import MAX_PER_DAY, refusal
from schedule.scan import window

SH = ZoneInfo("Asia/Shanghai")
RULES = ["FREQ=DAILY", "FREQ=DAILY;INTERVAL=3", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH", "FREQ=WEEKLY",
         "FREQ=MONTHLY;BYMONTHDAY=31", "FREQ=MONTHLY;INTERVAL=5", "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=8,20",
         "FREQ=YEARLY", "FREQ=YEARLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=29",
         "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR",
         "FREQ=YEARLY;BYWEEKNO=53;BYDAY=TH", "FREQ=DAILY;BYHOUR=9,21;BYMINUTE=0,30", "FREQ=DAILY;COUNT=40",
         "FREQ=WEEKLY;BYDAY=SA;UNTIL=20990601T000000", "FREQ=DAILY;BYWEEKNO=1"]


def full_walk(body: str, start: datetime, after: datetime, before: datetime) -> list[datetime]:
    """dateutil from the series' first day, the way expansion worked before windows."""
    return [o for o in rrulestr(body, dtstart=start).between(after, before) if o < before]


@pytest.mark.parametrize("body", RULES)
def test_a_window_gives_what_a_walk_from_the_first_day_gives(body: str) -> None:
    pick = random.Random(body)
    for _ in range(12):
        start = datetime(2001, 1, 1, 9) + timedelta(days=pick.randrange(30_000), minutes=pick.choice((0, 45)))
        after = start + timedelta(days=pick.randrange(-10, 36_000), hours=pick.randrange(24))
        before = after + timedelta(days=pick.choice((1, 7, 92, 800)))
        if before.year > 2099:
            continue
        assert list(window(body, start, after, before)) == full_walk(body, start, after, before), (start, after)


SUB_DAILY = ["FREQ=HOURLY", "FREQ=HOURLY;INTERVAL=7", "FREQ=MINUTELY;INTERVAL=45", "FREQ=MINUTELY;INTERVAL=10",
             "FREQ=HOURLY;BYHOUR=9,10,11,12;BYDAY=MO,TU,WE,TH,FR", "FREQ=MINUTELY;INTERVAL=30;BYHOUR=9,10,11",
             "FREQ=HOURLY;INTERVAL=2;BYHOUR=8,10,14,18"]


@pytest.mark.parametrize("body", SUB_DAILY)
def test_an_hourly_or_finer_rule_keeps_its_steps_from_a_window_start(body: str) -> None:
    """The time of day is not pinned to the first occurrence's hour for these (an hourly rule fires every hour,
    not once a day), and a window starts on a whole number of steps from the first one."""
    pick = random.Random(body)
    for _ in range(20):
        start = datetime(2026, 1, 1, 8) + timedelta(days=pick.randrange(300), minutes=pick.randrange(60))
        after = start + timedelta(days=pick.randrange(-2, 60), hours=pick.randrange(24), minutes=pick.randrange(60))
        before = after + timedelta(days=pick.choice((1, 3, 7)))
        assert list(window(body, start, after, before)) == full_walk(body, start, after, before), (start, after)


@pytest.mark.parametrize("body", RULES)
def test_a_lookup_from_a_range_start_in_2099_matches_a_full_walk(body: str) -> None:
    start = datetime(2026, 6, 18, 9, tzinfo=SH)
    after = datetime(2099, 2, 20, tzinfo=SH)
    naive = start.replace(tzinfo=None)
    walked = rrulestr(body, dtstart=naive).after(after.replace(tzinfo=None))
    expected = walked.replace(tzinfo=SH) if walked is not None and walked.year <= 2099 + 12 else None
    found = next_occurrence(Recurrence(rrule=body), dtstart=start, after=after, tz=SH)
    assert found == expected


def daily(count_days: int) -> Item:
    first = to_ms(datetime(2026, 6, 18, 9, tzinfo=SH))
    return Item(id=7, user_id=1, kind="task", title="喝水", status="active", timezone="Asia/Shanghai",
                due_at=first, recurrence=Recurrence(rrule="FREQ=DAILY"), updated_at=first)


def test_a_series_stops_at_the_request_budget_with_its_earliest_occurrences() -> None:
    item = daily(30)
    start = to_ms(datetime(2026, 6, 18, tzinfo=SH))
    end = to_ms(datetime(2026, 7, 18, tzinfo=SH))
    whole = list(each_occurrence(item, start, end, Budget(left=1000)))
    budget = Budget(left=10)
    cut = list(each_occurrence(item, start, end, budget))
    assert len(whole) == 30 and budget.exhausted
    assert cut == whole[:10]


def test_a_rule_firing_more_than_24_times_a_day_is_refused() -> None:
    every_minute = "FREQ=DAILY;BYHOUR=" + ",".join(map(str, range(24))) + ";BYMINUTE=" + \
        ",".join(map(str, range(60)))
    reason = refusal(every_minute, datetime(2026, 6, 18, 9))
    assert reason is not None and "1440 times a day" in reason
    assert refusal("FREQ=DAILY;BYHOUR=9,10,11,12,13;BYMINUTE=0,10,20,30,40,50", datetime(2026, 6, 18, 9)) is not None
    hourly = "FREQ=DAILY;BYHOUR=" + ",".join(map(str, range(MAX_PER_DAY)))
    assert refusal(hourly, datetime(2026, 6, 18, 9)) is None


def test_a_utc_until_is_read_as_the_series_local_time() -> None:
    assert local_until("FREQ=DAILY;UNTIL=20260620T020000Z", SH) == "FREQ=DAILY;UNTIL=20260620T100000"
    start = datetime(2026, 6, 18, 9, tzinfo=SH)
    rule = Recurrence(rrule="FREQ=DAILY;UNTIL=20260620T020000Z")
    assert next_occurrence(rule, dtstart=start, after=datetime(2026, 6, 19, 12, tzinfo=SH), tz=SH) == \
        datetime(2026, 6, 20, 9, tzinfo=SH)
    assert next_occurrence(rule, dtstart=start, after=datetime(2026, 6, 20, 9, tzinfo=SH), tz=SH) is None


ANCHOR = to_ms(datetime(2026, 6, 18, 9, tzinfo=SH))
LATER = to_ms(datetime(2030, 6, 18, 9, tzinfo=SH))  # chinese-calendar has no 调休 data: Mon–Fri only


@pytest.mark.parametrize(("recurrence", "anchor"), [
    (Recurrence(lunar=Lunar(12, 30, leap=True)), ANCHOR),  # no leap twelfth month in the next ten years
    (Recurrence(lunar=Lunar(1, 1, leap=True)), ANCHOR),
    (Recurrence(rrule="FREQ=WEEKLY;BYDAY=SA,SU", workdays="cn"), LATER),  # weekends that are never worked
])
def test_lunar_and_working_day_series_that_never_fire_are_refused(recurrence: Recurrence, anchor: int) -> None:
    assert refused_recurrence(recurrence, anchor_ms=anchor, tz="Asia/Shanghai") is not None


@pytest.mark.parametrize("recurrence", [Recurrence(lunar=Lunar(8, 15)), Recurrence(workdays="cn"),
                                        Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO", workdays="cn")])
def test_lunar_and_working_day_series_that_fire_are_accepted(recurrence: Recurrence) -> None:
    assert refused_recurrence(recurrence, anchor_ms=ANCHOR, tz="Asia/Shanghai") is None
