"""Follow-ups that name no item (the focus): corrections, bare details about the focus, 那天, noise."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from intent import parse_all
from intent.contact import pull
from intent.filler import strip
from intent.followup import FocusHint
from intent.model import CancelIntent, CompleteIntent, CreateIntent, NoneIntent, UpdateIntent

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 12, 2, 14, 0, tzinfo=SH)  # a Wednesday afternoon
FOCUS = FocusHint(on=date(2026, 12, 4), at=datetime(2026, 12, 4, 10, 0, tzinfo=SH))  # Friday 10:00


def one(text: str, focus: FocusHint | None = FOCUS) -> object:
    [intent] = parse_all(text, now=NOW, tz=SH, focus=focus)
    return intent


@pytest.mark.parametrize(("text", "start"), [
    ("不对，是十一点", datetime(2026, 12, 4, 11, 0, tzinfo=SH)),  # near the focus's 10:00, not tonight's 23:00
    ("错了 应该是下午三点", datetime(2026, 12, 4, 15, 0, tzinfo=SH)),
    ("我说错了，10点半", datetime(2026, 12, 4, 10, 30, tzinfo=SH)),
    ("那天上午九点", datetime(2026, 12, 4, 9, 0, tzinfo=SH)),
    ("十二点吧", datetime(2026, 12, 4, 12, 0, tzinfo=SH)),
])
def test_a_corrected_or_bare_time_moves_the_focus_on_its_own_day(text: str, start: datetime) -> None:
    intent = one(text)
    assert isinstance(intent, UpdateIntent) and intent.target_text is None, intent
    assert "target" in intent.needs_clarification  # the conversation applies it to the focus
    assert intent.changes is not None and intent.changes.start_at == start


def test_a_correction_never_creates_even_with_nothing_in_focus() -> None:
    for text in ("不对，是十一点", "不是后天，是大后天", "搞错了 是周五"):
        intent = one(text, focus=None)
        assert isinstance(intent, UpdateIntent), (text, intent)
    assert one("不是后天，是大后天").changes.date == date(2026, 12, 5)  # type: ignore[attr-defined]
    assert isinstance(one("不是很急，明天交就行", focus=None), CreateIntent)  # 不是 alone corrects nothing


@pytest.mark.parametrize(("text", "field", "value"), [
    ("提前一刻钟提醒我", "offset_minutes", 15),
    ("提前两个小时叫我", "offset_minutes", 120),
    ("到点提醒我一下", "offset_minutes", 0),
    ("地点在人民广场", "location", "人民广场"),
    ("在2号会议室", "location", "2号会议室"),
    ("大概开两个小时", "duration_minutes", 120),
    ("一共45分钟", "duration_minutes", 45),
    ("备注：带身份证", "note", "带身份证"),
])
def test_details_said_alone_are_changes_of_the_focus(text: str, field: str, value: object) -> None:
    intent = one(text)
    assert isinstance(intent, UpdateIntent) and intent.changes is not None, intent
    assert getattr(intent.changes, field) == value


def test_a_repeat_turns_the_focus_into_a_series() -> None:
    weekly = one("以后每周都这样")
    assert isinstance(weekly, UpdateIntent) and weekly.changes is not None and weekly.changes.recurrence is not None
    assert weekly.changes.recurrence.rrule == "FREQ=WEEKLY"
    daily = one("以后天天都这样")
    assert isinstance(daily, UpdateIntent) and daily.changes.recurrence.rrule == "FREQ=DAILY"  # type: ignore[union-attr]


def test_done_and_not_needed_name_no_item() -> None:
    assert isinstance(one("浇好了"), CompleteIntent)
    assert isinstance(one("这个不用了"), CancelIntent)
    assert isinstance(one("这个不用了", focus=None), NoneIntent)  # nothing to be about: small talk


def test_that_day_is_the_focus_day() -> None:
    intent = one("那天晚上8点还要去接孩子")
    assert isinstance(intent, CreateIntent) and intent.title == "接孩子"
    assert intent.start_at is not None and intent.start_at.date() == date(2026, 12, 4)


def test_fillers_are_dropped_before_the_rules() -> None:
    assert strip("哎算了 那个聚餐取消吧") == "聚餐取消吧"
    assert strip("哦对 撤销一下") == "撤销一下"
    assert strip("算了吧") == "算了吧"  # a filler alone stays: it answers a question
    assert strip("这个月的安排") == "这个月的安排"
    cancel = one("唔…那个讲座我不去啦", focus=None)
    assert isinstance(cancel, CancelIntent) and cancel.target_text == "讲座"


def test_links_and_numbers_go_to_the_note_never_to_the_time_or_title() -> None:
    text, note = pull("周三下午3点给物业打电话 电话是021-12345678")
    assert "021" not in text and note == "电话是021-12345678"
    intent = one("晚上八点看下这个 https://example.com/a?b=1&c=2 提醒我一下", focus=None)
    assert isinstance(intent, CreateIntent) and intent.note == "https://example.com/a?b=1&c=2"
    assert intent.reminder is not None and intent.reminder.remind_at.hour == 20


def test_numbered_places_and_year_end_reports_are_no_dates() -> None:
    house = one("记一下 去看看3号楼那套房子", focus=None)
    assert isinstance(house, CreateIntent) and "3号楼" in house.title and house.due_at is None
    report = one("记一下 研究一下年终总结的结构", focus=None)
    assert isinstance(report, CreateIntent) and report.title == "研究一下年终总结的结构" and report.due_at is None


def test_the_place_leaves_the_title() -> None:
    film = one("周五晚上7点万达影城看电影", focus=None)
    assert isinstance(film, CreateIntent) and (film.title, film.location) == ("看电影", "万达影城")
    review = one("周五下午两点项目评审 5楼大会议室", focus=None)
    assert isinstance(review, CreateIntent) and (review.title, review.location) == ("项目评审", "5楼大会议室")


def test_venting_stores_nothing_and_the_request_in_a_long_message_is_found() -> None:
    assert isinstance(one("气死我了，今天被领导怼了三次，晚上还加班到十点，明天又要上班，烦死了烦死了", focus=None),
                      NoneIntent)
    [found] = parse_all("唉今天真是糟透了，早上地铁挤得要死，老板又在会上点名批评我，中午外卖还送错了。正事：周四前把合同发给张律师",
                        now=NOW, tz=SH)
    assert isinstance(found, CreateIntent) and found.title == "合同发给张律师"


@pytest.mark.parametrize("text", ["不用提醒我了", "不用叫我了", "别喊我了", "不用叫醒我了", "不用喊我一声了"])
def test_a_call_word_taken_back_drops_the_focus_reminders(text: str) -> None:
    """叫/喊 are reminder words: 不用叫我了 after an alarm is about its reminder, never a new 待办."""
    [it] = parse_all(text, now=NOW, tz=SH, focus=FOCUS)
    assert isinstance(it, UpdateIntent) and it.changes is not None and it.changes.no_reminder
