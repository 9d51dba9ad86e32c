"""Real typing: no-reminder variants suppress the meeting default and never ask for a time.

A negation before a reminder verb (不用叫我, 这次别提醒), the reminder waived after it (提醒就免了,
提醒不用了) and "just note it" (记着就行) all mean explicit_no_reminder.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
NY = ref("2026-03-06 18:00", NEW_YORK)

_NO = {"no_reminder": True, "remind": None, "asks": []}
CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("明天下午三点开会，提醒就免了", THU, SHANGHAI, {"action": "create", "title": "开会", "at": "2026-06-19 15:00",
                                            **_NO}),
    ("不用叫我，记着就行，周五交房租", THU, SHANGHAI, {"action": "create", "title": "交房租", **_NO}),
    ("这次别提醒，明天上午十点开会", THU, SHANGHAI, {"action": "create", "title": "开会", "at": "2026-06-19 10:00",
                                            **_NO}),
    ("周五交房租，记着就行", THU, SHANGHAI, {"action": "create", "title": "交房租", **_NO}),
    ("明天三点开会 提醒不用了", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 15:00", **_NO}),
    ("下周一上午十点面试，甭提醒了", THU, SHANGHAI, {"action": "create", "at": "2026-06-22 10:00", **_NO}),
    ("后天的周会记一下就好，不用通知我", THU, SHANGHAI, {"action": "create", **_NO}),
    ("周三下午两点例会 闹钟就算了", THU, SHANGHAI, {"action": "create", "at": "2026-06-24 14:00", **_NO}),
    ("明天上午9点开会，别催我", NY, NEW_YORK, {"action": "create", "at": "2026-03-07 09:00", **_NO}),
    ("tomorrow 3pm 开会，提醒就免了", NY, NEW_YORK, {"action": "create", "at": "2026-03-07 15:00", **_NO}),
    ("别忘了提醒我明天交房租", THU, SHANGHAI, {"action": "create", "title": "交房租", "no_reminder": False}),
    ("不用提醒我交水费了", THU, SHANGHAI, {"action": "cancel", "target": "交水费"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_no_reminder_variants(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
