"""Negative corpus: texts that contain digits or time-ish characters but no time expression."""

from __future__ import annotations

import pytest

from tests.intent.timex.timex_helpers import first

NEGATIVE = [
    "一会儿再说", "等一会儿", "一点都不好", "我一点也不想去", "十分之一", "二十点六", "调高24点5度",
    "温度调到26点5度", "我的电话号码是888-000-9999。", "请检查：192.168.255.255。", "我的电话是13812345678",
    "版本3.5.1", "升级到v2.0.1", "我有两点建议", "三点意见", "季度报告已经交了", "按同一时间开", "早上好", "晚上好呀", "差一点忘了", "晚一点提醒我", "早点睡", "会议纪要怎么写", "你好", "这是我的队伍",
    "五角大楼宣布了作战计划", "标准普尔指数下降", "有一点事", "第三点意见", "几点开会", "买3.5斤苹果", "房间号1203",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_nothing_extracted(text: str) -> None:
    got, rule = first(text)
    assert got == "nothing", f"{text!r} → {got} by rule {rule}, expected no time"


@pytest.mark.parametrize("text", ["100000000小时后", "99999年前", "13月32日", "25:61", "每隔0分钟", "2月30日"])
def test_out_of_range_values_extract_nothing_and_do_not_raise(text: str) -> None:
    got, rule = first(text)
    assert got == "nothing", f"{text!r} → {got} by rule {rule}, expected no time"
