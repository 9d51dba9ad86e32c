"""Real typing: hours and minutes are elapsed time across DST; days keep the wall clock."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import BERLIN, NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

NY_SPRING = ref("2026-03-08 00:30", NEW_YORK)  # 02:00 EST → 03:00 EDT tonight
NY_FALL = ref("2026-10-31 23:30", NEW_YORK)  # 02:00 EDT → 01:00 EST tonight
BERLIN_SPRING = ref("2026-03-29 01:30", BERLIN)  # 02:00 CET → 03:00 CEST
NY_DAY_BEFORE = ref("2026-03-07 10:00", NEW_YORK)
SH = ref("2026-06-18 10:00")

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("三个小时后提醒我吃药", NY_SPRING, NEW_YORK, {"action": "create", "at": "2026-03-08 04:30"}),
    ("48小时后提醒我取快递", NY_SPRING, NEW_YORK, {"action": "create", "at": "2026-03-10 01:30"}),
    ("48小时后提醒我取快递", NY_DAY_BEFORE, NEW_YORK, {"action": "create", "at": "2026-03-09 11:00"}),
    ("两个半小时后叫我", NY_SPRING, NEW_YORK, {"action": "create", "at": "2026-03-08 04:00"}),
    ("90分钟后提醒我关火", NY_SPRING, NEW_YORK, {"action": "create", "at": "2026-03-08 03:00"}),
    ("3天后提醒我交电费", NY_SPRING, NEW_YORK, {"action": "create", "at": "2026-03-11 00:00"}),
    ("三个小时后提醒我吃药", NY_FALL, NEW_YORK, {"action": "create", "at": "2026-11-01 01:30"}),
    ("一个小时后提醒我收衣服", NY_FALL, NEW_YORK, {"action": "create", "at": "2026-11-01 00:30"}),
    ("24小时后提醒我续费", NY_FALL, NEW_YORK, {"action": "create", "at": "2026-11-01 22:30"}),
    ("明天这个时候提醒我", NY_FALL, NEW_YORK, {"action": "create"}),
    ("一个半小时后提醒我出门", BERLIN_SPRING, BERLIN, {"action": "create", "at": "2026-03-29 04:00"}),
    ("两小时后再提醒我", BERLIN_SPRING, BERLIN, {"action": "snooze", "remind": "2026-03-29 04:30"}),
    ("三个小时后提醒我吃药", SH, SHANGHAI, {"action": "create", "at": "2026-06-18 13:00"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[f"{c[0]}@{c[1]:%m-%d %H:%M %Z}" for c in CASES])
def test_elapsed_durations(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
