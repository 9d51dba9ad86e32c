"""Real typing: holiday and calendar arithmetic.

The holiday is the occurrence whose official break is current or next; 节后/X后第N个工作日 counts workdays
after the break, X第N天 counts days of the break; 年前 (a deadline) is the last workday before the Spring
Festival break, 年底前 is December 31; 每月最后一个周五 is BYDAY=-1FR.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import SHANGHAI, explain, mismatches, ref

from intent import parse

JAN = ref("2026-01-10 10:00")
MAR = ref("2026-03-01 10:00")
IN_BREAK = ref("2026-10-03 10:00")  # inside the National Day break
THU = ref("2026-06-18 10:00")

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("春节后第一个工作日提醒我交报销单", JAN, SHANGHAI, {"action": "create", "title": "交报销单",
                                               "at": "2026-02-24 00:00"}),
    ("节后第一天上午9点开会", JAN, SHANGHAI, {"action": "create", "at": "2026-02-24 09:00",
                                     "remind": "2026-02-24 08:00"}),
    ("年前把报告交了", JAN, SHANGHAI, {"action": "create", "title": "交报告", "at": "2026-02-14 00:00"}),
    ("过年前记得把房租交了", JAN, SHANGHAI, {"action": "create", "at": "2026-02-14 00:00"}),
    ("年底前要把年假休完", JAN, SHANGHAI, {"action": "create", "title": "休年假", "at": "2026-12-31 00:00"}),
    ("五一第二天去爬山", MAR, SHANGHAI, {"action": "create", "title": "去爬山", "at": "2026-05-02 00:00"}),
    ("五一后第一个工作日交材料", MAR, SHANGHAI, {"action": "create", "at": "2026-05-06 00:00"}),
    ("节后第一天提醒我上班带饭", MAR, SHANGHAI, {"action": "create", "at": "2026-04-07 00:00"}),
    ("国庆期间有什么安排", THU, SHANGHAI, {"action": "query", "range": ("2026-10-01 00:00", "2026-10-08 00:00")}),
    ("国庆节后第一个工作日交材料", IN_BREAK, SHANGHAI, {"action": "create", "at": "2026-10-08 00:00"}),
    ("十一第三天下午两点去看展", THU, SHANGHAI, {"action": "create", "at": "2026-10-03 14:00"}),
    ("端午节后第一个工作日提醒我续签合同", THU, SHANGHAI, {"action": "create", "at": "2026-06-22 00:00"}),
    ("每月最后一个周五下午3点开例会", JAN, SHANGHAI, {"action": "create", "at": "2026-01-30 15:00",
                                          "rrule": "FREQ=MONTHLY;BYDAY=-1FR", "remind": "2026-01-30 14:00"}),
    ("每个月第二个周三提醒我交水电费", THU, SHANGHAI, {"action": "create", "at": "2026-07-08 00:00",
                                          "rrule": "FREQ=MONTHLY;BYDAY=2WE"}),
    ("三年前的今天", THU, SHANGHAI, {"action": "none"}),
    ("明天把车洗了", JAN, SHANGHAI, {"action": "create", "title": "洗车", "at": "2026-01-11 00:00"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_calendar_arithmetic(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
