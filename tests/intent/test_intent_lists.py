"""Lists after a lead-in and several requests where one needs a question (it is asked last), and a
part of the day with no hour (not a clock time: the hour is asked)."""

from __future__ import annotations

from datetime import date

import pytest
from intent_helpers import NOW, TZ, at, needs_engine

from intent import parse, parse_all
from intent.lexicon import is_activity
from intent.model import CreateIntent, QueryIntent

pytestmark = needs_engine


@pytest.mark.parametrize(("text", "titles", "due"), [
    ("这周末要做的：换灯泡、取快递、剪头发", ["换灯泡", "取快递", "剪头发"], date(2026, 6, 20)),
    ("要买的：牛奶、鸡蛋、面包", ["买牛奶", "买鸡蛋", "买面包"], None),
    ("待办：交水电费、预约体检、给房东发消息", ["交水电费", "预约体检", "给房东发消息"], None),
    ("待办事项：续签合同，交社保，修打印机", ["续签合同", "交社保", "修打印机"], None),
    ("周日要买的东西：酱油、大米、洗衣液", ["买酱油", "买大米", "买洗衣液"], date(2026, 6, 21)),
    ("今天的待办：回邮件、整理发票、订机票", ["回邮件", "整理发票", "订机票"], date(2026, 6, 18)),
    ("出差要准备的：充电宝、身份证、雨伞", ["准备充电宝", "准备身份证", "准备雨伞"], None),
    ("明天要办的：还书，寄快递，买药", ["还书", "寄快递", "买药"], date(2026, 6, 19)),
])
def test_a_lead_in_makes_one_task_per_thing(text: str, titles: list[str], due: date | None) -> None:
    found = parse_all(text, now=NOW, tz=TZ)
    assert [it.title for it in found if isinstance(it, CreateIntent)] == titles
    for it in found:
        assert isinstance(it, CreateIntent) and it.kind == "task" and not it.needs_clarification, it
        assert (it.due_at.date() if it.due_at else None) == due and it.all_day == (due is not None)


def test_a_thing_with_its_own_clock_keeps_it() -> None:
    first, second = parse_all("明天要办的：9点还书，寄快递", now=NOW, tz=TZ)
    assert isinstance(first, CreateIntent) and first.title == "还书" and (first.start_at or first.due_at) == at(
        2026, 6, 19, 9)
    assert isinstance(second, CreateIntent) and second.due_at == at(2026, 6, 19) and second.all_day


def test_a_request_after_a_colon_is_no_list() -> None:
    found = parse_all("待办：明天下午3点开会，提前半小时提醒我", now=NOW, tz=TZ)
    assert len(found) == 1 and isinstance(found[0], CreateIntent) and found[0].start_at == at(2026, 6, 19, 15)
    assert found[0].reminder is not None and found[0].reminder.remind_at == at(2026, 6, 19, 14, 30)


@pytest.mark.parametrize(("text", "day", "period"), [
    ("周六上午带狗去打疫苗", date(2026, 6, 20), "上午"),
    ("后天上午去银行办业务", date(2026, 6, 20), "上午"),
    ("明天晚上去超市", date(2026, 6, 19), "晚上"),
])
def test_a_part_of_the_day_without_an_hour_asks_the_hour(text: str, day: date, period: str) -> None:
    it = parse(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.needs_clarification == ["event_time"], it
    assert it.pending is not None and it.pending.on_date == day and it.pending.period == period
    answered = parse("九点半", now=NOW, tz=TZ, pending=it)
    assert isinstance(answered, CreateIntent) and not answered.needs_clarification
    hour = 9 if period == "上午" else 21
    assert answered.start_at == at(day.year, day.month, day.day, hour, 30)


@pytest.mark.parametrize("text", ["周五前交报告", "每周六上午打扫卫生", "明天中午吃饭"])
def test_a_deadline_a_series_or_noon_is_not_asked(text: str) -> None:
    it = parse(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and "event_time" not in it.needs_clarification, it


def test_the_request_that_needs_a_question_comes_last() -> None:
    found = parse_all("周五上午见供应商，下午两点半剪头发，顺便看看周五还有什么", now=NOW, tz=TZ)
    assert [type(it).__name__ for it in found] == ["CreateIntent", "QueryIntent", "CreateIntent"]
    done, listing, asked = found
    assert isinstance(done, CreateIntent) and done.title == "剪头发" and done.start_at == at(2026, 6, 19, 14, 30)
    assert isinstance(listing, QueryIntent) and listing.range_start == at(2026, 6, 19)
    assert isinstance(asked, CreateIntent) and asked.title == "见供应商" and asked.needs_clarification == ["event_time"]


def test_a_query_then_a_request_that_asks() -> None:
    listing, asked = parse_all("看看明天有啥安排，再加一个明天下午和房东见面", now=NOW, tz=TZ)
    assert isinstance(listing, QueryIntent) and listing.range_start == at(2026, 6, 19)
    assert isinstance(asked, CreateIntent) and asked.title == "和房东见面" and asked.needs_clarification


def test_what_else_a_day_holds_is_a_query() -> None:
    assert isinstance(parse("看看周五还有什么", now=NOW, tz=TZ), QueryIntent)
    assert isinstance(parse("明天有啥", now=NOW, tz=TZ), QueryIntent)


def test_words_that_only_contain_an_activity() -> None:
    assert not is_activity("整理发票") and not is_activity("处理发票")
    assert is_activity("去理发") and is_activity("上午见供应商") and not is_activity("明天见")


def test_a_part_of_the_day_after_a_timed_request_takes_its_day_and_asks() -> None:
    meeting, asked = parse_all("明天上午十点开会，下午去医院", now=NOW, tz=TZ)
    assert isinstance(meeting, CreateIntent) and meeting.title == "开会" and meeting.start_at == at(2026, 6, 19, 10)
    assert isinstance(asked, CreateIntent) and asked.needs_clarification == ["event_time"]
    assert asked.pending is not None and asked.pending.on_date == date(2026, 6, 19) and asked.pending.period == "下午"
    assert asked.question == "可以。我先记下“6月19日下午去医院”。大概几点开始？"


def test_tonights_list_is_due_today() -> None:
    found = parse_all("今晚要做的：洗碗、倒垃圾", now=NOW, tz=TZ)
    assert [(it.title, it.due_at) for it in found if isinstance(it, CreateIntent)] == [
        ("洗碗", at(2026, 6, 18)), ("倒垃圾", at(2026, 6, 18))]


def test_a_long_list_is_no_venting() -> None:
    found = parse_all("这周要做的：续签合同，交社保，修打印机，给客户回邮件，整理发票，买打印纸", now=NOW, tz=TZ)
    assert [it.title for it in found if isinstance(it, CreateIntent)] == [
        "续签合同", "交社保", "修打印机", "给客户回邮件", "整理发票", "买打印纸"]
