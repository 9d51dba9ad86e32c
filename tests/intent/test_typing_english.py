"""Real typing: English mixed in. Time words, remind and deadline are rewritten to Chinese before
the rules run; meeting, call with, interview, standup, sync, 1on1 are meetings (default reminder)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
NY = ref("2026-03-06 18:00", NEW_YORK)

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("tomorrow 9am 开会", THU, SHANGHAI, {"action": "create", "kind": "event", "at": "2026-06-19 09:00",
                                         "remind": "2026-06-19 08:00"}),
    ("tmr 3pm 提醒我交报告", THU, SHANGHAI, {"action": "create", "title": "交报告", "at": "2026-06-19 15:00"}),
    ("next Mon 下午两点 interview", THU, SHANGHAI, {"action": "create", "kind": "event", "at": "2026-06-22 14:00",
                                                  "remind": "2026-06-22 13:00"}),
    ("3pm call with 客户", THU, SHANGHAI, {"action": "create", "kind": "event", "at": "2026-06-18 15:00",
                                         "remind": "2026-06-18 14:00"}),
    ("周五 ddl 交方案", THU, SHANGHAI, {"action": "create", "kind": "task", "title": "交方案",
                                   "at": "2026-06-19 00:00"}),
    ("remind 我明天8点吃药", THU, SHANGHAI, {"action": "create", "title": "吃药", "at": "2026-06-19 08:00",
                                        "remind": "2026-06-19 08:00"}),
    ("明天10点 standup", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 10:00", "remind": "2026-06-19 09:00"}),
    ("tmr下午3点 meeting", THU, SHANGHAI, {"action": "create", "title": "meeting", "at": "2026-06-19 15:00",
                                         "remind": "2026-06-19 14:00"}),
    ("明天 3pm 和老板 1on1", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 15:00",
                                          "remind": "2026-06-19 14:00"}),
    ("remind me tomorrow 9am 交房租", THU, SHANGHAI, {"action": "create", "title": "交房租",
                                                   "at": "2026-06-19 09:00"}),
    ("下周一 deadline 报销", THU, SHANGHAI, {"action": "create", "kind": "task", "at": "2026-06-22 00:00"}),
    ("today 5pm 健身", THU, SHANGHAI, {"action": "create", "title": "健身", "at": "2026-06-18 17:00"}),
    ("Fri 10:30am team sync", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 10:30",
                                             "remind": "2026-06-19 09:30"}),
    ("周三 7pm dinner with Tom", THU, SHANGHAI, {"action": "create", "at": "2026-06-24 19:00", "remind": None}),
    ("tonight 8pm 提醒我收拾行李", NY, NEW_YORK, {"action": "create", "at": "2026-03-06 20:00"}),
    ("next Tue 12pm lunch with Amy", NY, NEW_YORK, {"action": "create", "at": "2026-03-10 12:00"}),
    ("明天下午三点面试", THU, SHANGHAI, {"action": "create", "kind": "event", "remind": "2026-06-19 14:00"}),
    ("ok 谢谢", THU, SHANGHAI, {"action": "none"}),
    # the day after the clock, as English says it, and "at"/"on" before the time words
    ("remind me to call mom at 8pm tomorrow", THU, SHANGHAI, {"action": "create", "title": "call mom",
                                                             "at": "2026-06-19 20:00"}),
    ("meeting with Alice at 3pm on Friday", THU, SHANGHAI, {"action": "create", "title": "meeting with Alice",
                                                           "at": "2026-06-19 15:00"}),
    ("call Bob tomorrow at 10am", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 10:00"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_mixed_english(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
