"""Real typing: casual completions, cancellations and snoozes.

Completion is a verb with a result complement and 了 (交上去了, 取到了), 已(经) + verb, or noun + verb + 了;
cancellation is 不(再) + verb (+ object) + 了 at the end, or 不用提醒我 X 了; snooze fillers (哈, 等下, 回头)
are not title words.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
SUN_NIGHT = ref("2026-11-29 21:00")
NY = ref("2026-03-07 23:30", NEW_YORK)  # the night DST starts

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("材料已经交上去了", THU, SHANGHAI, {"action": "complete", "target": "材料"}),
    ("报告搞定了👌", THU, SHANGHAI, {"action": "complete", "target": "报告"}),
    ("快递取到了", THU, SHANGHAI, {"action": "complete", "target": "快递"}),
    ("水费交了", THU, SHANGHAI, {"action": "complete", "target": "水费"}),
    ("房租付过了哈", THU, SHANGHAI, {"action": "complete", "target": "房租"}),
    ("体检报告拿回来了", THU, SHANGHAI, {"action": "complete", "target": "体检报告"}),
    ("周报已提交✅", SUN_NIGHT, SHANGHAI, {"action": "complete", "target": "周报"}),
    ("合同签好了", SUN_NIGHT, SHANGHAI, {"action": "complete", "target": "合同"}),
    ("作业写完啦", SUN_NIGHT, SHANGHAI, {"action": "complete", "target": "作业"}),
    ("周六的羽毛球不打了", THU, SHANGHAI, {"action": "cancel", "target": "羽毛球", "target_date": "2026-06-20"}),
    ("那个续费提醒不要了", THU, SHANGHAI, {"action": "cancel", "target": "续费"}),
    ("明天不去健身了", THU, SHANGHAI, {"action": "cancel", "target": "健身", "target_date": "2026-06-19"}),
    ("不用提醒我交水费了", THU, SHANGHAI, {"action": "cancel", "target": "交水费"}),
    ("周末的聚餐不去了", SUN_NIGHT, SHANGHAI, {"action": "cancel", "target": "聚餐"}),
    ("下午的瑜伽课不上了吧", THU, SHANGHAI, {"action": "cancel", "target": "瑜伽课"}),
    ("明天的电影不看了", NY, NEW_YORK, {"action": "cancel", "target": "电影", "target_date": "2026-03-08"}),
    ("取快递那个不用了", THU, SHANGHAI, {"action": "cancel", "target": "取快递"}),
    ("下周一的打卡不用了", THU, SHANGHAI, {"action": "cancel", "target": "打卡", "target_date": "2026-06-22"}),
    ("周五的聚餐不需要了", THU, SHANGHAI, {"action": "cancel", "target": "聚餐", "target_date": "2026-06-19"}),
    ("好的不用了", THU, SHANGHAI, {"action": "none"}),
    ("看看这周", THU, SHANGHAI, {"action": "query", "range": ("2026-06-15 00:00", "2026-06-22 00:00")}),
    ("查一下明天", THU, SHANGHAI, {"action": "query", "range": ("2026-06-19 00:00", "2026-06-20 00:00")}),
    ("看看明天的天气", THU, SHANGHAI, {"action": "none"}),
    ("我觉得不用了", THU, SHANGHAI, {"action": "none"}),
    ("过一刻钟再叫我一下哈", THU, SHANGHAI, {"action": "snooze", "remind": "2026-06-18 10:15"}),
    ("等下再提醒我", THU, SHANGHAI, {"action": "snooze", "asks": ["snooze_duration"]}),
    ("知道了，10分钟后再提醒我", THU, SHANGHAI, {"action": "snooze", "remind": "2026-06-18 10:10"}),
    ("回头再叫我吧", SUN_NIGHT, SHANGHAI, {"action": "snooze", "asks": ["snooze_duration"]}),
    ("嗯嗯 半小时后再喊我", SUN_NIGHT, SHANGHAI, {"action": "snooze", "remind": "2026-11-29 21:30"}),
    ("收到~一会儿再提醒我一次", THU, SHANGHAI, {"action": "snooze", "asks": ["snooze_duration"]}),
    ("今天不舒服了", THU, SHANGHAI, {"action": "none"}),
    ("明天开会，不用提醒了", THU, SHANGHAI, {"action": "create", "no_reminder": True}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_casual_followups(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
