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
    verb = "开始" if item.kind == "event" else ("截止" if lead > 0 else "")  # a task reminded at its time: just do it
    return f"⏰ 提醒：{day_label(when.date())}{clock_label(when)} {item.title}{verb}{_countdown(anchor, remind_at)}。"


def _countdown(due_at: int, at: int) -> str:
    lead = -((at - due_at) // 60_000)  # whole minutes left, rounded up: 59 min 59 s is still "还有 60 分钟"
    return f"，还有 {lead} 分钟" if 0 < lead < 24 * 60 else ""


def recounted(text: str, *, due_at: int, remind_at: int, now: int) -> str:
    """A reminder's text as of `now`, when it goes out later than planned (held by a pause, retried): the
    countdown written for `remind_at` ("还有 60 分钟") says the time left at `now`, or goes when none is."""
    planned, actual = _countdown(due_at, remind_at), _countdown(due_at, now)
    if planned == actual or not planned or not text.endswith(planned + "。"):
        return text
    return text[:-len(planned) - 1] + actual + "。"


def wechat_time(ms: int, tz: str, *, all_day: bool = False) -> str:
    """A template or subscription message's `time` keyword, as WeChat accepts it: a date with a 24-hour time,
    "2026年6月18日 15:00" (an all-day item: its day at 00:00)."""
    moment = local(ms, tz)
    hour, minute = (0, 0) if all_day else (moment.hour, moment.minute)
    return f"{moment.year}年{moment.month}月{moment.day}日 {hour:02d}:{minute:02d}"


def push_title(title: str, count: int | None = None) -> str:
    """A template or subscription message's `thing` keyword: never empty, at most 20 characters
    ("今日待办（3项）" for a digest)."""
    text = " ".join((title or "").split()) or "日程提醒"
    if count is not None:
        text = f"{text}（{count}项）"
    return text[:20]


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
