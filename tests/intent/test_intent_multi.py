"""Several requests in one message (docs/conversation.md#several-requests): `parse_all`, table-driven."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from intent_helpers import NOW, TZ, at, needs_engine
from typing_helpers import NEW_YORK, SHANGHAI, explain, mismatches, ref

from intent import Intent, parse, parse_all
from intent.model import CreateIntent, UpdateIntent

THU = ref("2026-06-18 10:00")  # Thursday morning, Shanghai
SUN_NIGHT = ref("2026-11-29 21:00")  # Sunday evening, Shanghai
NY = ref("2026-03-06 18:00", NEW_YORK)  # Friday evening; DST starts Sunday 03-08

Case = tuple[str, Any, ZoneInfo, list[dict[str, Any]]]

SPLIT: list[Case] = [
    ("明天9点提醒我交房租，下午3点提醒我取快递", THU, SHANGHAI, [
        {"action": "create", "title": "交房租", "at": "2026-06-19 09:00", "remind": "2026-06-19 09:00"},
        {"action": "create", "title": "取快递", "at": "2026-06-19 15:00", "remind": "2026-06-19 15:00"}]),
    ("明天三点开会，顺便看看明天还有什么安排", THU, SHANGHAI, [
        {"action": "create", "kind": "event", "title": "开会", "at": "2026-06-19 15:00", "remind": "2026-06-19 14:00"},
        {"action": "query", "range": ("2026-06-19 00:00", "2026-06-20 00:00")}]),
    ("明天三点开会顺便看看还有什么安排", THU, SHANGHAI, [
        {"action": "create", "at": "2026-06-19 15:00"},
        {"action": "query", "range": ("2026-06-19 00:00", "2026-06-20 00:00")}]),
    ("明天三点开会，五点去接孩子", THU, SHANGHAI, [
        {"action": "create", "title": "开会", "at": "2026-06-19 15:00"},
        {"action": "create", "title": "接孩子", "at": "2026-06-19 17:00"}]),
    ("明天9点交房租 下午3点取快递", THU, SHANGHAI, [
        {"action": "create", "title": "交房租", "at": "2026-06-19 09:00"},
        {"action": "create", "title": "取快递", "at": "2026-06-19 15:00"}]),
    ("周五交报告，下周一下午两点面试", THU, SHANGHAI, [
        {"action": "create", "title": "交报告", "at": "2026-06-19 00:00"},
        {"action": "create", "title": "面试", "at": "2026-06-22 14:00"}]),
    ("明天早上8点提醒我吃药，晚上8点也要", THU, SHANGHAI, [
        {"action": "create", "title": "吃药", "at": "2026-06-19 08:00"},
        {"action": "create", "title": "吃药", "at": "2026-06-19 20:00", "remind": "2026-06-19 20:00"}]),
    ("下午三点提醒我开会，另外明天的会改到四点", THU, SHANGHAI, [
        {"action": "create", "at": "2026-06-18 15:00"},
        {"action": "update", "target": "会", "target_date": "2026-06-19", "at": "2026-06-19 16:00"}]),
    ("周五的羽毛球取消，周六下午两点约了打球", THU, SHANGHAI, [
        {"action": "cancel", "target": "羽毛球", "target_date": "2026-06-19"},
        {"action": "create", "title_has": "打球", "at": "2026-06-20 14:00"}]),
    ("后天上午十点体检；下午两点提醒我去拿报告", THU, SHANGHAI, [
        {"action": "create", "title": "体检", "at": "2026-06-20 10:00"},
        {"action": "create", "title": "拿报告", "at": "2026-06-20 14:00"}]),
    ("明天10点提醒我交电费。然后看看后天有什么安排", THU, SHANGHAI, [
        {"action": "create", "title": "交电费", "at": "2026-06-19 10:00"},
        {"action": "query", "range": ("2026-06-20 00:00", "2026-06-21 00:00")}]),
    ("明早8点叫我起床，9点半提醒我开会", SUN_NIGHT, SHANGHAI, [
        {"action": "create", "at": "2026-11-30 08:00"},
        {"action": "create", "title": "开会", "at": "2026-11-30 09:30"}]),
    ("12月3号下午两点面试，4点提醒我给妈妈打电话", SUN_NIGHT, SHANGHAI, [
        {"action": "create", "title": "面试", "at": "2026-12-03 14:00"},
        {"action": "create", "title_has": "打电话", "at": "2026-12-03 16:00"}]),
    ("今晚10点提醒我洗衣服，明天早上7点提醒我晾衣服", SUN_NIGHT, SHANGHAI, [
        {"action": "create", "title": "洗衣服", "at": "2026-11-29 22:00"},
        {"action": "create", "title": "晾衣服", "at": "2026-11-30 07:00"}]),
    ("下周三上午10点开会，另外帮我备忘：周五交周报", SUN_NIGHT, SHANGHAI, [
        {"action": "create", "title": "开会", "at": "2026-12-02 10:00"},
        {"action": "create", "title": "交周报", "at": "2026-12-04 00:00"}]),
    ("周一早上9点提醒我交报告，顺便查一下周一还有什么会", NY, NEW_YORK, [
        {"action": "create", "title": "交报告", "at": "2026-03-09 09:00", "remind": "2026-03-09 09:00"},
        {"action": "query", "range": ("2026-03-09 00:00", "2026-03-10 00:00")}]),
    ("明天上午10点面试，下午2点体检，晚上请客户吃饭7点", THU, SHANGHAI, [
        {"action": "create", "title": "面试", "at": "2026-06-19 10:00"},
        {"action": "create", "title": "体检", "at": "2026-06-19 14:00"},
        {"action": "create", "title_has": "吃饭", "at": "2026-06-19 19:00"}]),
    ("明天9点提醒我交房租，下午3点提醒我取快递，晚上8点提醒我倒垃圾", THU, SHANGHAI, [
        {"action": "create", "title": "交房租", "at": "2026-06-19 09:00"},
        {"action": "create", "title": "取快递", "at": "2026-06-19 15:00"},
        {"action": "create", "title": "倒垃圾", "at": "2026-06-19 20:00"}]),
    ("周五交报告，周六交房租，周日交水费", THU, SHANGHAI, [
        {"action": "create", "title": "交报告", "at": "2026-06-19 00:00"},
        {"action": "create", "title": "交房租", "at": "2026-06-20 00:00"},
        {"action": "create", "title": "交水费", "at": "2026-06-21 00:00"}]),
    ("明天上午十点提醒我去银行，下午三点提醒我去超市", NY, NEW_YORK, [
        {"action": "create", "title": "去银行", "at": "2026-03-07 10:00"},
        {"action": "create", "title": "去超市", "at": "2026-03-07 15:00"}]),
]

# One request, even with commas and several time words: the list holds exactly parse(text).
SINGLE: list[tuple[str, Any, ZoneInfo]] = [
    ("明天下午三点开会，提前半小时提醒我", THU, SHANGHAI),
    ("明天下午三点开会，两点半提醒我出发", THU, SHANGHAI),
    ("明天下午3点开会，4点结束", THU, SHANGHAI),
    ("明天下午三点开会，地点在三楼会议室", THU, SHANGHAI),
    ("明天下午三点开会，记得带电脑", THU, SHANGHAI),
    ("周五晚上7点聚餐，6点半提醒我", THU, SHANGHAI),
    ("明天上午帮我记个事，十点要去银行", THU, SHANGHAI),
    ("老板今天在群里说了，周四下午两点开季度会，提前提醒我", THU, SHANGHAI),
    ("每天早上8点提醒我吃药，不用回复", THU, SHANGHAI),
    ("好的，谢谢", THU, SHANGHAI),
    ("明天提醒我，下午三点，开会", THU, SHANGHAI),
    ("下周一到周五每天早上7点，提醒我跑步", SUN_NIGHT, SHANGHAI),
    ("今天下午有空吗，想约你喝咖啡", THU, SHANGHAI),
    ("tomorrow 9am, remind me to call mom", NY, NEW_YORK),
    ("好的，明天下午三点开会", THU, SHANGHAI),
    ("嗯嗯，帮我记一下，明天交报告", THU, SHANGHAI),
    ("明天下午三点开会，大概一个小时", THU, SHANGHAI),
]


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz", "want"), SPLIT, ids=[c[0] for c in SPLIT])
def test_several_requests_split_in_order(text: str, now: Any, tz: ZoneInfo, want: list[dict[str, Any]]) -> None:
    got = parse_all(text, now=now, tz=tz)
    assert [g.action for g in got] == [w["action"] for w in want], [explain(g) for g in got]
    for it, expected in zip(got, want, strict=True):
        assert not mismatches(it, expected, tz), (mismatches(it, expected, tz), explain(it))


@needs_engine
@pytest.mark.parametrize(("text", "now", "tz"), SINGLE, ids=[c[0] for c in SINGLE])
def test_one_request_is_exactly_parse(text: str, now: Any, tz: ZoneInfo) -> None:
    assert parse_all(text, now=now, tz=tz) == [parse(text, now=now, tz=tz)]


@needs_engine
def test_pending_answer_comes_first() -> None:
    pending = parse("我明天要去开会，帮我记录增加一个提醒", now=THU, tz=SHANGHAI)
    assert pending.needs_clarification, explain(pending)
    stored = Intent.model_validate_json(pending.model_dump_json())
    got = parse_all("下午三点，另外提醒我周五上午交报告", now=THU, tz=SHANGHAI, pending=stored)
    assert [g.action for g in got] == ["create", "create"], [explain(g) for g in got]
    assert not mismatches(got[0], {"title": pending.model_dump()["title"], "at": "2026-06-19 15:00"}, SHANGHAI), \
        explain(got[0])
    assert not mismatches(got[1], {"title": "交报告"}, SHANGHAI), explain(got[1])
    alone = parse_all("下午三点，提前半小时", now=THU, tz=SHANGHAI, pending=stored)
    assert alone == [parse("下午三点，提前半小时", now=THU, tz=SHANGHAI, pending=stored)]


@pytest.mark.parametrize("text", ["", "   ", ",,,", "\x00\ud800", "明天," * 300, 42, None])
def test_never_raises(text: Any) -> None:
    got = parse_all(text, now=THU, tz="Asia/Shanghai")
    assert got and all(isinstance(g, Intent) for g in got)


def test_bad_timezone_is_a_none_intent_not_an_exception() -> None:
    got = parse_all("明天9点提醒我交房租，下午3点提醒我取快递", now=THU, tz="Not/AZone")
    assert [g.action for g in got] == ["none"]


@pytest.mark.parametrize(("text", "title"), [("明早8点叫我起床，8点半再叫一次", "起床"), ("明早8点叫我，8点半再叫一次", "起床")])
def test_call_me_again_is_a_second_reminder_for_the_same_thing(text: str, title: str) -> None:
    first, second = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(first, CreateIntent) and isinstance(second, CreateIntent)
    assert (first.title, second.title) == (title, title)
    assert first.reminder is not None and second.reminder is not None
    assert (first.reminder.remind_at, second.reminder.remind_at) == (at(2026, 6, 19, 8), at(2026, 6, 19, 8, 30))


def test_once_is_not_part_of_a_title() -> None:
    [it] = parse_all("明天下午3点开会，2点半提醒我一次", now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.title == "开会"


@pytest.mark.parametrize(("text", "titles", "day"), [
    ("明天要做的事：买菜、取快递、交电费", ["买菜", "取快递", "交电费"], 19),
    ("今天的待办：1.交电费 2.买菜", ["交电费", "买菜"], 18),
    ("周五要办：续签合同，交社保", ["续签合同", "交社保"], 19),
])
def test_a_days_list_of_things_is_one_task_each(text: str, titles: list[str], day: int) -> None:
    found = parse_all(text, now=NOW, tz=TZ)
    assert [it.title for it in found if isinstance(it, CreateIntent)] == titles
    assert all(isinstance(it, CreateIntent) and it.due_at == at(2026, 6, day) for it in found)


def test_a_colon_without_a_list_is_read_as_before() -> None:
    [it] = parse_all("明天开会，地点：3楼", now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.title == "开会"


def test_several_clocks_on_one_day_are_one_request_each() -> None:
    found = parse_all("明天上午10点和下午3点提醒我吃药", now=NOW, tz=TZ)
    assert all(isinstance(it, CreateIntent) and it.recurrence is None for it in found)
    assert [it.due_at.hour for it in found if isinstance(it, CreateIntent) and it.due_at] == [10, 15]
    assert {it.title for it in found if isinstance(it, CreateIntent)} == {"吃药"}


@pytest.mark.parametrize(("text", "hours", "title"), [
    ("每天上午10点、下午3点提醒我喝水", [10, 15], "喝水"),
    ("每天早上8点、中午12点、晚上6点提醒我吃药", [8, 12, 18], "吃药"),
    ("每天早上8点晚上8点提醒我吃药", [8, 20], "吃药"),
    ("每天早上八点和晚上八点提醒我吃药", [8, 20], "吃药"),
    ("每天早上八点、晚上八点各吃一次药", [8, 20], "吃药"),
    ("吃药 每天早上八点一次 晚上八点一次", [8, 20], "吃药"),
])
def test_several_clocks_every_day_are_one_series_however_joined(text: str, hours: list[int], title: str) -> None:
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, CreateIntent) and it.recurrence is not None
    assert [t.hour for t in it.recurrence.times] == hours
    assert it.title == title
    assert it.recurrence.rrule.startswith("FREQ=DAILY;BYHOUR=" + ",".join(map(str, hours)))


@pytest.mark.parametrize(("text", "minutes"), [
    ("把明天的会往后挪一个小时", 60),
    ("明天的会往后延半小时", 30),
    ("把明天的会往前推半小时", -30),
    ("明天的会往后推一小时", 60),
])
def test_moving_an_item_by_an_amount_in_other_words_is_a_shift(text: str, minutes: int) -> None:
    """往后挪 / 往后延 / 往前推 say what 推迟 / 提前 say: the meeting moves, nothing new is drafted."""
    [it] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(it, UpdateIntent) and it.changes is not None
    assert it.changes.shift_minutes == minutes and it.target_text == "会"
