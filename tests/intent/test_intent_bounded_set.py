"""A recurrence said inside particular days runs on those days only: 下周一到周五每天早上8点 starts next Monday
and ends next Friday (RRULE UNTIL in local wall time); 周一到周五 alone is every week, as before."""

from __future__ import annotations

import pytest
from intent_helpers import NOW, TZ, at

from intent import parse_all
from intent.model import CreateIntent


def created(text: str) -> CreateIntent:
    [it] = parse_all(text, now=NOW, tz=TZ)  # NOW: Thursday 2026-06-18 10:00
    assert isinstance(it, CreateIntent) and it.recurrence is not None, it
    return it


@pytest.mark.parametrize(("text", "first", "rrule"), [
    ("下周一到周五每天早上8点提醒我打卡", at(2026, 6, 22, 8), "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20260626T235959"),
    ("下周每天早上8点提醒我打卡", at(2026, 6, 22, 8), "FREQ=DAILY;UNTIL=20260628T235959"),
    ("这周每天晚上10点提醒我吃药", at(2026, 6, 18, 22), "FREQ=DAILY;UNTIL=20260621T235959"),
    ("6月25日到6月30日每天早上8点提醒我吃药", at(2026, 6, 25, 8), "FREQ=DAILY;UNTIL=20260630T235959"),
    ("下个月每天早上8点提醒我背单词", at(2026, 7, 1, 8), "FREQ=DAILY;UNTIL=20260731T235959"),
])
def test_a_set_inside_particular_days_is_bounded_by_them(text: str, first: object, rrule: str) -> None:
    it = created(text)
    assert (it.due_at, it.recurrence.rrule if it.recurrence else None) == (first, rrule)
    assert it.title in ("打卡", "吃药", "背单词")


@pytest.mark.parametrize("text", ["周一到周五每天早上8点提醒我打卡", "每天早上7点提醒我跑步", "从下周一开始每天早上8点提醒我打卡"])
def test_weekdays_in_general_and_open_series_stay_unbounded(text: str) -> None:
    it = created(text)
    assert it.recurrence is not None and "UNTIL" not in (it.recurrence.rrule or "")


@pytest.mark.parametrize(("text", "question"), [
    ("每月15号提醒我还花呗", "可以。我先记下“每月15号还花呗”。每次几点提醒你？比如“上午9点”。"),
    ("下周一到周五每天提醒我打卡", "可以。我先记下“下周一到周五每天打卡”。每次几点提醒你？比如“上午9点”。"),
])
def test_a_series_without_a_clock_asks_the_time_of_each(text: str, question: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.needs_clarification == ["reminder_time"]
    assert it.question == question
