"""One test per conversation rule (docs/conversation.md), with the seed's acceptance examples (time engine faked)."""

from __future__ import annotations

from datetime import timedelta

from intent_helpers import NOW, at, explain, point, run

from intent import Intent
from intent.model import (
    CancelIntent,
    CompleteIntent,
    CreateIntent,
    QueryIntent,
    SnoozeIntent,
    SubscribeDigestIntent,
    UnsubscribeDigestIntent,
    UpdateIntent,
)

TOMORROW = {"明天": point(at(2026, 6, 19), clock=False, grain="day")}


def _create(it: Intent) -> CreateIntent:
    assert isinstance(it, CreateIntent), explain(it)
    return it


def test_rule1_missing_time_asks_and_saves_nothing() -> None:
    it = _create(run("我明天要去开会，帮我记录增加一个提醒", TOMORROW))
    assert set(it.needs_clarification) == {"event_time", "reminder_offset"}, explain(it)
    assert it.question == "可以。我先记下“明天开会”。会议大概几点开始，提前多久提醒你？", explain(it)
    assert it.reminder is None, explain(it)


def test_rule1_reminder_without_time_asks_for_reminder_time() -> None:
    it = _create(run("提醒我交电费"))
    assert it.needs_clarification == ["reminder_time"], explain(it)
    assert "交电费" in it.title, explain(it)


def test_rule2_explicit_no_reminder_records_only() -> None:
    it = _create(run("不用提醒，先记一下：下次去超市买猫粮"))
    assert it.kind == "task", explain(it)
    assert it.explicit_no_reminder, explain(it)
    assert it.reminder is None, explain(it)
    assert "去超市买猫粮" in it.title, explain(it)


def test_rule2_no_reminder_inside_request_keeps_event() -> None:
    it = _create(run("下周一下午3点开会，不用提醒我", {"下周一下午3点": point(at(2026, 6, 22, 15))}))
    assert it.kind == "event", explain(it)
    assert it.start_at == at(2026, 6, 22, 15), explain(it)
    assert it.reminder is None, explain(it)
    assert it.explicit_no_reminder, explain(it)


def test_rule3_meeting_gets_default_offset() -> None:
    it = _create(run("今天下午三点有个会", {"今天下午三点": point(at(2026, 6, 18, 15))}))
    assert it.kind == "event", explain(it)
    assert it.start_at == at(2026, 6, 18, 15), explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 18, 14), explain(it)
    assert it.reminder.offset_minutes == 60, explain(it)
    assert "会" in it.title, explain(it)


def test_rule3_offset_is_a_parameter() -> None:
    it = _create(run("今天下午三点有个会", {"今天下午三点": point(at(2026, 6, 18, 15))}, meeting_offset_minutes=15))
    assert it.reminder is not None, explain(it)
    assert it.reminder.offset_minutes == 15, explain(it)


def test_rule4_other_events_get_no_automatic_reminder() -> None:
    it = _create(run("明天上午十点去取护照", {"明天上午十点": point(at(2026, 6, 19, 10))}))
    assert it.kind == "event", explain(it)
    assert it.start_at == at(2026, 6, 19, 10), explain(it)
    assert it.reminder is None, explain(it)
    assert it.needs_clarification == [], explain(it)
    assert it.title == "取护照", explain(it)


def test_rule5_explicit_reminder_time_wins() -> None:
    it = _create(run("明天上午九点提醒我带材料", {"明天上午九点": point(at(2026, 6, 19, 9))}))
    assert it.kind == "task", explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 19, 9), explain(it)
    assert it.needs_clarification == [], explain(it)
    assert it.title == "带材料", explain(it)


def test_rule5_lead_time_before_event() -> None:
    it = _create(run("明天凌晨5点的航班，提前两小时提醒我", {"明天凌晨5点": point(at(2026, 6, 19, 5))}))
    assert it.kind == "event", explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 19, 3), explain(it)
    assert it.reminder.offset_minutes == 120, explain(it)
    assert it.title == "航班", explain(it)


def test_rule6_daily_digest_subscription() -> None:
    it = run("每天早上 7 点给我发一天的待办记录",
             {"每天早上 7 点": {"type": "set", "start": at(2026, 6, 19, 7), "has_clock": True, "rrule": "FREQ=DAILY"}})
    assert isinstance(it, SubscribeDigestIntent), explain(it)
    assert it.time == "07:00", explain(it)


def test_rule6_digest_without_time_asks() -> None:
    it = run("每天给我发待办记录")
    assert isinstance(it, SubscribeDigestIntent), explain(it)
    assert it.needs_clarification == ["digest_time"], explain(it)


def test_rule7_itinerary_without_range_is_next_seven_days() -> None:
    it = run("看看我的行程计划")
    assert isinstance(it, QueryIntent), explain(it)
    assert it.range_start == at(2026, 6, 18), explain(it)
    assert it.range_end == at(2026, 6, 25), explain(it)


