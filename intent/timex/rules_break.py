"""Arithmetic on holiday breaks and year ends: 春节后第一个工作日, 五一第二天, 节后第一天, 年前, 年底前.

"The holiday" is the occurrence whose official break is current or still ahead (on 10-03, 国庆节后 is this
year's). 年前/过年前/春节前 as a deadline is the last workday before the Spring Festival break; 年底前 is
December 31.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from intent.timex import calendar_cn as cal
from intent.timex.numerals import cn_int
from intent.timex.piece import Ctx, Handler, Piece

_OFFICIAL = ("元旦", "春节", "清明", "劳动节", "端午", "中秋", "国庆")
_ALIAS = {"五一": "劳动节", "十一": "国庆", "过年": "春节", "新年": "元旦", "国庆节": "国庆", "端午节": "端午",
          "中秋节": "中秋", "清明节": "清明", "劳动": "劳动节", "春": "春节"}
_NAMES = "春节|过年|元旦|新年|清明节?|劳动节|五一|端午节?|中秋节?|国庆节?|十一"


def _break(name: str, today: date) -> tuple[date, date] | None:
    """The official break (first, last day off) of `name` that is current or next."""
    for y in (today.year - 1, today.year, today.year + 1):
        day = cal.holiday_in(name, y)
        if day is None:
            continue
        first, last = cal.off_days_around(day)
        if last >= today:
            return first, last
    return None


def _next_break(today: date) -> tuple[date, date] | None:
    found = [b for b in (_break(n, today) for n in _OFFICIAL) if b is not None]
    return min(found, default=None)


def after_break(m: re.Match[str], ctx: Ctx) -> Piece | None:
    raw = m.group("name")
    name = _ALIAS.get(raw, raw) if raw else None
    span = _break(name, ctx.today) if name else _next_break(ctx.today)
    n = cn_int(m.group("n"))
    if span is None or not n or n > 60:
        return None
    first, last = span
    if m.group("after") is None:  # 五一第二天: the Nth day of the break
        day = first + timedelta(days=n - 1)
    elif m.group("unit") == "工作日":
        day = last
        for _ in range(n):
            day = cal.next_workday(day)
    else:
        day = last + timedelta(days=n)
    return Piece("date", m.start(), m.end(), "after_break", day=day)


def before_new_year(m: re.Match[str], ctx: Ctx) -> Piece | None:
    span = _break("春节", ctx.today)
    if span is None:
        return None
    day = span[0] - timedelta(days=1)
    while not cal.is_workday(day):
        day -= timedelta(days=1)
    return Piece("date", m.start(), m.end(), "before_new_year", day=day)


def before_year_end(m: re.Match[str], ctx: Ctx) -> Piece:
    year = ctx.today.year + (1 if m.group("next") else 0)
    return Piece("date", m.start(), m.end(), "before_year_end", day=date(year, 12, 31))


RULES: list[tuple[str, str, Handler]] = [
    ("after_break", rf"(?:(?P<name>{_NAMES})(?:假期|长假|假)?|节|假期|放假)(?P<after>后|过后|之后|以后|结束后|回来后?)?"
                    r"的?第(?P<n>\d{1,2}|[一二两三四五六七八九十]+)个?(?P<unit>工作日|天)", after_break),
    ("before_new_year", r"(?<![\d零一二两三四五六七八九十几多去今明前后来当同上下本每])(?:过)?年前"
                        r"|春节前(?!夕|[一两二三四五六七八九十\d]{1,3}(?:天|日|周|个?星期|个?礼拜))",
     before_new_year),
    ("before_year_end", r"(?:今年|(?P<next>明年))?(?:年底|年末|年终)(?:之前|以前|前)", before_year_end),
]
