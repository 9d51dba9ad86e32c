"""End-to-end cases at other reference times: year and month ends, late night, another timezone."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import explain, needs_engine

from intent import parse, to_json

CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("2026-12-31T23:30:00+08:00", "Asia/Shanghai", "明天上午九点提醒我带材料",
     {"action": "create", "remind_at": "2027-01-01T09:00:00+08:00"}),
    ("2026-12-31T23:30:00+08:00", "Asia/Shanghai", "看看下个月的行程",
     {"range_start": "2027-01-01T00:00:00+08:00", "range_end": "2027-02-01T00:00:00+08:00"}),
    ("2026-12-31T23:30:00+08:00", "Asia/Shanghai", "下周有什么会",
     {"range_start": "2027-01-04T00:00:00+08:00", "range_end": "2027-01-11T00:00:00+08:00", "filter_kind": "event"}),
    ("2026-12-31T23:30:00+08:00", "Asia/Shanghai", "10分钟后再提醒我",
     {"action": "snooze", "remind_at": "2026-12-31T23:40:00+08:00"}),
    ("2026-12-31T23:30:00+08:00", "Asia/Shanghai", "半小时后提醒我关火",
     {"action": "create", "remind_at": "2027-01-01T00:00:00+08:00"}),
    ("2027-02-28T00:30:00+08:00", "Asia/Shanghai", "月底前要把报销单交了",
     {"action": "create", "kind": "task", "due_at": "2027-02-28T00:00:00+08:00", "all_day": True}),
    ("2027-02-28T00:30:00+08:00", "Asia/Shanghai", "明早8点提醒我跑步",
     {"kind": "task", "remind_at": "2027-03-01T08:00:00+08:00"}),
    ("2027-02-28T00:30:00+08:00", "Asia/Shanghai", "看看我的行程计划",
     {"range_start": "2027-02-28T00:00:00+08:00", "range_end": "2027-03-07T00:00:00+08:00"}),
    ("2026-06-18T23:50:00+08:00", "Asia/Shanghai", "8点提醒我吃药", {"remind_at": "2026-06-19T08:00:00+08:00"}),
    ("2026-06-18T23:50:00+08:00", "Asia/Shanghai", "三点开会",
     {"start_at": "2026-06-19T15:00:00+08:00", "remind_at": "2026-06-19T14:00:00+08:00"}),
    ("2026-06-18T23:50:00+08:00", "Asia/Shanghai", "明天早上再提醒我",
     {"action": "snooze", "remind_at": "2026-06-19T08:00:00+08:00"}),
    ("2026-03-01T00:10:00-05:00", "America/New_York", "看看我的行程计划",
     {"range_start": "2026-03-01T00:00:00-05:00", "range_end": "2026-03-08T00:00:00-05:00"}),
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str) and "T" in b:
        return datetime.fromisoformat(a) == datetime.fromisoformat(b)
    return bool(a == b)


@needs_engine
@pytest.mark.parametrize(("ref", "tz", "text", "expect"), CASES)
def test_boundary(ref: str, tz: str, text: str, expect: dict[str, Any]) -> None:
    it = parse(text, now=datetime.fromisoformat(ref), tz=ZoneInfo(tz))
    got = to_json(it)
    for key, want in expect.items():
        value = (got.get("reminder") or {}).get("remind_at") if key == "remind_at" else got.get(key)
        assert _same(value, want), f"{text} @ {ref}: {key}={value!r}, want {want!r}; {explain(it)}"
