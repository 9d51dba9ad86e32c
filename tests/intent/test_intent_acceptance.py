"""The seed's acceptance examples (creating and queries) end to end, with the real time engine."""

from __future__ import annotations

from intent_helpers import NOW, TZ, at, explain, needs_engine

from intent import Intent, parse
from intent.model import CreateIntent, QueryIntent, SubscribeDigestIntent


def _parse(text: str, pending: Intent | None = None) -> Intent:
    return parse(text, now=NOW, tz=TZ, pending=pending)


@needs_engine
def test_rule1_then_answer() -> None:
    first = _parse("我明天要去开会，帮我记录增加一个提醒")
    assert isinstance(first, CreateIntent), explain(first)
    assert first.question == "可以。我先记下“明天开会”。会议大概几点开始，提前多久提醒你？", explain(first)
    stored = Intent.model_validate_json(first.model_dump_json())
    done = _parse("下午三点，提前半小时", stored)
    assert isinstance(done, CreateIntent), explain(done)
    assert done.start_at == at(2026, 6, 19, 15), explain(done)
    assert done.reminder is not None, explain(done)
    assert done.reminder.remind_at == at(2026, 6, 19, 14, 30), explain(done)
    plain = _parse("不用提醒，先记一下", stored)
    assert isinstance(plain, CreateIntent), explain(plain)
    assert plain.reminder is None, explain(plain)
    assert plain.explicit_no_reminder, explain(plain)


@needs_engine
def test_rules3_to_5() -> None:
    meeting = _parse("今天下午三点有个会")
    assert isinstance(meeting, CreateIntent), explain(meeting)
    assert meeting.reminder is not None, explain(meeting)
    assert (meeting.start_at, meeting.reminder.remind_at) == (at(2026, 6, 18, 15), at(2026, 6, 18, 14)), explain(meeting)
    passport = _parse("明天上午十点去取护照")
    assert isinstance(passport, CreateIntent), explain(passport)
    assert passport.start_at == at(2026, 6, 19, 10), explain(passport)
    assert passport.reminder is None, explain(passport)
    papers = _parse("明天上午九点提醒我带材料")
    assert isinstance(papers, CreateIntent), explain(papers)
    assert papers.reminder is not None, explain(papers)
    assert papers.reminder.remind_at == at(2026, 6, 19, 9), explain(papers)


@needs_engine
def test_rules6_to_8() -> None:
    digest = _parse("每天早上 7 点给我发一天的待办记录")
    assert isinstance(digest, SubscribeDigestIntent), explain(digest)
    assert digest.time == "07:00", explain(digest)
    week = _parse("看看我的行程计划")
    assert isinstance(week, QueryIntent), explain(week)
    assert (week.range_start, week.range_end) == (at(2026, 6, 18), at(2026, 6, 25)), explain(week)
    tomorrow = _parse("看看明天行程")
    assert isinstance(tomorrow, QueryIntent), explain(tomorrow)
    assert (tomorrow.range_start, tomorrow.range_end) == (at(2026, 6, 19), at(2026, 6, 20)), explain(tomorrow)
