"""The short Chinese questions asked when an intent misses something (SPEC §3 rules 1, 6, 10, 12)."""

from __future__ import annotations

from collections.abc import Sequence

from intent.model import Missing


def question(missing: Sequence[Missing], *, label: str = "", meeting: bool = False, target: str = "") -> str:
    """One question covering everything missing; rule 1's wording is exact."""
    need = set(missing)
    noted = f"可以。我先记下“{label}”。" if label else "可以。"
    if "event_time" in need:
        what = "会议大概几点开始" if meeting else "大概几点开始"
        tail = "，提前多久提醒你？" if "reminder_offset" in need else "？"
        return f"{noted}{what}{tail}"
    if "reminder_time" in need:
        return f"{noted}想让我什么时候提醒你？比如“明天上午9点”。"
    if "reminder_offset" in need:
        return f"{noted}需要提前多久提醒你？比如“提前半小时”。"
    if "digest_time" in need:
        return "可以。每天几点发给你？比如“每天早上7点”。"
    if "snooze_duration" in need:
        return "好的，多久之后再提醒你？10 分钟、1 小时，还是明早？"
    if "changes" in need:
        name = f"“{target}”" if target else "它"
        return f"要把{name}改成什么？比如“改到明天下午三点”或“提前15分钟提醒”。"
    if "target" in need:
        return "是哪一项呢？告诉我名称或时间，我来找。"
    return "能再说具体一点吗？"
