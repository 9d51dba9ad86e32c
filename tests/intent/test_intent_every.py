"""Targets that mean every match: 都/全部/所有 in a cancel or complete request, "全部" as the answer to
"要取消哪一个？", and words like 事/东西 that name no item (the date alone picks)."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from intent import parse, parse_all
from intent.dialogue import EVERY_PICKED
from intent.model import CancelIntent, CompleteIntent, UpdateIntent, to_json

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 6, 18, 10, 0, tzinfo=SH)
TOMORROW = date(2026, 6, 19)


@pytest.mark.parametrize("text", ["把明天的事取消", "取消明天的事", "明天的事儿取消吧", "明天的东西取消",
                                  "把明天的安排取消", "明天的日程取消"])
def test_a_word_for_any_item_leaves_the_date_to_pick(text: str) -> None:
    intent = parse(text, now=NOW, tz=SH)
    assert isinstance(intent, CancelIntent)
    assert (intent.target_text, intent.target_date, intent.every) == (None, TOMORROW, False)
    assert intent.needs_clarification == []


@pytest.mark.parametrize(("text", "action", "target"), [
    ("明天的安排都取消", "cancel", None),
    ("把明天所有的事都取消", "cancel", None),
    ("明天的事情全部取消", "cancel", None),
    ("明天的会都不开了", "cancel", "会"),
    ("明天的会全部取消", "cancel", "会"),
    ("明天的待办都完成了", "complete", None),
])
def test_every_said_of_the_targets(text: str, action: str, target: str | None) -> None:
    intent = parse(text, now=NOW, tz=SH)
    assert (intent.action, getattr(intent, "target_text", ""), getattr(intent, "every", None)) == (action, target, True)
    assert to_json(intent)["every"] is True


@pytest.mark.parametrize("text", ["取消明天的会", "成都出差取消", "首都机场接人那个取消", "带材料那个已经完成了"])
def test_one_target_is_not_every(text: str) -> None:
    intent = parse(text, now=NOW, tz=SH)
    assert isinstance(intent, CancelIntent | CompleteIntent)
    assert intent.every is False and "every" not in to_json(intent)


def asked(intent: CancelIntent | CompleteIntent | UpdateIntent) -> CancelIntent | CompleteIntent | UpdateIntent:
    """The intent as the conversation saves it when it offers a numbered list."""
    return intent.model_copy(update={"needs_clarification": ["target"], "question": "要选哪一个？回复序号就行。"})


@pytest.mark.parametrize("answer", ["全部", "都", "都要", "都取消", "全部取消吧", "两个都取消", "这两个都要", "所有的",
                                    "全都删掉", "三条都删了。"])
def test_all_answers_which_one(answer: str) -> None:
    pending = asked(CancelIntent(target_date=TOMORROW))
    [merged] = parse_all(answer, now=NOW, tz=SH, pending=pending)
    assert isinstance(merged, CancelIntent)
    assert (merged.every, merged.rule, merged.needs_clarification, merged.target_date) == \
        (True, EVERY_PICKED, [], TOMORROW)


def test_all_completes_every_offered_item() -> None:
    [merged] = parse_all("都完成了", now=NOW, tz=SH, pending=asked(CompleteIntent(target_text="报告")))
    assert isinstance(merged, CompleteIntent) and merged.every and merged.target_text == "报告"


@pytest.mark.parametrize("answer", ["都行吗你说呢", "全部的会议改到后天", "2"])
def test_other_answers_are_not_all(answer: str) -> None:
    [merged] = parse_all(answer, now=NOW, tz=SH, pending=asked(CancelIntent(target_date=TOMORROW)))
    assert merged.rule != EVERY_PICKED and getattr(merged, "every", False) is False


def test_all_does_not_answer_which_one_to_move() -> None:
    pending = asked(UpdateIntent(target_text="会"))
    [merged] = parse_all("全部", now=NOW, tz=SH, pending=pending)
    assert merged.rule != EVERY_PICKED and getattr(merged, "every", False) is False


@pytest.mark.parametrize(("text", "title"), [("明天去成都", "去成都"), ("后天下午去京都", "去京都"),
                                             ("明天去成都出差", "去成都出差")])
def test_a_place_ending_in_du_keeps_its_last_character(text: str, title: str) -> None:
    """都 at the end of a title is the adverb (带材料和买菜都) unless it ends 成都/首都/京都."""
    intent = parse(text, now=NOW, tz=SH)
    assert getattr(intent, "title", None) == title


def test_cancelling_a_trip_to_chengdu_targets_it_whole() -> None:
    intent = parse("把去成都取消", now=NOW, tz=SH)
    assert isinstance(intent, CancelIntent) and intent.target_text == "去成都" and not intent.every


@pytest.mark.parametrize(("text", "target"), [("把明天所有的会都取消", "会"), ("取消所有会议", "会议"),
                                              ("所有人开会取消", "所有人开会")])
def test_all_of_before_the_target_is_every_not_a_word_of_it(text: str, target: str) -> None:
    intent = parse(text, now=NOW, tz=SH)
    assert isinstance(intent, CancelIntent) and intent.target_text == target and intent.every


@pytest.mark.parametrize(("text", "time"), [
    ("推送改到8点", "08:00"), ("早报改成早上7点半", "07:30"), ("改成每天早上8点发", "08:00"),
    ("每日待办推送时间改到早上8点", "08:00"),
])
def test_a_new_time_for_the_push(text: str, time: str) -> None:
    intent = parse(text, now=NOW, tz=SH)
    assert (intent.action, getattr(intent, "time", None), getattr(intent, "retime", None)) == (
        "subscribe_digest", time, True)
    assert not intent.kind_said and not intent.days_said  # type: ignore[attr-defined]  # the rest stays


@pytest.mark.parametrize("text", ["开会改到8点", "改成每天早上8点发朋友圈"])
def test_other_changes_are_not_the_push(text: str) -> None:
    assert parse(text, now=NOW, tz=SH).action != "subscribe_digest"
