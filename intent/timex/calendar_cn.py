"""Calendar facts: lunar ↔ solar, named holidays, 清明, the official workday calendar."""

from __future__ import annotations

import calendar
from datetime import date, timedelta

import chinese_calendar
import lunardate
from dateutil.easter import easter

SOLAR = {
    "元旦": (1, 1), "新年": (1, 1), "阳历新年": (1, 1), "情人节": (2, 14), "圣瓦伦丁节": (2, 14),
    "女生节": (3, 7), "妇女节": (3, 8), "三八": (3, 8), "植树节": (3, 12), "消费者权益日": (3, 15),
    "三一五": (3, 15), "愚人节": (4, 1), "劳动节": (5, 1), "五一": (5, 1), "青年节": (5, 4),
    "儿童节": (6, 1), "六一": (6, 1), "建党节": (7, 1), "七一": (7, 1), "建军节": (8, 1), "八一": (8, 1),
    "教师节": (9, 10), "国庆": (10, 1), "十一": (10, 1), "万圣节": (10, 31), "光棍节": (11, 11),
    "双十一": (11, 11), "双十二": (12, 12), "平安夜": (12, 24), "圣诞": (12, 25), "白色情人节": (3, 14),
    "地球日": (4, 22), "护士节": (5, 12), "世界环境日": (6, 5), "香港回归纪念日": (7, 1), "记者节": (11, 8),
    "澳门回归纪念日": (12, 20),
}
LUNAR = {
    "春节": (1, 1), "农历新年": (1, 1), "新春": (1, 1), "大年初一": (1, 1), "正月正时": (1, 1),
    "正月朔日": (1, 1), "元宵": (1, 15), "龙抬头": (2, 2), "端午": (5, 5), "七夕": (7, 7),
    "中元": (7, 15), "中秋": (8, 15), "重阳": (9, 9), "腊八": (12, 8), "小年": (12, 23),
}
EVE = ("除夕", "大年三十", "年三十")
# nth weekday of month: (month, weekday, n)
FLOATING = {"母亲节": (5, 6, 2), "父亲节": (6, 6, 3), "感恩节": (11, 3, 4)}
EASTER = {"复活节": 0, "耶稣受难日": -2, "复活节星期一": 1}
NAMES = sorted([*SOLAR, *LUNAR, *EVE, *FLOATING, *EASTER, "清明", "寒食"], key=len, reverse=True)


def lunar_to_solar(year: int, month: int, day: int, leap: bool = False) -> date | None:
    """Solar date of a lunar date in lunar year `year`; day 30 of a 29-day month → None."""
    try:
        result: date = lunardate.LunarDate(year, month, day, leap).to_solar_date()
    except (ValueError, IndexError):
        return None
    return result


def lunar_year_of(day: date) -> int:
    return int(lunardate.LunarDate.from_solar_date(day.year, day.month, day.day).year)


def lunar_eve(lunar_year: int) -> date | None:
    """除夕: the day before lunar new year of lunar_year + 1."""
    nxt = lunar_to_solar(lunar_year + 1, 1, 1)
    return None if nxt is None else nxt - timedelta(days=1)


def qingming(year: int) -> date:
    """清明 solar term (Apr 4/5/6), by the usual 21st-century formula."""
    y = year % 100
    c = 4.81 if year >= 2000 else 5.59
    return date(year, 4, int(y * 0.2422 + c) - (y // 4 if year >= 2000 else (y - 1) // 4))


def nth_weekday(year: int, month: int, weekday: int, n: int) -> date | None:
    """n-th (1-based; -1 = last) given weekday of a month."""
    if n < 0:
        last = date(year, month, calendar.monthrange(year, month)[1])
        return last - timedelta(days=(last.weekday() - weekday) % 7)
    first = date(year, month, 1)
    d = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    return d if d.month == month else None


def holiday_in(name: str, year: int) -> date | None:
    """The holiday's date in solar year `year` (lunar ones: the occurrence falling in that year)."""
    if name in SOLAR:
        return date(year, *SOLAR[name])
    if name in FLOATING:
        month, wd, n = FLOATING[name]
        return nth_weekday(year, month, wd, n)
    if name in EASTER:
        sunday: date = easter(year)
        return sunday + timedelta(days=EASTER[name])
    if name in ("清明", "寒食"):
        q = qingming(year)
        return q if name == "清明" else q - timedelta(days=1)
    for ly in (year - 1, year):
        got = lunar_eve(ly) if name in EVE else lunar_to_solar(ly, *LUNAR[name])
        if got is not None and got.year == year:
            return got
    return None


def next_holiday(name: str, today: date, year: int | None = None) -> date | None:
    """This year's occurrence if not past (or the given year's), else next year's."""
    if year is not None:
        return holiday_in(name, year)
    for y in (today.year, today.year + 1):
        got = holiday_in(name, y)
        if got is not None and got >= today:
            return got
    return None


def next_lunar(month: int, day: int, today: date, year: int | None = None) -> date | None:
    """Solar date of lunar month/day: in lunar `year` if given, else the next one at/after today."""
    if year is not None:
        return lunar_to_solar(year, month, day)
    base = lunar_year_of(today)
    for ly in (base - 1, base, base + 1):
        got = lunar_to_solar(ly, month, day)
        if got is not None and got >= today:
            return got
    return None


def is_workday(day: date) -> bool:
    try:
        return bool(chinese_calendar.is_workday(day))
    except NotImplementedError:  # outside the library's years: plain Mon–Fri
        return day.weekday() < 5


def off_days_around(day: date) -> tuple[date, date]:
    """The run of days off (holiday plus adjoining weekend) containing or next to `day`."""
    first = last = day
    while not is_workday(first - timedelta(days=1)) and (day - first).days < 10:
        first -= timedelta(days=1)
    while not is_workday(last + timedelta(days=1)) and (last - day).days < 10:
        last += timedelta(days=1)
    return first, last


def next_workday(after: date) -> date:
    d = after + timedelta(days=1)
    while not is_workday(d):
        d += timedelta(days=1)
    return d
