"""A dated task with a lead ("an all-day item reminded N days ahead needs a clock time: ask"):
the question names the day the reminder falls on, and the answer's clock time lands on that day; a shorter lead
asks for the task's own time and reminds that much earlier; an answer with a day of its own is when to remind."""

from __future__ import annotations

from datetime import date

from intent_helpers import NOW, TZ, at

from intent import parse_all
from intent.model import CreateIntent


def ask_then(text: str, answer: str) -> tuple[CreateIntent, CreateIntent]:
    [asked] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(asked, CreateIntent) and asked.needs_clarification == ["reminder_time"]
    [done] = parse_all(answer, now=NOW, tz=TZ, pending=asked)
    assert isinstance(done, CreateIntent) and done.needs_clarification == []
    return asked, done


def test_whole_days_ahead_ask_the_clock_on_that_day() -> None:
    asked, done = ask_then("下周五交方案，提前两天提醒我", "晚上8点")
    assert asked.question == "可以。我先记下“下周五交方案”。提前的那天是6月24日（周三），几点提醒你？比如“上午9点”。"
    assert (done.due_at, done.all_day) == (at(2026, 6, 26), True)  # the task keeps its whole day
    assert done.reminder is not None
    assert (done.reminder.remind_at, done.reminder.offset_minutes) == (at(2026, 6, 24, 20), 28 * 60)


def test_one_day_ahead_in_the_morning() -> None:
    _, done = ask_then("下个月5号交房租，提前一天提醒", "上午9点")
    assert done.due_at == at(2026, 7, 5) and done.all_day
    assert done.reminder is not None and done.reminder.remind_at == at(2026, 7, 4, 9)


def test_a_shorter_lead_asks_the_tasks_own_time() -> None:
    asked, done = ask_then("明天交报告，提前半小时提醒我", "下午5点")
    assert asked.question == "可以。我先记下“明天交报告”。具体是几点？我会提前 30 分钟提醒你。"
    assert (done.due_at, done.all_day) == (at(2026, 6, 19, 17), False)
    assert done.reminder is not None
    assert (done.reminder.remind_at, done.reminder.offset_minutes) == (at(2026, 6, 19, 16, 30), 30)


def test_an_answer_with_its_own_day_is_when_to_remind() -> None:
    _, done = ask_then("下周三还信用卡，提前一天提醒", "明天上午10点")
    assert (done.due_at, done.all_day) == (at(2026, 6, 24), True)
    assert done.reminder is not None
    assert (done.reminder.remind_at, done.reminder.offset_minutes) == (at(2026, 6, 19, 10), None)


def test_without_a_lead_the_answer_is_still_the_tasks_time() -> None:
    _, done = ask_then("提醒我交材料", "明天上午9点")
    assert (done.due_at, done.all_day) == (at(2026, 6, 19, 9), False)
    assert done.reminder is not None and done.reminder.remind_at == at(2026, 6, 19, 9)
    assert done.due_at is not None and done.due_at.date() == date(2026, 6, 19)


def one(text: str) -> CreateIntent:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent)
    return it


def test_the_clock_after_a_whole_days_lead_is_the_reminders_and_the_task_keeps_its_day() -> None:
    for text, remind_at in (("下个月5号交房租，前一天上午9点提醒我", at(2026, 7, 4, 9)),
                            ("下个月5号交房租，提前一天上午9点提醒我", at(2026, 7, 4, 9)),
                            ("下个月5号交房租，提前两天上午9点提醒我", at(2026, 7, 3, 9)),
                            ("周五交报告，前一晚9点提醒我", at(2026, 6, 18, 21)),
                            ("周五交报告，前一天晚上9点提醒我", at(2026, 6, 18, 21))):
        it = one(text)
        assert it.needs_clarification == [] and it.all_day, (text, it)
        assert it.reminder is not None and it.reminder.remind_at == remind_at, (text, it.reminder)
        assert it.title in ("交房租", "交报告"), (text, it.title)


def test_the_day_before_is_a_lead() -> None:
    it = one("周五开会，前一天提醒我")
    assert it.needs_clarification == ["event_time"] and it.pending is not None
    assert it.pending.lead_minutes == 1440
    assert it.question == "可以。我先记下“周五开会”。会议大概几点开始？"  # not also "提前多久"
    [done] = parse_all("下午3点", now=NOW, tz=TZ, pending=it)
    assert isinstance(done, CreateIntent) and done.reminder is not None
    assert done.reminder.remind_at == at(2026, 6, 18, 15)


def test_an_events_own_reminder_clock_survives_the_question_for_its_time() -> None:
    it = one("下周四体检，头一天晚上8点提醒我")
    assert it.needs_clarification == ["event_time"]
    [done] = parse_all("上午9点", now=NOW, tz=TZ, pending=it)
    assert isinstance(done, CreateIntent) and done.start_at == at(2026, 6, 25, 9)
    assert done.reminder is not None
    assert (done.reminder.remind_at, done.reminder.offset_minutes) == (at(2026, 6, 24, 20), 13 * 60)


def test_the_part_of_the_lead_day_already_said_reads_the_answer() -> None:
    asked, done = ask_then("周五交报告，前一晚提醒我", "9点")
    assert asked.question == "可以。我先记下“周五交报告”。提前的那天是6月18日（周四）晚上，几点提醒你？比如“9点”。"
    assert done.reminder is not None and done.reminder.remind_at == at(2026, 6, 18, 21)


def test_other_uses_of_qian_are_left_alone() -> None:
    it = one("明天下午3点开会，前一天晚上8点提醒我")
    assert it.start_at == at(2026, 6, 19, 15) and it.reminder is not None
    assert it.reminder.remind_at == at(2026, 6, 18, 20)
    [query] = parse_all("前天的会", now=NOW, tz=TZ)
    assert query.action == "query"


def test_a_day_and_part_of_it_for_the_reminder_then_the_clock() -> None:
    [asked] = parse_all("下周五交方案，提前两天提醒我", now=NOW, tz=TZ)
    [narrowed] = parse_all("周三晚上", now=NOW, tz=TZ, pending=asked)
    assert isinstance(narrowed, CreateIntent) and narrowed.question == "好的，周三晚上几点？"
    [done] = parse_all("8点", now=NOW, tz=TZ, pending=narrowed)
    assert isinstance(done, CreateIntent) and done.needs_clarification == []
    assert (done.due_at, done.all_day) == (at(2026, 6, 26), True)
    assert done.reminder is not None and done.reminder.remind_at == at(2026, 6, 24, 20)


def test_another_day_for_a_plain_reminder() -> None:
    [asked] = parse_all("国庆节前一天提醒我订票", now=NOW, tz=TZ)
    [narrowed] = parse_all("周日晚上", now=NOW, tz=TZ, pending=asked)
    [done] = parse_all("8点", now=NOW, tz=TZ, pending=narrowed)
    assert isinstance(done, CreateIntent) and done.due_at == at(2026, 9, 30) and done.all_day
    assert done.reminder is not None and done.reminder.remind_at == at(2026, 6, 21, 20)
