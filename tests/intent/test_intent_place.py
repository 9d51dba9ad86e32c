"""A place named as such (地点在/地址：/会议室是) goes to the item's location, not its title; a question about
the place (明天的会地址是哪) is still a query, and a place without a marker stays in the title."""

from __future__ import annotations

import pytest
from intent_helpers import NOW, TZ

from intent import parse_all, to_json
from intent.model import CreateIntent


@pytest.mark.parametrize(("text", "title", "place"), [
    ("明天上午十点到十一点半 项目评审 地点三楼会议室", "项目评审", "三楼会议室"),  # 地点 with no 在/是/:
    ("明天下午三点开会，地点三楼", "开会", "三楼"),
    ("明天下午三点开会 地址人民路8号", "开会", "人民路8号"),
    ("后天上午九点半面试，提前两个小时提醒我，地点在望京SOHO", "面试", "望京SOHO"),
    ("明天下午3点开会，地点：3楼会议室", "开会", "3楼会议室"),
    ("明天下午3点开会，会议室是A302", "开会", "会议室A302"),
    ("周五晚上7点同学聚会，地址在人民路8号海底捞", "同学聚会", "人民路8号海底捞"),
])
def test_a_marked_place_is_the_location(text: str, title: str, place: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent), it
    assert (it.title, it.location) == (title, place)
    assert to_json(it)["location"] == place


def test_an_unmarked_place_stays_in_the_title() -> None:
    [it] = parse_all("明天下午3点在三楼开会", now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.location is None and "三楼" in it.title
    assert "location" not in to_json(it)


@pytest.mark.parametrize("text", ["明天的会地址是哪", "明天的会地点在哪", "明天聚餐地址呢"])
def test_asking_where_is_a_query(text: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert it.action == "query"


def test_the_place_ends_at_a_space_before_chinese() -> None:
    [it] = parse_all("下周一早上九点半面试 地点：国贸三期 提前1小时叫我", now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and (it.title, it.location) == ("面试", "国贸三期")
    assert it.reminder is not None and it.reminder.offset_minutes == 60
    [it] = parse_all("明天下午三点开会 地点 望京SOHO T3", now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.location == "望京SOHO T3"


@pytest.mark.parametrize(("text", "place"), [("体检地点改成人民医院", "人民医院"), ("体检的地址换成市一院门诊楼", "市一院门诊楼")])
def test_a_new_place_for_an_item(text: str, place: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert it.action == "update" and getattr(it, "changes", None) is not None
    assert it.changes.location == place  # type: ignore[attr-defined]
