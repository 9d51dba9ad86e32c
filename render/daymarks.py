"""What a day header says besides its date (pure): 休/班 from the official calendar, the 农历 date, and the
user's time zone in words (北京时间)."""

from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

import chinese_calendar
from lunardate import LunarDate

from schedule import holidays
from schedule.recurrence import LUNAR_LAST_YEAR

LUNAR_MONTHS = ("正", "二", "三", "四", "五", "六", "七", "八", "九", "十", "冬", "腊")
_DIGITS = "一二三四五六七八九十"
ZONE_NAMES = {"Asia/Shanghai": "北京时间", "Asia/Chongqing": "北京时间", "Asia/Harbin": "北京时间",
              "Asia/Urumqi": "新疆时间", "Asia/Hong_Kong": "香港时间", "Asia/Macau": "澳门时间",
              "Asia/Taipei": "台北时间", "Asia/Tokyo": "东京时间", "Asia/Seoul": "首尔时间",
              "Asia/Singapore": "新加坡时间", "Europe/London": "伦敦时间", "Europe/Paris": "巴黎时间",
              "Europe/Berlin": "柏林时间", "America/New_York": "纽约时间", "America/Los_Angeles": "洛杉矶时间",
              "Australia/Sydney": "悉尼时间", "UTC": "世界协调时"}


def off_mark(day: date) -> str:
    """休 on an official day off (a holiday and the weekend days of its run), 班 on a 调休 working weekend
    day, "" otherwise. A year the library does not know reads the loaded schedule or the statutory holidays
    (`schedule.holidays`), so 元旦 of an unpublished year is still 休."""
    return _off_mark(day, holidays.version())


@lru_cache(maxsize=1024)
def _off_mark(day: date, _version: int) -> str:
    if not holidays.library_knows(day.year) or day.year in holidays.loaded():
        workday, weekend = holidays.is_cn_workday(day), day.weekday() >= 5
        return "班" if workday and weekend else "休" if not workday and not weekend else ""
    try:
        holiday, name = chinese_calendar.get_holiday_detail(day)
    except NotImplementedError:
        return ""
    if name is None:
        return ""
    return "休" if holiday else "班"


@lru_cache(maxsize=1024)
def lunar_label(day: date) -> str:
    """农历五月初四; on the first of a lunar month the month alone (农历闰四月)."""
    if not 1900 < day.year <= LUNAR_LAST_YEAR:
        return ""
    try:
        lunar = LunarDate.from_solar_date(day.year, day.month, day.day)
    except ValueError:
        return ""
    month = f"{'闰' if lunar.is_leap_month else ''}{LUNAR_MONTHS[lunar.month - 1]}月"
    if lunar.day == 1:
        return f"农历{month}"
    return f"农历{month}{_day_name(lunar.day)}"


def _day_name(n: int) -> str:
    if n <= 10:
        return "初" + _DIGITS[n - 1]
    if n < 20:
        return "十" + _DIGITS[n - 11]
    if n == 20:
        return "二十"
    if n < 30:
        return "廿" + _DIGITS[n - 21]
    return "三十"


def zone_label(tz: str, at: datetime) -> str:
    """北京时间, or the offset in words for a zone without a common name (UTC+5:30 时间)."""
    if tz in ZONE_NAMES:
        return ZONE_NAMES[tz]
    offset = at.astimezone(ZoneInfo(tz)).utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours}{f':{rest:02d}' if rest else ''} 时间"
