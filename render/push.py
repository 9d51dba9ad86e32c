"""Texts of pushed messages: a reminder and the daily agenda digest."""

from __future__ import annotations

from datetime import date

from render.timefmt import clock_label, day_label, local
from schedule.domain import Item


def reminder_text(item: Item, *, remind_at: int) -> str:
    """⏰ 提醒：15:00 会议（6月19日 周五）"""
    anchor = item.anchor_at
    if anchor is None:
        return f"⏰ 提醒：{item.title}"
    when = local(anchor, item.timezone)
    if item.all_day:
        return f"⏰ 提醒：{day_label(when.date())} {item.title}"
    lead = (anchor - remind_at) // 60_000
    tail = f"，还有 {lead} 分钟" if 0 < lead < 24 * 60 else ""
    verb = "开始" if item.kind == "event" else ("截止" if lead > 0 else "")  # a task reminded at its time: just do it
    return f"⏰ 提醒：{day_label(when.date())}{clock_label(when)} {item.title}{verb}{tail}。"


def _line(item: Item, tz: str, today: date) -> str:
    anchor = item.anchor_at
    if anchor is None:
        return f"· {item.title}"
    when = local(anchor, tz)
    if when.date() < today:
        return f"· [已过期] {item.title}（{day_label(when.date())}）"
    if item.all_day:
        return f"· 全天 {item.title}"
    mark = "截止 " if item.kind == "task" else ""
    return f"· {clock_label(when)} {mark}{item.title}"


def digest_text(day: date, items: list[Item], *, tz: str, next_day: bool = False) -> str:
    """A day's agenda: events that day, tasks due that day, overdue open tasks; a plain line when empty.
    `next_day`: sent the evening before (每晚9点发第二天的安排)."""
    if next_day:
        if not items:
            return f"明天 {day_label(day)}没有待办。"
        lines = [f"明天 {day_label(day)}的安排（{len(items)} 项）："]
        lines += [_line(item, tz, day) for item in items]
        return "\n".join(lines)
    if not items:
        return f"早上好！{day_label(day)}今天没有待办。"
    lines = [f"早上好！{day_label(day)}的安排（{len(items)} 项）："]
    lines += [_line(item, tz, day) for item in items]
    return "\n".join(lines)
