"""The asked hour's answer read in the part of the day already said: "这周五晚上和朋友聚餐" + "7点" is 19:00, not 07:00
until midnight; an hour written as 18:30 is never moved to the morning."""

from __future__ import annotations

from datetime import date

import pytest
from intent_helpers import NOW, TZ, at

from intent import parse_all
from intent.model import CreateIntent, UpdateIntent


def answered(text: str, answer: str) -> CreateIntent:
    [asked] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(asked, CreateIntent) and asked.needs_clarification
    [done] = parse_all(answer, now=NOW, tz=TZ, pending=asked)
    assert isinstance(done, CreateIntent)
    return done


@pytest.mark.parametrize(("answer", "hour", "minute"), [("7点", 19, 0), ("七点半", 19, 30), ("晚上7点", 19, 0),
                                                        ("18:30", 18, 30), ("下午6点", 18, 0)])
def test_an_evening_event_takes_the_evening_hour_and_no_day_end(answer: str, hour: int, minute: int) -> None:
    done = answered("这周五晚上和朋友聚餐", answer)  # NOW is Thursday 6/18: 这周五 is 6/19
    assert (done.start_at, done.end_at, done.all_day) == (at(2026, 6, 19, hour, minute), None, False)


@pytest.mark.parametrize(("text", "answer", "hour"), [("明天下午开会", "3点", 15), ("明天下午开会", "4点", 16),
                                                      ("明天开会", "9点", 9), ("明天开会", "18:30", 18),
                                                      ("后天上午面试", "10点", 10)])
def test_the_day_part_or_the_written_hour_decides(text: str, answer: str, hour: int) -> None:
    done = answered(text, answer)
    assert done.start_at is not None and done.start_at.hour == hour, done


@pytest.mark.parametrize(("text", "part", "clock", "hour"), [
    ("提醒我明天交电费", "明天上午", "9点吧", 9), ("明天开会", "下午", "3点", 15), ("明天开会", "晚上", "8点", 20),
])
def test_a_part_of_the_day_narrows_the_question_and_reads_the_next_answer(text: str, part: str, clock: str,
                                                                        hour: int) -> None:
    [asked] = parse_all(text, now=NOW, tz=TZ)
    [narrowed] = parse_all(part, now=NOW, tz=TZ, pending=asked)
    assert isinstance(narrowed, CreateIntent) and narrowed.needs_clarification == asked.needs_clarification
    assert narrowed.question == f"好的，{part.removeprefix('明天')}几点？"
    [done] = parse_all(clock, now=NOW, tz=TZ, pending=narrowed)
    assert isinstance(done, CreateIntent) and done.needs_clarification == []
    when = done.start_at or done.due_at
    assert when is not None and (when.date().day, when.hour) == (19, hour)


@pytest.mark.parametrize(("text", "answer", "start", "day_said"), [
    ("周五的会提前到上午", "10点", (19, 10), None), ("开会改到明天晚上", "8点", (19, 20), (2026, 6, 19)),
])
def test_a_change_to_a_part_of_the_day_then_the_hour(text: str, answer: str, start: tuple[int, int],
                                                    day_said: tuple[int, int, int] | None) -> None:
    [asked] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(asked, UpdateIntent) and asked.needs_clarification == ["changes"]
    [done] = parse_all(answer, now=NOW, tz=TZ, pending=asked)
    assert isinstance(done, UpdateIntent) and done.needs_clarification == [] and done.changes is not None
    assert done.changes.start_at == at(2026, 6, *start)
    assert done.changes.date == (date(*day_said) if day_said else None)
