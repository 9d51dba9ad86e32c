"""Time-expression traps (docs/conversation.md#time), one case each: the mistakes other Chinese time parsers make."""

from __future__ import annotations

from datetime import datetime

import pytest

from intent.timex import extract
from tests.intent.timex.timex_helpers import NOW, TZ, first

MONDAY = datetime(2021, 6, 14, 9, 0, tzinfo=TZ)
SEPT_1 = datetime(2021, 9, 1, 15, 15, tzinfo=TZ)

TRAPS: list[tuple[str, datetime, str, str]] = [
    ("future values are not shifted again (ret_future)", SEPT_1, "10月8号", "2021-10-08"),
    ("下周三 is next week's, not the nearest Wednesday", MONDAY, "下周三", "2021-06-23"),
    ("三天后 is a date", NOW, "三天后", "2026-06-21"),
    ("两小时后 is an instant", NOW, "两小时后", "2026-06-18 12:00"),
    ("半小时后 is neither 5 hours nor now", NOW, "半小时后", "2026-06-18 10:30"),
    ("a range end keeps the month", NOW, "6月20到25日", "2026-06-20..2026-06-26"),
    ("a range end keeps the week", NOW, "下周三到周五", "2026-06-24..2026-06-27"),
    ("a range end keeps PM", NOW, "下午5:00到6:00", "2026-06-18 17:00..2026-06-18 18:00"),
    ("提前半小时 is a lead time, not the past half hour", NOW, "提前半小时", "lead 1800"),
    ("bare 29日 is a date, not 29 days", NOW, "29日", "2026-06-29"),
    ("二月十五 in Chinese numerals is solar", NOW, "二月十五", "2027-02-15"),
    ("一会儿 is not 1会儿", NOW, "一会儿", "nothing"),
    ("phone numbers are not times", NOW, "电话13812345678", "nothing"),
    ("IP addresses are not times", NOW, "192.168.1.1", "nothing"),
    ("二十点六 is a number", NOW, "二十点六", "nothing"),
    ("调高24点5度 is a temperature", NOW, "调高24点5度", "nothing"),
    ("下个月 is supported", NOW, "下个月", "2026-07-01..2026-08-01"),
    ("月底 is supported", NOW, "月底", "2026-06-30"),
    ("明早 is tomorrow", NOW, "明早八点", "2026-06-19 08:00"),
    ("晚上12点 is the next day's 00:00", NOW, "晚上12点", "2026-06-19 00:00"),
]


@pytest.mark.parametrize(("why", "now", "text", "want"), TRAPS, ids=[t[0] for t in TRAPS])
def test_trap(why: str, now: datetime, text: str, want: str) -> None:
    got, rule = first(text, now)
    assert got == want, f"{why}: {text!r} → {got} by rule {rule}, expected {want}"


def test_merged_mention_flags() -> None:
    (m,) = extract("明天下午三点开会", now=NOW, tz=TZ)
    assert (m.type, m.has_date, m.has_clock, m.period, m.text) == ("point", True, True, "下午", "明天下午三点")


def test_period_without_hour_is_not_a_clock_time() -> None:
    (m,) = extract("明天上午开会", now=NOW, tz=TZ)
    assert (m.has_date, m.has_clock, m.period) == (True, False, "上午")


def test_past_time_today_rolls() -> None:
    (m,) = extract("上午九点提醒我", now=NOW, tz=TZ)
    assert m.rolled and m.start == datetime(2026, 6, 19, 9, 0, tzinfo=TZ)


def test_relative_flag() -> None:
    (m,) = extract("10分钟后再提醒我", now=NOW, tz=TZ)
    assert m.relative and m.start == datetime(2026, 6, 18, 10, 10, tzinfo=TZ)


def test_mentions_are_ordered_and_separate() -> None:
    got = extract("明天下午三点开会，提前半小时提醒", now=NOW, tz=TZ)
    assert [(m.type, m.text) for m in got] == [("point", "明天下午三点"), ("duration", "提前半小时")]
    assert got[1].lead and got[1].seconds == 1800


def test_lunar_set_carries_lunar_date() -> None:
    (m,) = extract("每年农历八月十五提醒我", now=NOW, tz=TZ)
    assert m.type == "set" and m.lunar is not None and (m.lunar.month, m.lunar.day) == (8, 15)


def test_latin_fallback_uses_dateparser() -> None:
    (m,) = extract("Dec 25 3pm", now=NOW, tz=TZ)
    assert (m.rule, m.start) == ("dateparser", datetime(2026, 12, 25, 15, 0, tzinfo=TZ))


@pytest.mark.parametrize(("text", "want"), [
    ("春节前一周", "2027-01-30"), ("春节前两周", "2027-01-23"), ("国庆前三天", "2026-09-28"),
    ("元旦后三天", "2027-01-04"), ("中秋节后一天", "2026-09-26"), ("春节前一天", "2027-02-05"),
    ("春节前夕", "2027-02-05"), ("春节前", "2027-02-05"),
])
def test_days_or_weeks_before_and_after_a_holiday(text: str, want: str) -> None:
    """N days / weeks before or after a named holiday are that date, not the holiday plus a span of the past."""
    assert first(text)[0] == want
