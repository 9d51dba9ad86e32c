"""What the words said beyond the action (intent/said.py): the slots the conversation applies without reading the
text again — a create's day said, the clock naming a target, an update's new day and bare hour — and that each
request of a message gets its own part's, and a pick from a list keeps what the request said."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from intent import parse, parse_all
from intent.model import CancelIntent, CreateIntent, UpdateIntent

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 12, 2, 16, 0, tzinfo=SH)  # a Wednesday afternoon


def test_a_change_names_its_target_clock_and_the_new_hour_without_its_half_of_the_day() -> None:
    intent = parse("周四上午十点的会挪到十一点", now=NOW, tz=SH)
    assert isinstance(intent, UpdateIntent) and intent.changes is not None
    assert (intent.target_minute, intent.target_on, intent.target_on_said) == (600, date(2026, 12, 3), True)
    assert intent.changes.bare_hour == 11
    same_day = parse("上午十点的会挪到十一点", now=NOW, tz=SH)
    assert isinstance(same_day, UpdateIntent) and same_day.changes is not None
    assert not same_day.changes.day_said and not same_day.target_on_said and same_day.target_minute == 600


def test_a_new_day_or_half_of_the_day_is_said() -> None:
    moved = parse("跑步改到周五晚上七点", now=NOW, tz=SH)
    assert isinstance(moved, UpdateIntent) and moved.changes is not None
    assert moved.changes.day_said and moved.changes.bare_hour is None
    assert moved.target_minute is None  # no clock before the change verb


def test_a_cancel_reads_the_clock_of_the_whole_request() -> None:
    intent = parse("把7点那个闹钟关了", now=NOW, tz=SH)
    assert isinstance(intent, CancelIntent) and intent.target_minute is not None
    assert intent.target_minute % 720 == 7 * 60 and not intent.target_on_said


def test_a_create_says_whether_a_day_was_said() -> None:
    past = parse("九点半去健身", now=NOW.replace(hour=22), tz=SH)  # 09:30 has passed today: tomorrow's
    named = parse("明天九点半去健身", now=NOW.replace(hour=22), tz=SH)
    assert isinstance(past, CreateIntent) and not past.day_said
    assert isinstance(named, CreateIntent) and named.day_said


def test_each_request_of_a_message_gets_its_own_parts_words() -> None:
    first, second = parse_all("九点半去健身，后天下午三点理发", now=NOW, tz=SH)
    assert isinstance(first, CreateIntent) and not first.day_said  # tomorrow's 09:30: the reply says so
    assert isinstance(second, CreateIntent) and second.day_said


def test_a_pick_keeps_what_the_request_said() -> None:
    asked = parse("明天的会改到后天下午3点", now=NOW, tz=SH)
    assert isinstance(asked, UpdateIntent) and asked.changes is not None and asked.changes.day_said
    pending = asked.model_copy(update={"needs_clarification": ["target"]})
    picked = parse("2", now=NOW, tz=SH, pending=pending)
    assert isinstance(picked, UpdateIntent) and picked.choice == 2
    assert picked.changes is not None and picked.changes.day_said
