"""The short Chinese questions asked when an intent misses something (a time, digest hour, item, snooze length)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from intent.model import Missing

_WEEKDAY = "一二三四五六日"
_EXAMPLE_HOUR = {"凌晨": "5点", "早上": "8点", "早晨": "8点", "上午": "10点", "中午": "12点", "下午": "3点",
                 "傍晚": "6点", "晚上": "8点", "夜里": "10点"}


def question(missing: Sequence[Missing], *, label: str = "", meeting: bool = False, target: str = "",
             remind_on: date | None = None, lead_minutes: int | None = None, remind_period: str | None = None,
             recurring: bool = False, period: tuple[str, str] | None = None) -> str:
    """One question covering everything missing; a missing time's question has exact wording.
    `remind_on`: the day a 提前N天 reminder falls on, when only its clock time is missing;
    `lead_minutes`: a shorter lead (提前半小时), which needs the item's own clock time."""
    need = set(missing)
    noted = f"可以。我先记下“{label}”。" if label else "可以。"
    if "event_time" in need:
        what = "会议大概几点开始" if meeting else "大概几点开始"
        tail = "，提前多久提醒你？" if "reminder_offset" in need else "？"
        return f"{noted}{what}{tail}"
    if "reminder_time" in need and remind_on is not None:
        day = f"{remind_on.month}月{remind_on.day}日（周{_WEEKDAY[remind_on.weekday()]}）"
        example = "9点" if remind_period else "上午9点"
        return f"{noted}提前的那天是{day}{remind_period or ''}，几点提醒你？比如“{example}”。"
    if "reminder_time" in need and lead_minutes:
        return f"{noted}具体是几点？我会提前{_lead_words(lead_minutes)}提醒你。"
    if "reminder_time" in need and recurring:
        return f"{noted}每次几点提醒你？比如“上午9点”。"
    if "reminder_time" in need:
        return f"{noted}想让我什么时候提醒你？比如“明天上午9点”。"
    if "reminder_offset" in need:
        return f"{noted}需要提前多久提醒你？比如“提前半小时”。"
    if "digest_time" in need:
        return "可以。每天几点发给你？比如“每天早上7点”。"
    if "snooze_duration" in need:
        return "好的，多久之后再提醒你？10 分钟、1 小时，还是明早？"
    if "changes" in need and period:
        name = f"“{target}”" if target else "它"
        said, part = period
        return f"要把{name}改到{said}几点？比如“改到{said}{_EXAMPLE_HOUR.get(part, '9点')}”。"
    if "changes" in need:
        name = f"“{target}”" if target else "它"
        return f"要把{name}改成什么？比如“改到明天下午三点”或“提前15分钟提醒”。"
    if "target" in need:
        return "是哪一项呢？告诉我名称或时间，我来找。"
    return "能再说具体一点吗？"


def _lead_words(minutes: int) -> str:
    if minutes < 60:
        return f" {minutes} 分钟"
    hours, rest = divmod(minutes, 60)
    return f" {hours} 小时" + (f" {rest} 分钟" if rest else "")
