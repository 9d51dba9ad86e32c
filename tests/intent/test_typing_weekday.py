"""Real typing: 一下/两下 before a weekday is a verb complement, not 下周 (next week)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
SUN_NIGHT = ref("2026-11-29 21:00")
NY_FRI = ref("2026-03-06 18:00", NEW_YORK)

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("麻烦记一下周二晚上的聚餐", THU, SHANGHAI, {"action": "create", "title": "聚餐", "at": "2026-06-23 00:00",
                                            "asks": ["event_time"]}),
    ("确认一下周日几点出发", THU, SHANGHAI, {"action": "query", "range": ("2026-06-21 00:00", "2026-06-22 00:00")}),
    ("提醒一下周四交作业", THU, SHANGHAI, {"action": "create", "title": "交作业", "at": "2026-06-25 00:00"}),
    ("帮我记一下周五下午3点的面试", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 15:00"}),
    ("记一下周六上午十点带娃打疫苗", THU, SHANGHAI, {"action": "create", "at": "2026-06-20 10:00"}),
    ("看一下下周的安排", THU, SHANGHAI, {"action": "query", "range": ("2026-06-22 00:00", "2026-06-29 00:00")}),
    ("看一下下下周的安排", THU, SHANGHAI, {"action": "query", "range": ("2026-06-29 00:00", "2026-07-06 00:00")}),
    ("帮我查一下下个月有什么安排", THU, SHANGHAI, {"action": "query",
                                          "range": ("2026-07-01 00:00", "2026-08-01 00:00")}),
    ("查一下周末有什么安排", THU, SHANGHAI, {"action": "query", "range": ("2026-06-20 00:00", "2026-06-22 00:00")}),
    ("下周二提醒我交电费", THU, SHANGHAI, {"action": "create", "at": "2026-06-23 00:00"}),
    ("提醒一下周一早上8点交周报", SUN_NIGHT, SHANGHAI, {"action": "create", "title": "交周报",
                                              "at": "2026-11-30 08:00"}),
    ("记一下周三晚上7点家长会", SUN_NIGHT, SHANGHAI, {"action": "create", "at": "2026-12-02 19:00"}),
    ("查一下周五有什么安排", SUN_NIGHT, SHANGHAI, {"action": "query", "range": ("2026-12-04 00:00", "2026-12-05 00:00")}),
    ("帮我看一下下周三有没有会", SUN_NIGHT, SHANGHAI, {"action": "query",
                                             "range": ("2026-12-02 00:00", "2026-12-03 00:00")}),
    ("每周一下午八点开例会", SUN_NIGHT, SHANGHAI, {"action": "create", "at": "2026-11-30 20:00",
                                         "rrule": "FREQ=WEEKLY;BYDAY=MO"}),
    ("提醒一下周一上午9点交房租", NY_FRI, NEW_YORK, {"action": "create", "at": "2026-03-09 09:00"}),
    ("记一下周日下午两点看电影", NY_FRI, NEW_YORK, {"action": "create", "at": "2026-03-08 14:00"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_yixia_before_weekday(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
