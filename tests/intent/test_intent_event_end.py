"""When a timed event ends, said after its start: a duration (大概一个小时, 开两个小时, 一个半小时) or an end clock
(4点结束, 到5点, 开到五点半). The words go to end_at, not into the title; a lead or a relative time is no end."""

from __future__ import annotations

import pytest
from intent_helpers import NOW, TZ, at

from intent import parse_all
from intent.model import CreateIntent

TOMORROW = (2026, 6, 19)


@pytest.mark.parametrize(("text", "title", "end"), [
    ("明天下午两点见客户，大概一个小时", "见客户", (15, 0)),
    ("明天下午3点开会，开两个小时", "开会", (17, 0)),
    ("明天早上7点跑步半小时", "跑步", (7, 30)),
    ("明天下午3点开会一个半小时", "开会", (16, 30)),
    ("明天下午两点开一个小时的会", "会议", (15, 0)),
    ("明天下午3点开会，4点结束", "开会", (16, 0)),
    ("明天下午3点开会到5点", "开会", (17, 0)),
    ("明天下午三点开会，开到五点半", "开会", (17, 30)),
])
def test_the_end_is_stored_and_left_out_of_the_title(text: str, title: str, end: tuple[int, int]) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.kind == "event", it
    assert (it.title, it.end_at) == (title, at(*TOMORROW, *end))


@pytest.mark.parametrize("text", ["明天下午3点开会，提前一个小时提醒我", "一个小时后提醒我开会", "明天上午9点到公司开会",
                                  "明天三点开会，两点半提醒我出发"])
def test_leads_relative_times_and_places_are_no_end(text: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.end_at is None, it
