"""Real typing: weekday lists (每周一、三 / 每周二和周五 / 周一三五) are one weekly set; a day
followed by 点/时 is a clock (周一三点 = Monday 15:00), and a clock said after a recurrence joins it."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
SUN_NIGHT = ref("2026-11-29 21:00")
NY = ref("2026-03-06 18:00", NEW_YORK)

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("每周一、三晚上8点打球", THU, SHANGHAI, {"action": "create", "title": "打球", "at": "2026-06-22 20:00",
                                        "rrule": "FREQ=WEEKLY;BYDAY=MO,WE"}),
    ("每周二和周五下午3点开例会", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 15:00",
                                          "rrule": "FREQ=WEEKLY;BYDAY=TU,FR", "remind": "2026-06-19 14:00"}),
    ("周一三五早上7点跑步", THU, SHANGHAI, {"action": "create", "title": "跑步", "at": "2026-06-19 07:00",
                                      "rrule": "FREQ=WEEKLY;BYDAY=MO,WE,FR"}),
    ("每周一三五晚上提醒我练琴", THU, SHANGHAI, {"action": "create", "title": "练琴",
                                         "rrule": "FREQ=WEEKLY;BYDAY=MO,WE,FR"}),
    ("每周二、四、六上午10点游泳", THU, SHANGHAI, {"action": "create", "at": "2026-06-18 10:00",
                                           "rrule": "FREQ=WEEKLY;BYDAY=TU,TH,SA"}),
    ("每个周一和周三提醒我倒垃圾", THU, SHANGHAI, {"action": "create", "title": "倒垃圾",
                                          "rrule": "FREQ=WEEKLY;BYDAY=MO,WE"}),
    ("周二四晚上7点上课", THU, SHANGHAI, {"action": "create", "title": "上课", "at": "2026-06-18 19:00",
                                     "rrule": "FREQ=WEEKLY;BYDAY=TU,TH"}),
    ("每星期一、星期四下午4点接孩子", SUN_NIGHT, SHANGHAI, {"action": "create", "at": "2026-11-30 16:00",
                                                "rrule": "FREQ=WEEKLY;BYDAY=MO,TH"}),
    ("每礼拜二跟礼拜五早上8点晨跑", NY, NEW_YORK, {"action": "create", "at": "2026-03-10 08:00",
                                            "rrule": "FREQ=WEEKLY;BYDAY=TU,FR"}),
    ("每周六日早上9点去游泳", THU, SHANGHAI, {"action": "create", "at": "2026-06-20 09:00",
                                        "rrule": "FREQ=WEEKLY;BYDAY=SA,SU"}),
    ("每周一，三点开会", THU, SHANGHAI, {"action": "create", "at": "2026-06-22 15:00", "rrule": "FREQ=WEEKLY;BYDAY=MO",
                                   "remind": "2026-06-22 14:00"}),
    ("每天早上，7点提醒我吃药", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 07:00", "rrule": "FREQ=DAILY"}),
    ("周一三点开会", THU, SHANGHAI, {"action": "create", "at": "2026-06-22 15:00", "rrule": None}),
    ("周五六点下班", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 06:00", "rrule": None}),
    ("下周二四点面试", THU, SHANGHAI, {"action": "create", "at": "2026-06-23 16:00", "rrule": None}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_weekday_lists(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
