"""Real typing: digest wording.

Subscribe = a send verb towards the user (发/推/告诉 … 给我) + an agenda noun (安排, 待办, 要做的事) + a
recurrence; when 提醒我 comes first the user is the actor (提醒我发日报 is a task). Unsubscribe = a stop
verb + a recurrence word + an agenda noun, or the digest's name + a stop word.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
LATE = ref("2026-06-18 22:30")
NY = ref("2026-03-07 08:00", NEW_YORK)

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("每天晚上9点把第二天的安排发给我", THU, SHANGHAI, {"action": "subscribe_digest", "time": "21:00",
                                              "rrule": "FREQ=DAILY", "digest_kind": "todo_next_day"}),
    ("每天晚上9点把第二天的安排发给我", LATE, SHANGHAI, {"action": "subscribe_digest", "time": "21:00"}),
    ("以后每天早上推一下今天要做的事", THU, SHANGHAI, {"action": "subscribe_digest", "time": None,
                                            "asks": ["digest_time"], "digest_kind": "todo_day"}),
    ("每天早上7点给我发今天的待办", THU, SHANGHAI, {"action": "subscribe_digest", "time": "07:00"}),
    ("工作日每天早上7点半推送今天的日程", THU, SHANGHAI, {"action": "subscribe_digest", "time": "07:30"}),
    ("每晚十点告诉我明天有什么安排", NY, NEW_YORK, {"action": "subscribe_digest", "time": "22:00",
                                          "digest_kind": "todo_next_day"}),
    ("每周一早上8点把这周的安排发我", THU, SHANGHAI, {"action": "subscribe_digest", "time": "08:00",
                                            "rrule": "FREQ=WEEKLY;BYDAY=MO", "digest_kind": "todo_week"}),
    ("早报停了吧", THU, SHANGHAI, {"action": "unsubscribe_digest"}),
    ("退订每日待办", THU, SHANGHAI, {"action": "unsubscribe_digest"}),
    ("取消每日待办", THU, SHANGHAI, {"action": "unsubscribe_digest"}),
    ("每天的推送关了吧", THU, SHANGHAI, {"action": "unsubscribe_digest"}),
    ("以后别给我发早报了", NY, NEW_YORK, {"action": "unsubscribe_digest"}),
    ("不要再推送每天的安排了", THU, SHANGHAI, {"action": "unsubscribe_digest"}),
    ("每天下午5点提醒我发日报", THU, SHANGHAI, {"action": "create", "title": "发日报", "at": "2026-06-18 17:00"}),
    ("每周五下午提醒我整理本周的工作计划", THU, SHANGHAI, {"action": "create", "title": "整理工作计划",
                                                "rrule": "FREQ=WEEKLY;BYDAY=FR"}),
    ("取消明天的会", THU, SHANGHAI, {"action": "cancel", "target_date": "2026-06-19"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_digest_wording(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
