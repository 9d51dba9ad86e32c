"""Requests the bot runs later, in the intent engine: a corpus of what is one, and what stays as before."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from intent import parse_all
from intent.model import RequestIntent

TZ = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 6, 18, 10, 0, tzinfo=TZ)  # Thursday

# text → (op, rule, first run, rrule, title or target, query (span, shift, kind, done) or None); 6月19日 is 端午
REQUESTS = {
    "每天早上8点告诉我今天的天气": ("create", "request.free", "2026-06-19T08:00", "FREQ=DAILY", "今天的天气", None),
    "明早8点帮我看看今天有什么会": ("create", "request.agenda", "2026-06-19T08:00", None, "今天有什么会",
                                ("day", 0, "event", False)),
    "每周五下午5点提醒我写周报并列出这周完成的事": ("create", "request.agenda", "2026-06-19T17:00",
                                          "FREQ=WEEKLY;BYDAY=FR", "这周完成的事", ("week", 0, None, True)),
    "每周日晚上8点告诉我下周的安排": ("create", "request.agenda", "2026-06-21T20:00", "FREQ=WEEKLY;BYDAY=SU",
                                 "下周的安排", ("week", 1, None, False)),
    "每个工作日早上9点帮我查一下今天的新闻": ("create", "request.free", "2026-06-22T09:00", None, "今天的新闻", None),
    "早上的天气不用发了": ("cancel", "request.cancel", None, None, "天气", None),
    "别再给我发天气了": ("cancel", "request.cancel", None, None, "天气", None),
    "取消天气推送": ("cancel", "request.cancel", None, None, "天气", None),
    "我有哪些定时任务": ("list", "request.list", None, None, None, None),
    "天气改成早上7点发": ("update", "request.update", "2026-06-19T07:00", None, "天气", None),
    "天气推送改到7点半": ("update", "request.update", "2026-06-18T19:30", None, "天气", None),
}
# not requests: reminders for the user to do something, digests, item changes, questions now
OTHERS = {
    "每天早上8点提醒我吃药": "create",
    "明天下午3点提醒我看看邮件": "create",
    "每天早上7点给我发一天的待办记录": "subscribe_digest",
    "早报不用发了": "unsubscribe_digest",
    "推送改到8点": "subscribe_digest",
    "后天的周会记一下就好，不用通知我": "create",
    "取消明天的会议": "cancel",
    "下午三点的会改到四点": "update",
    "明天会下雨吗": "none",
    "看看明天的行程": "query",
}


@pytest.mark.parametrize("text", list(REQUESTS))
def test_requests(text: str) -> None:
    op, rule, first, rrule, words, query = REQUESTS[text]
    [intent] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(intent, RequestIntent), intent.rule
    assert (intent.op, intent.rule) == (op, rule)
    assert (intent.first_at.strftime("%Y-%m-%dT%H:%M") if intent.first_at else None) == first
    if rrule is not None:
        assert intent.recurrence is not None and intent.recurrence.rrule == rrule
    assert (intent.title if op == "create" else intent.target_text) == words
    q = intent.query
    assert ((q.span, q.shift, q.filter_kind, q.done) if q else None) == query


def test_a_reminder_said_with_the_request_is_kept() -> None:
    [intent] = parse_all("每周五下午5点提醒我写周报并列出这周完成的事", now=NOW, tz=TZ)
    assert isinstance(intent, RequestIntent) and intent.remind == "写周报" and intent.text == "列出这周完成的事"


def test_the_workday_series_is_kept() -> None:
    [intent] = parse_all("每个工作日早上9点帮我查一下今天的新闻", now=NOW, tz=TZ)
    assert isinstance(intent, RequestIntent) and intent.recurrence is not None
    assert intent.recurrence.workdays == "cn"


@pytest.mark.parametrize("text", list(OTHERS))
def test_not_requests(text: str) -> None:
    assert [i.action for i in parse_all(text, now=NOW, tz=TZ)] == [OTHERS[text]]


def test_a_digest_named_by_its_day_stays_a_digest_change() -> None:
    assert [i.action for i in parse_all("第二天的推送改到晚上10点", now=NOW, tz=TZ)] == ["subscribe_digest"]
