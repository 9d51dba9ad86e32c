"""Courses, several times a day, intervals (intent.course): the markers leave the title, the series is one RFC
5545 rule, and dateutil expands it to exactly the times said. The clock: Wednesday 2026-12-02 10:00."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr

from intent import parse, parse_all
from intent.course import interval_rule, rule_for_times, scan, window_times
from intent.followup import FocusHint
from intent.model import CompleteIntent, CreateIntent, QueryIntent, UpdateIntent

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 12, 2, 10, 0, tzinfo=SH)


def made(text: str) -> CreateIntent:
    [found] = parse_all(text, now=NOW, tz=SH)
    assert isinstance(found, CreateIntent), (text, found)
    assert found.recurrence is not None
    return found


def day_times(rule: str, first: datetime, on: date) -> list[time]:
    expanded = rrulestr(rule, dtstart=first.replace(tzinfo=None))
    return [d.time() for d in expanded.between(datetime.combine(on, time()), datetime.combine(on, time(23, 59, 59)),
                                               inc=True)]


@pytest.mark.parametrize(("text", "title", "first", "rule"), [
    ("从后天开始每天早上7点半 晚上9点吃降压药，吃两周", "吃降压药", datetime(2026, 12, 4, 7, 30),
     "FREQ=DAILY;BYHOUR=7,21;BYMINUTE=0,30;BYSETPOS=2,3;UNTIL=20261217T235959"),
    ("每天早上8点和晚上8点吃消炎药，连续5天", "吃消炎药", datetime(2026, 12, 2, 20),
     "FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0;UNTIL=20261206T235959"),
    ("连吃7天 每天早上8点吃消炎药", "吃消炎药", datetime(2026, 12, 3, 8),
     "FREQ=DAILY;BYHOUR=8;BYMINUTE=0;UNTIL=20261209T235959"),
    ("每天晚上9点吃药，吃到下周五", "吃药", datetime(2026, 12, 2, 21),
     "FREQ=DAILY;BYHOUR=21;BYMINUTE=0;UNTIL=20261211T235959"),
    ("隔一天给孩子量一次体温 晚上8点", "给孩子量一次体温", datetime(2026, 12, 2, 20),
     "FREQ=DAILY;INTERVAL=2;BYHOUR=20;BYMINUTE=0"),
    ("每隔两小时提醒我喝水", "喝水", datetime(2026, 12, 2, 11),
     "FREQ=DAILY;BYHOUR=9,11,13,15,17,19,21;BYMINUTE=0"),
    ("上午9点到下午5点每小时提醒我喝水", "喝水", datetime(2026, 12, 2, 11),  # the next step, not now
     "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=0"),
])
def test_a_course_is_one_rule_and_the_title_is_the_activity_only(text: str, title: str, first: datetime,
                                                                   rule: str) -> None:
    found = made(text)
    assert found.title == title
    assert found.due_at == first.replace(tzinfo=SH)
    assert found.recurrence is not None and found.recurrence.rrule == rule
    assert found.reminder is not None and found.reminder.remind_at == found.due_at  # each dose is reminded


def test_a_loan_with_a_count_keeps_its_day_and_loses_the_count_words() -> None:
    found = made("每月15号还信用卡，还12期")
    assert (found.title, found.all_day, found.due_at) == ("还信用卡", True, datetime(2026, 12, 15, tzinfo=SH))
    assert found.recurrence is not None and found.recurrence.rrule == "FREQ=MONTHLY;BYMONTHDAY=15;COUNT=12"
    assert found.recurrence.count == 12


def test_twice_a_day_without_the_times_asks_them_and_the_answer_makes_the_series() -> None:
    asked = made("从后天开始每天两次吃降压药，吃两周")
    assert asked.needs_clarification and asked.question is not None and "分别是几点" in asked.question
    assert asked.recurrence is not None and (asked.recurrence.doses, asked.recurrence.until) == (2, date(2026, 12, 17))
    [answer] = parse_all("早上7点半 晚上9点", now=NOW, tz=SH, pending=asked)
    assert isinstance(answer, CreateIntent) and answer.title == "吃降压药"
    assert answer.due_at == datetime(2026, 12, 4, 7, 30, tzinfo=SH)
    assert answer.recurrence is not None
    assert answer.recurrence.rrule == "FREQ=DAILY;BYHOUR=7,21;BYMINUTE=0,30;BYSETPOS=2,3;UNTIL=20261217T235959"


@pytest.mark.parametrize(("text", "first"), [
    ("单周周三下午4点上体育课", datetime(2026, 12, 2, 16)),  # ISO week 49: odd
    ("双周的周五晚上7点打球", datetime(2026, 12, 11, 19)),  # week 50
])
def test_odd_and_even_weeks_start_in_a_week_of_that_parity(text: str, first: datetime) -> None:
    found = made(text)
    assert found.start_at == first.replace(tzinfo=SH)
    assert found.recurrence is not None and "INTERVAL=2" in found.recurrence.rrule
    assert found.start_at.isocalendar()[1] % 2 == (1 if "单" in text else 0)


def test_an_interval_under_thirty_minutes_is_refused_plainly() -> None:
    found = made("每隔10分钟提醒我喝水")
    assert found.rule == "course.too_frequent" and found.reminder is None


def test_working_hours_are_working_days_nine_to_six() -> None:
    found = made("上班时间每小时提醒我站起来")
    assert found.title == "站起来" and found.recurrence is not None
    assert found.recurrence.workdays == "cn" and found.recurrence.window == (time(9), time(18))


@pytest.mark.parametrize("times", [
    [time(7, 30), time(21)], [time(8), time(20)], [time(8), time(12), time(18)], [time(7, 15), time(12, 40)],
    [time(6, 5), time(9, 50), time(13, 20), time(22, 45)],
])
def test_the_rule_for_a_days_times_expands_to_exactly_them(times: list[time]) -> None:
    rule = "FREQ=DAILY;" + rule_for_times(times)
    assert day_times(rule, datetime(2026, 12, 2), date(2026, 12, 9)) == times


@pytest.mark.parametrize("step", [30, 45, 60, 90, 120, 180, 50, 100])
def test_a_step_inside_a_window_expands_to_exactly_its_times(step: int) -> None:
    times = window_times(step, (time(9), time(21)))
    assert len(times) <= 24 and times[0] == time(9)
    rule = interval_rule(step, times)
    assert day_times(rule, datetime.combine(date(2026, 12, 2), times[0]), date(2026, 12, 9)) == times


def test_words_that_are_no_course_stay_what_they_were() -> None:
    assert isinstance(parse("6月20到25日有什么安排", now=NOW, tz=SH), QueryIntent)
    assert not scan("明天下午三点开会").found
    assert not scan("每天早上8点和晚上8点各提醒一次吃鱼油").count  # 一次 is each time, not a count


def test_follow_ups_on_a_series_in_focus() -> None:
    focus = FocusHint(on=date(2026, 12, 4), at=datetime(2026, 12, 4, 7, 30, tzinfo=SH))
    moved = parse("早上那次改到八点", now=NOW, tz=SH, focus=focus)
    assert isinstance(moved, UpdateIntent) and moved.changes is not None
    assert (moved.changes.dose_from, moved.changes.dose_to) == ("早上", time(8))
    evening = parse("晚上那次改到10点", now=NOW, tz=SH, focus=focus)
    assert isinstance(evening, UpdateIntent) and evening.changes is not None and evening.changes.dose_to == time(22)
    for said in ("停药", "不用吃了", "医生说不用吃了", "降压药停了吧"):
        ended = parse(said, now=NOW, tz=SH, focus=focus)
        assert isinstance(ended, UpdateIntent) and ended.changes is not None and ended.changes.end_series, said
    later = parse("消炎药停了吧", now=NOW, tz=SH)  # nothing in focus: the medicine named picks the course
    assert isinstance(later, UpdateIntent) and later.target_text == "消炎药" and later.changes is not None
    taken = parse("降压药吃了", now=NOW, tz=SH)
    assert isinstance(taken, CompleteIntent) and taken.target_text == "降压药"


@pytest.mark.parametrize("text", ["每隔两天提醒我给花浇水", "每3天提醒我给花浇水"])
def test_an_interval_of_days_is_asked_about_as_it_will_be_kept(text: str) -> None:
    """The question echoes 每3天, the rule the answer will store, never 每天."""
    it = parse(text, now=NOW, tz=SH)
    assert isinstance(it, CreateIntent) and it.recurrence is not None
    assert "INTERVAL=3" in it.recurrence.rrule
    assert it.question is not None and "每3天给花浇水" in it.question and "每天" not in it.question
