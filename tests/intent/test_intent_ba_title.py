"""A deadline with the 把 construction reads verb + object as its title, after 之前/前 too (把合同签了 → 签合同);
a date with 之前 before 做完 sets a deadline, it reports nothing done."""

from __future__ import annotations

import pytest
from intent_helpers import NOW, TZ

from intent import parse_all
from intent.model import CreateIntent


@pytest.mark.parametrize(("text", "title"), [
    ("下周三之前要把合同签了", "签合同"), ("周五前把报告交了", "交报告"), ("下周三之前把合同签好", "签合同"),
    ("周五之前要把PPT改完", "改PPT"), ("明天把机票订了", "订机票"), ("明天要把房租交了", "交房租"),
])
def test_ba_deadlines_read_verb_then_object(text: str, title: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.title == title


@pytest.mark.parametrize(("text", "title"), [("周三之前把PPT做完", "做PPT"), ("周五前把方案写完", "写方案")])
def test_a_deadline_with_a_done_verb_is_a_new_task(text: str, title: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.title == title and it.due_at is not None


@pytest.mark.parametrize("text", ["PPT做完了", "昨天的报告已经做完了"])
def test_a_report_of_work_done_is_still_complete(text: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert it.action == "complete"


@pytest.mark.parametrize(("text", "title"), [
    ("下周三孩子家长会，下午2点半，提醒我提前一小时出发", "孩子家长会"), ("明天三点开会，两点半提醒我出发", "开会"),
    ("明天下午3点面试，提前1小时提醒我出门", "面试"), ("明天8点出发", "出发"), ("明天8点出发去机场", "出发去机场"),
])
def test_setting_off_in_a_reminder_clause_is_not_the_title(text: str, title: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.title == title
