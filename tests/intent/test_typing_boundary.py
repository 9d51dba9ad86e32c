"""Real typing: the agent boundary in both directions.

A look-up of the world (航班, 高铁, 天气 …) not said to be the user's, and a question about what the bot
can do with no time or item of its own, go to the agent (`none`); a dated question about one of the
user's own activities (后天的会在哪开来着) or their free time (周四有空吗) is a query.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
MON = ref("2026-06-15 09:00")
NY = ref("2026-03-06 18:00", NEW_YORK)

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("你能提醒我吗", THU, SHANGHAI, {"action": "none"}),
    ("你会设置提醒吗", THU, SHANGHAI, {"action": "none"}),
    ("你可以帮我记事吗", THU, SHANGHAI, {"action": "none"}),
    ("你能干嘛", THU, SHANGHAI, {"action": "none"}),
    ("帮我查一下明天去杭州的航班", THU, SHANGHAI, {"action": "none"}),
    ("查一下明天上海到北京的高铁", THU, SHANGHAI, {"action": "none"}),
    ("帮我查下后天的航班几点", THU, SHANGHAI, {"action": "none"}),
    ("看看周末北京的天气", THU, SHANGHAI, {"action": "none"}),
    ("搜一下周六的电影票", NY, NEW_YORK, {"action": "none"}),
    ("后天的会在哪开来着", THU, SHANGHAI, {"action": "query", "range": ("2026-06-20 00:00", "2026-06-21 00:00")}),
    ("明天的会几点开来着", THU, SHANGHAI, {"action": "query", "range": ("2026-06-19 00:00", "2026-06-20 00:00")}),
    ("明天的面试是几点", THU, SHANGHAI, {"action": "query", "range": ("2026-06-19 00:00", "2026-06-20 00:00")}),
    ("周四有空吗", MON, SHANGHAI, {"action": "query", "range": ("2026-06-18 00:00", "2026-06-19 00:00")}),
    ("我这周五忙不忙", THU, SHANGHAI, {"action": "query", "range": ("2026-06-19 00:00", "2026-06-20 00:00")}),
    ("查一下我明天的航班几点", THU, SHANGHAI, {"action": "query",
                                          "range": ("2026-06-19 00:00", "2026-06-20 00:00")}),
    ("周六的聚餐在哪儿来着", NY, NEW_YORK, {"action": "query", "range": ("2026-03-07 00:00", "2026-03-08 00:00")}),
    ("你能提醒我明天9点开会吗", THU, SHANGHAI, {"action": "create", "title": "开会", "at": "2026-06-19 09:00"}),
    ("能不能每天提醒我喝水", THU, SHANGHAI, {"action": "create", "title": "喝水", "rrule": "FREQ=DAILY"}),
    ("明天下午三点坐高铁去上海", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 15:00"}),
    ("明天提醒我订酒店", THU, SHANGHAI, {"action": "create", "title": "订酒店"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_agent_boundary(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
