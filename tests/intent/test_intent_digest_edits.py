"""Digest changes in words, read purely: a new time, the next day's agenda, weekdays only,
several at once; a subscription that names its days is still a subscription; item changes stay item changes.
`after_digest` reads a change that names nothing (改到晚上9点半), said right after a digest reply."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from intent import parse, parse_all
from intent.digest import MON_TO_FRI, after_digest
from intent.model import SubscribeDigestIntent
from intent.normalise import normalise
from intent.pipeline import analyse
from intent.slots import collect

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 12, 2, 9, 0, tzinfo=SH)  # a Wednesday


def _change(text: str) -> SubscribeDigestIntent:
    intent = parse(text, now=NOW, tz=SH)
    assert isinstance(intent, SubscribeDigestIntent) and intent.retime, intent
    assert not intent.needs_clarification
    return intent


@pytest.mark.parametrize(("text", "time"), [
    ("换到晚上九点发第二天的吧", "21:00"), ("改成晚上9点发明天的", "21:00"), ("换成每晚十点发第二天的", "22:00"),
    ("改成每晚8点发明天的", "20:00"), ("那就改到晚上8点半发次日的安排", "20:30"),
])
def test_a_new_time_and_the_next_days_agenda(text: str, time: str) -> None:
    intent = _change(text)
    assert (intent.time, intent.digest_kind, intent.kind_said, intent.days_said) == (time, "todo_next_day", True,
                                                                                    False)


@pytest.mark.parametrize("text", ["周末就别发了", "周六周日不用发", "周六周日就不用推了", "周末的推送不用发了",
                                  "周末不要给我发待办了", "双休日别推送了"])
def test_no_weekends_is_monday_to_friday(text: str) -> None:
    intent = _change(text)
    assert intent.time is None and not intent.kind_said and intent.days_said
    assert intent.recurrence is not None and intent.recurrence.rrule == MON_TO_FRI  # 周末 = Sat–Sun


@pytest.mark.parametrize("text", ["以后只在工作日发", "只在工作日推送", "工作日发就行", "改成工作日发"])
def test_working_days_only_follow_the_official_calendar(text: str) -> None:
    intent = _change(text)
    assert intent.days_said and intent.recurrence is not None and intent.recurrence.workdays == "cn"


def test_several_changes_in_one_message_are_one_change() -> None:
    [change] = parse_all("改成每晚8点发明天的，周末不用发", now=NOW, tz=SH)  # one reply, one row
    assert isinstance(change, SubscribeDigestIntent) and change.recurrence is not None
    assert (change.retime, change.time, change.digest_kind, change.kind_said, change.days_said) == (
        True, "20:00", "todo_next_day", True, True)
    assert change.recurrence.rrule == MON_TO_FRI


def test_a_new_subscription_that_names_its_days_is_not_a_change() -> None:
    intent = parse("每天早上7点给我发待办，周末不用发", now=NOW, tz=SH)
    assert isinstance(intent, SubscribeDigestIntent) and not intent.retime
    assert intent.time == "07:00" and intent.recurrence is not None and intent.recurrence.rrule == MON_TO_FRI


@pytest.mark.parametrize("text", ["周末不用去公司了", "开会改到晚上9点", "把邮件改到8点发", "改到明天下午3点",
                                  "周末有什么安排", "改成每天早上8点发朋友圈"])
def test_other_sentences_are_not_digest_changes(text: str) -> None:
    intent = parse(text, now=NOW, tz=SH)
    assert not (isinstance(intent, SubscribeDigestIntent) and intent.retime), intent


def _after(text: str) -> SubscribeDigestIntent | None:
    norm = normalise(text)
    mentions, _ = analyse(norm, NOW, SH, None)
    return after_digest(norm, collect(mentions, norm))


@pytest.mark.parametrize(("text", "time"), [("改到晚上9点半", "21:30"), ("8点吧", "08:00"), ("还是7点半吧", "07:30"),
                                            ("那就早上6点", "06:00")])
def test_right_after_a_digest_reply_a_bare_time_retimes_it(text: str, time: str) -> None:
    intent = _after(text)
    assert intent is not None and intent.retime and intent.time == time and not intent.kind_said


def test_right_after_a_digest_reply_the_agenda_alone_switches_it() -> None:
    intent = _after("换成发第二天的")
    assert intent is not None and intent.kind_said and intent.digest_kind == "todo_next_day" and intent.time is None


@pytest.mark.parametrize("text", ["改到明天下午3点", "明天下午3点开会", "好的谢谢", "取消", "改到明天", "推迟半小时"])
def test_right_after_a_digest_reply_other_words_are_read_as_usual(text: str) -> None:
    assert _after(text) is None
