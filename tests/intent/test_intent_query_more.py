"""Itinerary questions said the way people say them: 这两天 is today and tomorrow, 接下来一周 seven days,
这几天 three; 第一个安排是什么 / 还有哪些没完成的 / 下一个会是几点 are queries, not the agent's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from intent_helpers import NOW, TZ, at

from intent import parse_all
from intent.model import QueryIntent


@pytest.mark.parametrize(("text", "days", "kind"), [
    ("我这两天有什么安排", 2, None), ("接下来一周", 7, None), ("这几天有什么事", 3, None),
    ("接下来两周的安排", 14, None), ("还有哪些没完成的", 7, "task"), ("下一个会是几点", 7, "event"),
])
def test_spans_from_today(text: str, days: int, kind: str | None) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, QueryIntent), it
    assert (it.range_start, it.range_end, it.filter_kind) == (at(2026, 6, 18), at(2026, 6, 18) + timedelta(days=days),
                                                              kind)


def test_the_first_of_a_day_is_that_days_list() -> None:
    [it] = parse_all("明天的第一个安排是什么", now=NOW, tz=TZ)
    assert isinstance(it, QueryIntent) and (it.range_start, it.range_end) == (at(2026, 6, 19), at(2026, 6, 20))


def test_an_ordinal_with_a_verb_is_not_a_query() -> None:
    [it] = parse_all("最后一个安排取消", now=NOW, tz=TZ)
    assert it.action == "cancel"
