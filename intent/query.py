"""Itinerary queries (docs/conversation.md#queries): the half-open range, page preference and kind filter."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from intent.model import QueryIntent
from intent.slots import Slots, day_start

if TYPE_CHECKING:
    from intent.timex.types import TimeMention

_PAGE = re.compile(r"页面|网页|好看|行程页|生成.{0,4}页|做成.{0,4}页|链接|h5|图表|表格|日历视图|可视化", re.IGNORECASE)
_EVENT = re.compile(r"会|约|活动|面试|饭局")
_TASK = re.compile(r"待办|任务|todo|没完成|未完成|要做", re.IGNORECASE)
_HOLIDAY = re.compile(r"假期|放假|小长假|长假|假日|连休")
# Windows for a day period named without a clock time (7月1号下午 → 12:00–18:00).
_PERIODS = (
    (re.compile(r"凌晨"), 0, 6), (re.compile(r"早上|早晨|清晨|上午|今早|明早"), 6, 12),
    (re.compile(r"中午"), 11, 14), (re.compile(r"下午"), 12, 18), (re.compile(r"傍晚"), 17, 19),
    (re.compile(r"晚上|今晚|明晚|夜里|晚"), 18, 24),
)
_NEXT_DAYS = re.compile(r"(?:未来|最近|接下来|近|这)([0-9一二两三四五六七八九十]+|几)(天|周|个?星期)")


def build(text: str, slots: Slots, *, now: datetime, tz: ZoneInfo, mentions: list[TimeMention]) -> QueryIntent:
    start, end, rule = _range(text, slots, now=now, tz=tz, mentions=mentions)
    kind = "task" if _TASK.search(text) else ("event" if _EVENT.search(text) else None)
    return QueryIntent(
        range_start=start, range_end=end, prefer_page=bool(_PAGE.search(text)), filter_kind=kind,
        rule=f"query.{rule}", confidence=0.9,
    )


def _range(
    text: str, slots: Slots, *, now: datetime, tz: ZoneInfo, mentions: list[TimeMention]
) -> tuple[datetime, datetime, str]:
    today = day_start(now.astimezone(tz))
    ranges = [m for m in mentions if m.type == "range" and m.start is not None and m.end is not None]
    if ranges:
        first = ranges[0]
        if first.start is not None and first.end is not None:
            return first.start, first.end, f"range:{first.rule}"
    when = slots.when
    if when is not None and when.start is not None:
        at = when.start
        if when.has_clock:
            period = _period_window(text)
            if period is not None and "中午" in when.text:
                return _at_hour(at, period[0]), _at_hour(at, period[1]), "period"
            return at, at + timedelta(hours=1), "clock"
        period = _period_window(when.text) or _period_window(text)
        if period is not None:
            return _at_hour(at, period[0]), _at_hour(at, period[1]), "period"
        day = day_start(at)
        if _HOLIDAY.search(text):
            lo_day, last = _holiday_block(day.date())
            lo = day + timedelta(days=(lo_day - day.date()).days)
            return lo, day + timedelta(days=(last - day.date()).days + 1), "holiday"
        if when.grain in ("week", "month", "year"):
            return day, _span_end(day, when.grain), f"grain:{when.grain}"
        return day, day + timedelta(days=1), "day"
    m = _NEXT_DAYS.search(text)
    if m is not None:
        from intent.timex.numerals import cn_int

        n = 3 if m.group(1) == "几" else cn_int(m.group(1)) or 7  # 这几天: today and the next two
        n *= 7 if m.group(2) != "天" else 1
        return today, today + timedelta(days=min(n, 366)), "next_days"
    return today, today + timedelta(days=7), "default_7d"


def _period_window(text: str) -> tuple[int, int] | None:
    for pattern, lo, hi in _PERIODS:
        if pattern.search(text):
            return lo, hi
    return None


def _at_hour(day: datetime, hour: int) -> datetime:
    base = day_start(day)
    return base + timedelta(days=1) if hour == 24 else base.replace(hour=hour)


def _span_end(day: datetime, grain: str) -> datetime:
    if grain == "week":
        return day + timedelta(days=7)
    if grain == "month":
        nxt = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
        return day_start(nxt)
    return day.replace(year=day.year + 1)


def _holiday_block(day: date) -> tuple[date, date]:
    """The official days-off block around `day` (端午假期 → the whole break), else just that day."""
    try:
        import chinese_calendar

        if not chinese_calendar.is_holiday(day):
            return day, day
        first = last = day
        for _ in range(10):
            if not chinese_calendar.is_holiday(first - timedelta(days=1)):
                break
            first -= timedelta(days=1)
        for _ in range(10):
            if not chinese_calendar.is_holiday(last + timedelta(days=1)):
                break
            last += timedelta(days=1)
        return first, last
    except Exception:  # the calendar library does not know that year
        return day, day
