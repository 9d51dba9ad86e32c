"""Rule 1 for a dated task with a lead (SPEC §4: "an all-day item reminded N days ahead needs a clock time: ask"):
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
