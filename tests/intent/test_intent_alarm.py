"""Alarms, wake-ups and countdowns are reminders (闹钟 / 叫醒 / 喊我起床 / 倒计时): set, looked at and switched off,
and the same meaning said with fillers, particles, full-width digits, voice full stops or an emoji gets the same
intent. Words the alarm rules do not know are left to the general rules, never stored as a title."""

from __future__ import annotations

from typing import Any

import pytest
from intent_helpers import needs_engine
from typing_helpers import SHANGHAI, explain, mismatches, ref

from intent import parse
from intent.model import CancelIntent, QueryIntent

WED = ref("2026-12-02 10:00")
CASES: list[tuple[str, dict[str, Any]]] = [
    ("帮我设一个明天早上六点四十的闹钟", {"action": "create", "title": "闹钟", "at": "2026-12-03 06:40",
                                 "remind": "2026-12-03 06:40", "asks": []}),
    ("设置一个明天早上6点半的闹铃", {"action": "create", "title": "闹钟", "remind": "2026-12-03 06:30"}),
    ("定个后天7点半的闹钟", {"action": "create", "title": "闹钟", "remind": "2026-12-04 07:30"}),
    ("八点叫醒我", {"action": "create", "title": "起床", "remind": "2026-12-03 08:00"}),
    ("七点叫我起床", {"action": "create", "title": "起床", "remind": "2026-12-03 07:00"}),
    ("明天下午两点叫醒我", {"action": "create", "title": "起床", "remind": "2026-12-03 14:00"}),
    ("倒计时十五分钟", {"action": "create", "title": "倒计时", "remind": "2026-12-02 10:15"}),
    ("倒计时一个半小时", {"action": "create", "title": "倒计时", "remind": "2026-12-02 11:30"}),
    ("来个45分钟的闹钟", {"action": "create", "title": "闹钟", "remind": "2026-12-02 10:45"}),
    ("20分钟后叫醒我", {"action": "create", "title": "起床", "remind": "2026-12-02 10:20"}),
]
OFF: list[tuple[str, bool, str | None]] = [  # (text, every, target day)
    ("关掉闹钟", False, None),
    ("闹钟全部关掉", True, None),
    ("把闹钟都关了", True, None),
    ("清空提醒", True, None),
    ("把明天的闹钟取消", False, "2026-12-03"),
    ("七点半那个闹钟不要了", False, None),
]
LOOK = ["看看我的闹钟", "我设了哪些闹钟", "我有哪些提醒", "帮我看下我的提醒", "我的提醒有哪些", "闹钟有几个"]
NOT_ALARMS: list[tuple[str, dict[str, Any]]] = [  # the general rules keep these
    ("周三下午两点例会 闹钟就算了", {"action": "create", "no_reminder": True, "remind": None}),
    ("明天下午三点开会，提前半小时提醒我", {"action": "create", "kind": "event", "remind": "2026-12-03 14:30"}),
    ("帮我设个提醒", {"action": "create", "asks": ["reminder_time"]}),
    ("明早的闹钟改到6点", {"action": "update"}),
]


def _variants(text: str) -> list[str]:
    """The same meaning in other forms: fillers and particles, punctuation, full-width digits, an emoji."""
    wide = text.translate({ord(c): ord(c) + 0xFEE0 for c in "0123456789"})
    return [text, f"嗯 {text}", f"{text}吧", f"哎，那个{text}哈", f"{text}。", f"{text} ⏰", wide]


@needs_engine
@pytest.mark.parametrize(("text", "want"), CASES, ids=[c[0] for c in CASES])
def test_an_alarm_is_a_reminder_at_its_time_in_any_wording(text: str, want: dict[str, Any]) -> None:
    for said in _variants(text):
        it = parse(said, now=WED, tz=SHANGHAI)
        assert not mismatches(it, want, SHANGHAI), (said, mismatches(it, want, SHANGHAI), explain(it))


@needs_engine
@pytest.mark.parametrize(("text", "every", "day"), OFF, ids=[c[0] for c in OFF])
def test_switching_alarms_off_cancels_among_reminders(text: str, every: bool, day: str | None) -> None:
    for said in _variants(text):
        it = parse(said, now=WED, tz=SHANGHAI)
        assert isinstance(it, CancelIntent) and it.reminders, (said, explain(it))
        assert it.every is every and (it.target_date.isoformat() if it.target_date else None) == day, said


@needs_engine
@pytest.mark.parametrize("text", LOOK)
def test_looking_at_alarms_lists_reminders_and_stores_nothing(text: str) -> None:
    for said in _variants(text):
        it = parse(said, now=WED, tz=SHANGHAI)
        assert isinstance(it, QueryIntent) and it.reminders, (said, explain(it))


@needs_engine
@pytest.mark.parametrize(("text", "want"), NOT_ALARMS, ids=[c[0] for c in NOT_ALARMS])
def test_what_is_not_about_alarms_is_left_to_the_general_rules(text: str, want: dict[str, Any]) -> None:
    it = parse(text, now=WED, tz=SHANGHAI)
    assert not it.rule.startswith("alarm."), explain(it)
    assert not mismatches(it, want, SHANGHAI), (mismatches(it, want, SHANGHAI), explain(it))


@needs_engine
def test_a_week_word_before_a_weekday_is_that_day_not_a_week_long_duration() -> None:
    it = parse("添加一个周五晚上8点去跑步的提醒", now=ref("2026-06-18 10:00"), tz=SHANGHAI)
    assert not mismatches(it, {"action": "create", "at": "2026-06-19 20:00"}, SHANGHAI), explain(it)
    every = parse("每两周一次打扫卫生 周六上午十点", now=ref("2026-06-18 10:00"), tz=SHANGHAI)
    assert every.action == "create", explain(every)
