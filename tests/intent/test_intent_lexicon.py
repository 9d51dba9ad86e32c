"""Meeting class: the default reminder applies to meetings, not to 聚会/晚会/… or the verb 会."""

from __future__ import annotations

import pytest

from intent.lexicon import is_meeting
from intent.title import target_of, title_of

MEETINGS = ("开会", "会议", "例会", "周会", "晨会", "组会", "评审会", "电话会议", "视频会议", "项目会", "有个会",
            "开个会", "下午的会", "跟供应商开会")
NOT_MEETINGS = ("聚会", "晚会", "宴会", "约会", "舞会", "学会了", "会游泳", "明天会下雨", "等一会儿", "会员续费")


@pytest.mark.parametrize("text", MEETINGS)
def test_meeting_class(text: str) -> None:
    assert is_meeting(text), text


@pytest.mark.parametrize("text", NOT_MEETINGS)
def test_not_meeting(text: str) -> None:
    assert not is_meeting(text), text


@pytest.mark.parametrize(("text", "spans", "title"), [
    ("明天上午九点提醒我带材料", [(0, 6)], "带材料"),
    ("今天下午三点有个会", [(0, 6)], "会议"),
    ("每年6月28号是结婚纪念日,提前三天提醒我", [(0, 7), (14, 18)], "结婚纪念日"),
    ("不用提醒,先记一下:下次去超市买猫粮", [], "下次去超市买猫粮"),
    ("下个工作日上午10点提醒我给客户回电话", [(0, 10)], "给客户回电话"),
])
def test_title(text: str, spans: list[tuple[int, int]], title: str) -> None:
    assert title_of(text, spans) == title


def test_target() -> None:
    assert target_of("把每天吃药的提醒删了", [(1, 3), (8, 10)]) == "吃药"
    assert target_of("周五和王总的饭局取消了", [(0, 2), (8, 10)]) == "和王总的饭局"
