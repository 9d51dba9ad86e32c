"""Dialogue merge: a pending clarified intent completed by the answer, or replaced by a new request."""

from __future__ import annotations

from typing import Any

from intent_helpers import at, explain, point, run

from intent import Intent
from intent.model import CancelIntent, CreateIntent, SnoozeIntent, SubscribeDigestIntent

TOMORROW = {"明天": point(at(2026, 6, 19), clock=False, grain="day")}
ANSWERS: dict[str, dict[str, Any]] = {
    "下午三点": point(at(2026, 6, 18, 15), date=False, period="下午"),
    "提前半小时": {"type": "duration", "seconds": 1800, "lead": True},
    "晚上8点": point(at(2026, 6, 18, 20), date=False, period="晚上"),
    "早上7点半": point(at(2026, 6, 19, 7, 30), date=False, period="早上"),
    "10分钟后": point(at(2026, 6, 18, 10, 10), date=False, relative=True),
}


def _pending() -> Intent:
    first = run("我明天要去开会，帮我记录增加一个提醒", TOMORROW)
    # the bot stores the pending intent as JSON and gives it back
    return Intent.model_validate_json(first.model_dump_json())


def test_pending_round_trips_as_json() -> None:
    again = _pending()
    assert isinstance(again, CreateIntent), explain(again)
    assert again.pending is not None, explain(again)
    assert again.pending.label == "明天开会", explain(again)


def test_time_and_lead_complete_rule1() -> None:
    it = run("下午三点，提前半小时", ANSWERS, pending=_pending())
    assert isinstance(it, CreateIntent), explain(it)
    assert it.start_at == at(2026, 6, 19, 15), explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 19, 14, 30), explain(it)
    assert it.reminder.offset_minutes == 30, explain(it)
    assert it.needs_clarification == [], explain(it)


def test_time_only_answer_uses_meeting_default() -> None:
    it = run("晚上8点", ANSWERS, pending=_pending())
    assert isinstance(it, CreateIntent), explain(it)
    assert it.start_at == at(2026, 6, 19, 20), explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.offset_minutes == 60, explain(it)


def test_morning_answer() -> None:
    it = run("早上7点半", ANSWERS, pending=_pending())
    assert isinstance(it, CreateIntent), explain(it)
    assert it.start_at == at(2026, 6, 19, 7, 30), explain(it)


def test_no_reminder_answer_records_task() -> None:
    it = run("不用提醒，先记一下", ANSWERS, pending=_pending())
    assert isinstance(it, CreateIntent), explain(it)
    assert it.kind == "task", explain(it)
    assert it.reminder is None, explain(it)
    assert it.explicit_no_reminder, explain(it)
    assert it.all_day, explain(it)
    assert it.due_at == at(2026, 6, 19), explain(it)


def test_reminder_time_answer() -> None:
    pending = run("提醒我交电费")
    it = run("晚上8点", ANSWERS, pending=pending)
    assert isinstance(it, CreateIntent), explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 18, 20), explain(it)
    assert it.title == "交电费", explain(it)


def test_choice_picks_candidate() -> None:
    pending = CancelIntent(target_text="会议", needs_clarification=["target"], question="哪一个？")
    for answer in ("第二个", "2", "第2个"):
        it = run(answer, pending=pending)
        assert isinstance(it, CancelIntent), explain(it)
        assert it.choice == 2, explain(it)
        assert it.needs_clarification == [], explain(it)


def test_snooze_duration_answer() -> None:
    it = run("10分钟后", ANSWERS, pending=run("晚点再提醒我"))
    assert isinstance(it, SnoozeIntent), explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 18, 10, 10), explain(it)


def test_digest_time_answer() -> None:
    it = run("早上7点半", ANSWERS, pending=run("每天给我发待办记录"))
    assert isinstance(it, SubscribeDigestIntent), explain(it)
    assert it.time == "07:30", explain(it)
    assert it.needs_clarification == [], explain(it)


def test_unrelated_message_replaces_pending() -> None:
    it = run("看看我的行程计划", pending=_pending())
    assert it.action == "query", explain(it)
    it = run("你好呀", pending=_pending())
    assert it.action == "none", explain(it)


def test_bare_hour_on_another_day_is_morning() -> None:
    # the engine resolves a bare 8点 today (10:00) to 20:00; for tomorrow's meeting it means 08:00
    it = run("8点", {"8点": point(at(2026, 6, 18, 20), date=False)}, pending=_pending())
    assert isinstance(it, CreateIntent), explain(it)
    assert it.start_at == at(2026, 6, 19, 8), explain(it)


def test_bare_hour_for_daily_digest_is_morning() -> None:
    it = run("7点半", {"7点半": point(at(2026, 6, 18, 19, 30), date=False)}, pending=run("每天给我发待办记录"))
    assert isinstance(it, SubscribeDigestIntent), explain(it)
    assert it.time == "07:30", explain(it)