def test_rule8_itinerary_with_range() -> None:
    it = run("看看明天行程", TOMORROW)
    assert isinstance(it, QueryIntent), explain(it)
    assert (it.range_start, it.range_end) == (at(2026, 6, 19), at(2026, 6, 20)), explain(it)


def test_rule8_holiday_block() -> None:
    it = run("端午假期有什么安排", {"端午": point(at(2026, 6, 19), clock=False)})
    assert isinstance(it, QueryIntent), explain(it)
    assert (it.range_start, it.range_end) == (at(2026, 6, 19), at(2026, 6, 22)), explain(it)


def test_rule9_page_request() -> None:
    week = {"这周": {"type": "range", "start": at(2026, 6, 15), "end": at(2026, 6, 22), "has_date": True}}
    it = run("把这周的行程做成网页发我", week)
    assert isinstance(it, QueryIntent), explain(it)
    assert it.prefer_page, explain(it)
    assert it.range_start == at(2026, 6, 15), explain(it)


def test_rule10_complete_cancel_update() -> None:
    done = run("带材料那个已经完成了")
    assert isinstance(done, CompleteIntent), explain(done)
    assert done.target_text == "带材料", explain(done)
    gone = run("取消明天的会议", TOMORROW)
    assert isinstance(gone, CancelIntent), explain(gone)
    assert gone.target_text == "会议", explain(gone)
    assert gone.target_date == at(2026, 6, 19).date(), explain(gone)
    moved = run("下午三点的会改到四点", {"下午三点": point(at(2026, 6, 18, 15), date=False, period="下午"),
                                 "四点": point(at(2026, 6, 18, 16), date=False)})
    assert isinstance(moved, UpdateIntent), explain(moved)
    assert moved.target_text == "会", explain(moved)
    assert moved.changes is not None, explain(moved)
    assert moved.changes.start_at == at(2026, 6, 18, 16), explain(moved)
    lead = run("周会提醒改成提前15分钟")
    assert isinstance(lead, UpdateIntent), explain(lead)
    assert lead.changes is not None, explain(lead)
    assert lead.changes.offset_minutes == 15, explain(lead)
    assert lead.target_text == "周会", explain(lead)


def test_rule10_update_without_changes_asks() -> None:
    it = run("把那个会改一下")
    assert isinstance(it, UpdateIntent), explain(it)
    assert it.needs_clarification == ["changes"], explain(it)
    assert it.question, explain(it)


def test_rule11_recurring_meeting() -> None:
    it = _create(run("每周一上午10点开周会", {"每周一上午10点": {
        "type": "set", "start": at(2026, 6, 22, 10), "has_clock": True, "rrule": "FREQ=WEEKLY;BYDAY=MO"}}))
    assert it.kind == "event", explain(it)
    assert it.recurrence is not None, explain(it)
    assert it.recurrence.rrule == "FREQ=WEEKLY;BYDAY=MO", explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 22, 9), explain(it)


def test_rule12_snooze() -> None:
    it = run("10分钟后再提醒我", {"10分钟后": point(NOW + timedelta(minutes=10), date=False, relative=True)})
    assert isinstance(it, SnoozeIntent), explain(it)
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 18, 10, 10), explain(it)
    later = run("晚点再提醒我")
    assert isinstance(later, SnoozeIntent), explain(later)
    assert later.needs_clarification == ["snooze_duration"], explain(later)


def test_rule13_unsubscribe_digest() -> None:
    for text in ("取消每日待办推送", "早报不用发了"):
        it = run(text)
        assert isinstance(it, UnsubscribeDigestIntent), explain(it)


def test_rule14_everything_else_is_none() -> None:
    for text in ("明天会下雨吗", "会议纪要怎么写", "你好呀"):
        it = run(text, TOMORROW)
        assert it.action == "none", explain(it)


def test_rule15_rolled_time_is_kept() -> None:
    # the engine rolls a passed time to tomorrow; the intent keeps the engine's instant
    it = _create(run("8点提醒我吃药", {"8点": point(at(2026, 6, 18, 20), date=False)}))
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 18, 20), explain(it)


def test_rule5_second_clock_time_is_the_reminder() -> None:
    phrases = {"明天下午3点": point(at(2026, 6, 19, 15), period="下午"),
               "2点半": point(at(2026, 6, 18, 14, 30), date=False)}
    it = _create(run("明天下午3点开会，2点半提醒我", phrases))
    assert it.reminder is not None, explain(it)
    assert it.reminder.remind_at == at(2026, 6, 19, 14, 30), explain(it)
    assert it.reminder.offset_minutes == 30, explain(it)


def test_rule11_recurrence_starting_from_a_date() -> None:
    phrases = {"7月2日": point(at(2026, 7, 2), clock=False),
               "每周三晚上8点": {"type": "set", "start": at(2026, 6, 24, 20), "has_clock": True,
                           "rrule": "FREQ=WEEKLY;BYDAY=WE"}}
    it = _create(run("7月2日起每周三晚上8点打球", phrases))
    assert it.start_at == at(2026, 7, 8, 20), explain(it)
    assert it.title == "打球", explain(it)
