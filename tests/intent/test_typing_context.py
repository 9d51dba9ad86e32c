"""Real typing: fillers, hesitation and a context clause before the request.

A day said without a clock takes the next clock said after it, across fillers and clauses; a clock that
names its own day, or a day in the clause that asks (提醒我/记一下), wins over an earlier context day.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import needs_engine
from typing_helpers import BERLIN, NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import parse

MON = ref("2026-06-15 09:00")
THU = ref("2026-06-18 10:00")
SUN_NIGHT = ref("2026-11-29 21:00")
NY_FRI = ref("2026-03-06 18:00", NEW_YORK)
BERLIN_FRI = ref("2026-03-27 20:00", BERLIN)  # EU summer time starts Sunday 03-29

CASES: list[tuple[str, Any, ZoneInfo, dict[str, Any]]] = [
    ("额…就是…大后天…上午十点吧…去银行", MON, SHANGHAI, {"action": "create", "title": "去银行",
                                                "at": "2026-06-18 10:00"}),
    ("明天上午帮我记个事，十点要去银行", MON, SHANGHAI, {"action": "create", "title": "去银行",
                                            "at": "2026-06-16 10:00"}),
    ("老板今天在群里说了，周四下午两点开季度会，提前提醒我", MON, SHANGHAI, {
        "action": "create", "kind": "event", "title": "开季度会", "at": "2026-06-18 14:00",
        "remind": "2026-06-18 13:00"}),
    ("明天就放假了，提醒我今晚八点收拾行李", MON, SHANGHAI, {"action": "create", "title": "收拾行李",
                                              "at": "2026-06-15 20:00", "remind": "2026-06-15 20:00"}),
    ("【通知】定于12月3日（周四）上午9:30在三楼会议室召开安全生产会议", THU, SHANGHAI, {
        "action": "create", "kind": "event", "title_has": "安全生产会议", "at": "2026-12-03 09:30",
        "remind": "2026-12-03 08:30"}),
    ("群里通知：12月5号（周六）上午10点开家长会", THU, SHANGHAI, {"action": "create", "title_has": "家长会",
                                                   "at": "2026-12-05 10:00"}),
    ("嗯…明天…下午三点吧…开个会", MON, SHANGHAI, {"action": "create", "kind": "event",
                                       "at": "2026-06-16 15:00", "remind": "2026-06-16 14:00"}),
    ("那个…后天早上…八点…提醒我去体检", MON, SHANGHAI, {"action": "create", "at": "2026-06-17 08:00",
                                             "remind": "2026-06-17 08:00"}),
    ("明天，八点，去机场接人", SUN_NIGHT, SHANGHAI, {"action": "create", "at": "2026-11-30 08:00"}),
    ("下周三上午记得提醒我，九点半要交材料", SUN_NIGHT, SHANGHAI, {"action": "create", "title": "交材料",
                                                "at": "2026-12-02 09:30"}),
    ("周五晚上帮我留个时间，7点和老王吃饭", MON, SHANGHAI, {"action": "create", "at": "2026-06-19 19:00"}),
    ("明天要交报告，截止时间是晚上8点", MON, SHANGHAI, {"action": "create", "title": "交报告",
                                           "at": "2026-06-16 20:00"}),
    ("今天好累啊，明早7点叫我起床", MON, SHANGHAI, {"action": "create", "at": "2026-06-16 07:00"}),
    ("妈妈说下周六回来，提醒我周五下午去超市买菜", MON, SHANGHAI, {"action": "create", "title": "去超市买菜",
                                                  "at": "2026-06-19 00:00"}),
    ("收到，那就定在后天下午两点吧，到时提醒我", MON, SHANGHAI, {"action": "create", "at": "2026-06-17 14:00",
                                                 "remind": "2026-06-17 14:00"}),
    ("大后天，20:00去银行", MON, SHANGHAI, {"action": "create", "at": "2026-06-18 20:00"}),
    ("额 明天…上午十点…去看牙", NY_FRI, NEW_YORK, {"action": "create", "at": "2026-03-07 10:00"}),
    ("后天…早上九点…送孩子去学校", BERLIN_FRI, BERLIN, {"action": "create", "at": "2026-03-29 09:00"}),
    ("晚上请客户吃饭7点", MON, SHANGHAI, {"action": "create", "at": "2026-06-15 19:00"}),
    ("明天晚上，8点，吃饭", MON, SHANGHAI, {"action": "create", "title": "吃饭", "at": "2026-06-16 20:00"}),
    ("好的，明天下午三点开会", MON, SHANGHAI, {"action": "create", "title": "开会", "at": "2026-06-16 15:00"}),
    ("明天下午3点开会，2点半提醒我", MON, SHANGHAI, {"action": "create", "at": "2026-06-16 15:00",
                                        "remind": "2026-06-16 14:30"}),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), CASES, ids=[c[0] for c in CASES])
def test_clock_finds_its_day(text: str, now: Any, tz: ZoneInfo, want: dict[str, Any]) -> None:
    it = parse(text, now=now, tz=tz)
    assert not mismatches(it, want, tz), (mismatches(it, want, tz), explain(it))
