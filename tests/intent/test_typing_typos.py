"""Real typing: pinyin-input typos, homophones and slang, each fixed only in its context."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import BERLIN, SHANGHAI, explain, mismatches, ref

from intent import parse

THU = ref("2026-06-18 10:00")
SUN_NIGHT = ref("2026-11-29 21:00")
BERLIN_SAT = ref("2026-10-24 09:00", BERLIN)

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("名天下午三点题醒我开会", THU, SHANGHAI, {"action": "create", "title": "开会", "at": "2026-06-19 15:00"}),
    ("明天下五3点开会", THU, SHANGHAI, {"action": "create", "title": "开会", "at": "2026-06-19 15:00"}),
    ("明天上五十点去银行", THU, SHANGHAI, {"action": "create", "title": "去银行", "at": "2026-06-19 10:00"}),
    ("5分钟后在提醒我", THU, SHANGHAI, {"action": "snooze", "remind": "2026-06-18 10:05"}),
    ("过会在叫我", THU, SHANGHAI, {"action": "snooze", "asks": ["snooze_duration"]}),
    ("明天俩点去取快递", THU, SHANGHAI, {"action": "create", "title": "取快递", "at": "2026-06-19 14:00"}),
    ("俩小时后提醒我关火", THU, SHANGHAI, {"action": "create", "at": "2026-06-18 12:00"}),
    ("一个钟后提醒我收衣服", THU, SHANGHAI, {"action": "create", "title": "收衣服", "at": "2026-06-18 11:00"}),
    ("两个钟后叫我", SUN_NIGHT, SHANGHAI, {"action": "create", "at": "2026-11-29 23:00"}),
    ("明儿个早上8点叫我", THU, SHANGHAI, {"action": "create", "at": "2026-06-19 08:00"}),
    ("后儿个上午十点面试", THU, SHANGHAI, {"action": "create", "title": "面试", "at": "2026-06-20 10:00"}),
    ("今儿个晚上7点吃饭", THU, SHANGHAI, {"action": "create", "at": "2026-06-18 19:00"}),
    ("下礼拜三交报告", THU, SHANGHAI, {"action": "create", "title": "交报告", "at": "2026-06-24 00:00"}),
    ("明早8点题醒我吃药", THU, SHANGHAI, {"action": "create", "title": "吃药", "at": "2026-06-19 08:00"}),
    ("名天下五俩点半体醒我去接孩子", BERLIN_SAT, BERLIN, {"action": "create", "at": "2026-10-25 14:30"}),
    ("下五子棋", THU, SHANGHAI, {"action": "none"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_typos_and_slang(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
