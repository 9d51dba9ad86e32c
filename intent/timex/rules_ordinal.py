"""Ordinals inside a year or month: 第N周, 第N个星期X, 最后一个周X, 第N个月, 首月, 第N天, 前N天; quarters."""

from __future__ import annotations

import re
from datetime import date, timedelta

from intent.timex import calendar_cn as cal
from intent.timex.lexicon import WD_INDEX, WEEKWORD
from intent.timex.numerals import cn_int
from intent.timex.piece import Ctx, Handler, Piece
from intent.timex.resolve import add_months
from intent.timex.rules_date import MONTH, MONTH_REL, YEAR, month_of, year_of

N = r"[\d零一二两三四五六七八九十百]+"


def _anchor(m: re.Match[str], ctx: Ctx) -> tuple[int, int | None] | None:
    """(year, month or None) named before the ordinal."""
    y = year_of(m, ctx.today)
    mo = month_of(m)
    if m.group("mr"):
        yy, mo = add_months(ctx.today.year, ctx.today.month, MONTH_REL[m.group("mr")])
        y = y or yy
    if mo is not None and y is None:
        y = ctx.today.year if mo >= ctx.today.month else ctx.today.year + 1
    if y is None:
        return None
    return y, mo


def _first_monday(y: int, mo: int | None) -> date:
    first = date(y, mo or 1, 1)
    return first + timedelta(days=(7 - first.weekday()) % 7)


def ordinal(m: re.Match[str], ctx: Ctx) -> Piece | None:
    anchor = _anchor(m, ctx)
    if anchor is None:
        n = cn_int(m.group("n") or "")
        if m.group("unit") == "天" and n and m.group(0).startswith("第"):  # 第三天: counted from today
            return Piece("date", m.start(), m.end(), "nth_day_from_today", day=ctx.today + timedelta(days=n - 1))
        return None
    y, mo = anchor
    b, e = m.start(), m.end()
    n = cn_int(m.group("n")) if m.group("n") else None
    kind = m.group("unit") or ""
    if m.group("last") and mo is not None and m.group("wd"):
        day = cal.nth_weekday(y, mo, WD_INDEX[m.group("wd")], -1)
        return None if day is None else Piece("date", b, e, "nth_weekday", day=day)
    if m.group("first_month"):
        n, kind = 1, "月"
    if n is None or n < 1:
        return None
    if m.group("wd") and mo is not None:
        day = cal.nth_weekday(y, mo, WD_INDEX[m.group("wd")], n)
        return None if day is None else Piece("date", b, e, "nth_weekday", day=day)
    if kind in ("周", "星期", "礼拜"):
        start = _first_monday(y, mo) + timedelta(weeks=n - 1)
        return Piece("span", b, e, "nth_week", start=ctx.at(start), end=ctx.at(start + timedelta(weeks=1)),
                     grain="week")
    if kind == "月" and mo is None and n <= 12:
        end = date(*add_months(y, n, 1), 1)
        return Piece("span", b, e, "nth_month", start=ctx.at(date(y, n, 1)), end=ctx.at(end), grain="month")
    if kind == "天":
        day = date(y, mo or 1, 1) + timedelta(days=n - 1)
        return Piece("date", b, e, "nth_day", day=day)
    return None


def first_n(m: re.Match[str], ctx: Ctx) -> Piece | None:
    anchor = _anchor(m, ctx)
    n = cn_int(m.group("n"))
    if anchor is None or not n:
        return None
    y, mo = anchor
    u = m.group("unit")
    if m.group("side") == "最后":  # 上月最后五天: the tail of the month (or year)
        if u != "天":
            return None
        end = date(*add_months(y, mo or 12, 1), 1)
        return Piece("span", m.start(), m.end(), "last_n_days", start=ctx.at(end - timedelta(days=n)),
                     end=ctx.at(end), grain="day")
    if u in ("周", "星期", "礼拜"):
        start = _first_monday(y, mo)
        end = start + timedelta(weeks=n)
    elif u == "天":
        start = date(y, mo or 1, 1)
        end = start + timedelta(days=n)
    else:
        start = date(y, mo or 1, 1)
        end = date(*add_months(y, mo or 1, n), 1)
    return Piece("span", m.start(), m.end(), "first_n", start=ctx.at(start), end=ctx.at(end), grain="day")


def school_break(m: re.Match[str], ctx: Ctx) -> Piece:
    """暑假 July–August; 寒假 mid-January to the end of February (school calendars vary)."""
    y = year_of(m, ctx.today)
    summer = m.group("brk") == "暑假"
    if y is None:
        y = ctx.today.year if ctx.today < (date(ctx.today.year, 9, 1) if summer else date(ctx.today.year, 3, 1)) \
            else ctx.today.year + 1
    a, z = (date(y, 7, 1), date(y, 9, 1)) if summer else (date(y, 1, 15), date(y, 3, 1))
    return Piece("span", m.start(), m.end(), "school_break", start=ctx.at(a), end=ctx.at(z), grain="day")


def quarter(m: re.Match[str], ctx: Ctx) -> Piece | None:
    if not (m.group("q") or m.group("rel")):
        return None  # 季度报告: the word, not a quarter
    y = year_of(m, ctx.today) or ctx.today.year
    q = cn_int(m.group("q")) if m.group("q") else (ctx.today.month - 1) // 3 + 1
    shift = {"上": -1, "下": 1}.get(m.group("rel") or "", 0)
    if q is None or not 1 <= q <= 4:
        return None
    y, first = add_months(y, (q - 1) * 3 + 1, shift * 3)
    edge = m.group("edge")
    mo0, count = (first + 2, 1) if edge == "末" else ((first, 1) if edge == "初" else (first, 3))
    end = date(*add_months(y, mo0, count), 1)
    return Piece("span", m.start(), m.end(), "quarter", start=ctx.at(date(y, mo0, 1)), end=ctx.at(end),
                 grain="month")


PREFIX = rf"(?:{YEAR})?(?:的)?(?:{MONTH})?(?:的)?"
RULES: list[tuple[str, str, Handler]] = [
    ("nth", rf"{PREFIX}(?:第(?P<n>{N})个?(?P<unit>{WEEKWORD}|月|天)(?P<wd>[一二三四五六日天1-7])?|"
            rf"(?P<last>最后一)个?{WEEKWORD}(?P<wd2>[一二三四五六日天1-7])?|(?P<first_month>首月))",
     lambda m, c: ordinal(_fix_wd(m), c)),
    ("first_n", rf"{PREFIX}(?P<side>前|最后)(?P<n>{N})个?(?P<unit>{WEEKWORD}|天|月)", first_n),
    ("school_break", rf"(?:{YEAR})?(?P<brk>暑假|寒假)", lambda m, c: school_break(m, c)),
    ("quarter", rf"(?:{YEAR})?(?P<rel>上|下|本|这)?个?(?P<q>[一二三四1-4])?季度(?P<edge>末|初)?", quarter),
]


class _WdMatch:
    """A match whose 'wd' group falls back to 'wd2' (the 最后一个星期X branch)."""

    def __init__(self, m: re.Match[str]) -> None:
        self._m = m

    def group(self, name: str) -> str | None:
        if name == "wd":
            return self._m.group("wd") or self._m.group("wd2")
        return self._m.group(name)

    def start(self) -> int:
        return self._m.start()

    def end(self) -> int:
        return self._m.end()


def _fix_wd(m: re.Match[str]) -> re.Match[str]:
    return _WdMatch(m)  # type: ignore[return-value]
