"""An itinerary as chat text: entries grouped by local date, cut to a byte budget with "还有 N 条"."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from render import outcome as o
from render.timefmt import clock_label, day_label, local, moment_label
from schedule.domain import Item

_KIND = {"event": "日程", "task": "待办"}


def entry_line(item: Item) -> str:
    """12月1日（周二）15:00 会议 — the time and title that identify an item."""
    anchor = item.anchor_at
    if anchor is None:
        return item.title
    when = moment_label(anchor, item.timezone, all_day=item.all_day)
    return f"{when}{'' if item.all_day else ' '}{item.title}"  # 6月19日（周五）开会 / 6月19日（周五）15:00 会议


def _row(item: Item, tz: str, today: date | None) -> str:
    anchor = item.anchor_at
    if anchor is None:
        return f"· {item.title}"
    at = local(anchor, tz)
    clock = "全天" if item.all_day else clock_label(at)
    if item.kind == "event" and item.end_at is not None and not item.all_day:
        end = local(item.end_at, tz)
        if end.date() == at.date():
            clock += f"–{clock_label(end)}"
    overdue = "【已完成】" if item.status == "completed" else \
        "【已过期】" if today is not None and item.kind == "task" and at.date() < today else ""
    bell = ""
    open_reminders = [r for r in item.reminders if r.status in ("pending", "locked")]
    if open_reminders:
        first = open_reminders[0]
        at_ms = first.remind_at
        if item.recurrence is not None:  # a series' reminder row is its next one: show this occurrence's
            at_ms = anchor - (first.offset_minutes or 0) * 60_000
        bell = " ⏰" if at_ms == anchor else f" ⏰{_bell_moment(local(at_ms, tz), at)}"
    where = f"（{item.location}）" if item.location else ""
    return f"· {overdue}{clock} {item.title}{where}{bell}"


def _bell_moment(remind: datetime, start: datetime) -> str:
    """The reminder's clock, with its day when that is not the item's own (⏰前一天09:00, ⏰12月6日09:00)."""
    days = (start.date() - remind.date()).days
    if days == 0:
        return clock_label(remind)
    return f"{'前一天' if days == 1 else f'{remind.month}月{remind.day}日'}{clock_label(remind)}"


def _day_head(day: date, today: date | None) -> str:
    rel = {0: " 今天", 1: " 明天", 2: " 后天"}.get((day - today).days, "") if today is not None else ""
    return f"📅 {day_label(day)}{rel}"


# Names of the part of a day a query asked about, by its local hours (明天上午 → 08:00–12:00 → 上午).
_PERIODS = {(0, 6): "凌晨", (4, 12): "早上", (6, 12): "上午", (8, 12): "上午", (11, 14): "中午", (12, 18): "下午",
            (17, 19): "傍晚", (18, 24): "晚上", (20, 24): "夜里", (6, 18): "白天", (6, 19): "白天"}


def _range_label(x: o.Listed) -> str:
    lo = local(x.start_ms, x.tz)
    hi = local(x.end_ms, x.tz)
    first, last = lo.date(), (hi - timedelta(milliseconds=1)).date()
    if first != last:
        return f"{day_label(first)}到{day_label(last)}"
    if lo.time() == time() and hi.time() == time():  # the whole day
        return day_label(first)
    end_hour = 24 if hi.date() != first else hi.hour
    period = _PERIODS.get((lo.hour, end_hour)) if lo.minute == hi.minute == 0 else None
    end_label = "24:00" if end_hour == 24 and hi.minute == 0 else clock_label(hi)
    return f"{day_label(first)}{period or f'{clock_label(lo)}–{end_label}'}"


def _what(x: o.Listed) -> str:
    return _KIND.get(x.kind or "", "安排")


def summary(x: o.Listed) -> str:
    """Two short lines: how many, and the next one (and how much else the day holds: queries tell the whole truth)."""
    more = f"\n当天另有 {len(x.rest)} 项其他安排。" if x.rest else ""
    if not x.items:
        return f"{_range_label(x)}没有{_what(x)}。{more}"
    first = x.items[0]
    return f"{_range_label(x)}{_count(x)}{_what(x)}。\n最近一项：{entry_line(first)}{more}"


def _count(x: o.Listed) -> str:
    """共 N 项, or 至少 N 项 when the listing was cut (a count is never stated lower than the truth)."""
    return f"共 {len(x.items)} 项" if x.complete else f"至少 {len(x.items)} 项"


def _rest(x: o.Listed, budget: int) -> str:
    """The rest of the day: "当天还有：18:30 和朋友吃饭" (one inline, several as rows), within `budget` UTF-8 bytes."""
    if len(x.rest) == 1:
        line = f"当天还有：{_row(x.rest[0], x.tz, x.today)[2:]}"
        if len(line.encode("utf-8")) <= budget:
            return line
    lines = ["当天还有："]
    size = len(lines[0].encode("utf-8"))
    for shown, item in enumerate(x.rest):
        row = _row(item, x.tz, x.today)
        cost = len(row.encode("utf-8")) + 1
        left = len(x.rest) - shown
        tail = f"……还有 {left} 条。"
        if size + cost + len(tail.encode("utf-8")) + 1 > budget:
            lines.append(tail)
            break
        lines.append(row)
        size += cost
    return "\n".join(lines)


def listing(x: o.Listed, *, budget: int) -> str:
    """The list grouped by date (or the summary plus the page link), within `budget` UTF-8 bytes; then what
    else the day holds when the range was part of it (queries tell the whole truth)."""
    if x.page_url is not None:
        return f"{summary(x)}\n查看行程页：{x.page_url}"
    if not x.rest:
        return _listing(x, budget=budget)
    if not x.items:
        head = f"{_range_label(x)}没有{_what(x)}。"
        return f"{head}{_rest(x, budget - len(head.encode('utf-8')))}"
    rest = _rest(x, budget // 3)  # the asked-for part keeps most of the room
    return f"{_listing(x, budget=budget - len(rest.encode('utf-8')) - 1)}\n{rest}"


def _listing(x: o.Listed, *, budget: int) -> str:
    if not x.items:
        return f"{_range_label(x)}没有{_what(x)}。"
    head = f"{_range_label(x)}的{_what(x)}（{_count(x).removeprefix('共 ')}）："
    lines = [head]
    size = len(head.encode("utf-8"))
    day: date | None = None
    for shown, item in enumerate(x.items):
        anchor = item.anchor_at
        block = []
        this_day = local(anchor, x.tz).date() if anchor is not None else None
        if this_day != day:
            day = this_day
            block.append(_day_head(this_day, x.today) if this_day is not None else "📌 未定时间")
        block.append(_row(item, x.tz, x.today))
        cost = len("\n".join(block).encode("utf-8")) + 1
        left = len(x.items) - shown
        tail = len(f"……还有 {left} 条，说“用页面展示”看全部".encode()) + 1
        if size + cost + tail > budget:
            lines.append(f"……还有 {left} 条，说“用页面展示”看全部。")
            break
        lines += block
        size += cost
    return "\n".join(lines)
