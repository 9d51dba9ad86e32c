"""Date rules: relative days, weekdays, Chinese and numeric dates, months, years, holidays, lunar."""

from __future__ import annotations

import re
from datetime import date, timedelta

from intent.timex.lexicon import CN, WD_INDEX, WEEKWORD
from intent.timex.numerals import cn_int
from intent.timex.piece import Ctx, Handler, Piece
from intent.timex.resolve import add_months, month_day, two_digit_year, valid, week_monday

REL_DAY = {
    "大大后天": 4, "大后天": 3, "大后日": 3, "后天": 2, "后日": 2, "明天": 1, "明日": 1, "明儿": 1,
    "次日": 1, "翌日": 1, "第二天": 1, "隔天": 1, "今天": 0, "今日": 0, "本日": 0, "当天": 0, "当日": 0,
    "今儿": 0, "全天": 0, "整天": 0,
    "昨天": -1, "昨日": -1, "昨儿": -1, "前天": -2, "前日": -2, "大前天": -3, "大前日": -3,
}
DAY_PERIOD = {"今晚": (0, "晚上"), "今早": (0, "早上"), "今晨": (0, "早上"), "今夜": (0, "晚上"),
              "明早": (1, "早上"), "明晨": (1, "早上"), "明晚": (1, "晚上"), "昨晚": (-1, "晚上"),
              "昨夜": (-1, "晚上"), "当晚": (0, "晚上")}
TWO_DAYS = {"明后天": 1, "明后两天": 1, "今明两天": 0, "今明天": 0}
YEAR_REL = {"今年": 0, "本年": 0, "这一年": 0, "当年": 0, "同年": 0, "明年": 1, "来年": 1, "下年": 1, "次年": 1,
            "上年": -1, "去年": -1, "前年": -2, "后年": 2}
MONTH_REL = {"本月": 0, "这个月": 0, "这月": 0, "当月": 0, "同月": 0, "下个月": 1, "下月": 1,
             "下一个月": 1, "上个月": -1, "上月": -1, "上一个月": -1}
WEEK_PRE = {None: None, "这": 0, "本": 0, "今": 0, "下": 1, "上": -1, "下下": 2, "上上": -2}

CYEAR = r"[零一二三四五六七八九]{2,4}|[一二两]千[零一二三四五六七八九十]{0,3}"
YEAR = rf"(?:(?<!\d)(?P<yn>\d{{4}}|\d{{2}})|(?P<yc>{CYEAR}))年 ?|(?P<yr>{'|'.join(YEAR_REL)})"
MONTH = (rf"(?:(?<!\d)(?P<mn>1[0-2]|0?[1-9])|(?P<mc>十[一二]?|[一二三四五六七八九]))(?P<msp> ?)月份?"
         rf"|(?P<mr>{'|'.join(MONTH_REL)})")
DAYN = r"(?:(?<!\d)(?P<dn>3[01]|[12]\d|0?[1-9])|(?P<dc>[零一二三四五六七八九十廿卅]{1,3}))"
EDGE = r"(?P<edge>月?底|月?末|月?初)"


def year_of(m: re.Match[str], today: date) -> int | None:
    if m.group("yn"):
        v = int(m.group("yn"))
        return v if len(m.group("yn")) == 4 else two_digit_year(v, today)
    if m.group("yc"):
        v = cn_int(m.group("yc")) or 0
        return v if v >= 100 else two_digit_year(v, today)
    if m.group("yr"):
        return today.year + YEAR_REL[m.group("yr")]
    return None


def month_of(m: re.Match[str]) -> int | None:
    raw = m.group("mn") or m.group("mc")
    return cn_int(raw) if raw else None


def _day(m: re.Match[str]) -> int | None:
    raw = m.group("dn") or m.group("dc")
    v = cn_int(raw) if raw else None
    return v if v is not None and 1 <= v <= 31 else None


def ymd(m: re.Match[str], ctx: Ctx) -> Piece | None:
    today, rule = ctx.today, "date_ymd"
    y, mo, d = year_of(m, today), month_of(m), _day(m) if (m.group("dn") or m.group("dc")) else None
    if (m.group("dn") or m.group("dc")) and d is None:
        return None
    shift = MONTH_REL.get(m.group("mr") or "")
    if shift is not None:
        yy, mo = add_months(y or today.year, today.month, shift)
        y = yy
    if mo is None or (m.group("msp") and d is None):
        return None  # 10 月 alone: ten months
    if m.group("edge"):
        y = y if y is not None else (today.year if mo >= today.month else today.year + 1)
        if not valid(y, mo, 1):
            return None
        e = m.group("edge")[-1]
        first = date(y, mo, 1)
        last = date(*add_months(y, mo, 1), 1) - timedelta(days=1)
        return Piece("date", m.start(), m.end(), "month_edge", day=last if e in "底末" else first)
    if d is None:  # a month
        if y is None:
            y = today.year if mo >= today.month else today.year + 1
        start = date(y, mo, 1)
        return Piece("span", m.start(), m.end(), "month", start=ctx.at(start),
                     end=ctx.at(date(*add_months(y, mo, 1), 1)), grain="month", y=y, m=mo)
    if y is not None:
        if not valid(y, mo, d):
            return Piece("void", m.start(), m.end(), rule)
        return Piece("date", m.start(), m.end(), rule, day=date(y, mo, d), y=y, m=mo, d=d)
    day = month_day(mo, d, today)
    if day is None:
        return Piece("void", m.start(), m.end(), rule)
    return Piece("date", m.start(), m.end(), "date_md", day=day, m=mo, d=d)


def day_alone(m: re.Match[str], ctx: Ctx) -> Piece | None:
    d = _day(m)
    if d is None:
        return None
    return Piece("date", m.start(), m.end(), "date_day", d=d)


def rel_day(m: re.Match[str], ctx: Ctx) -> Piece:
    w = m.group(0)
    if w in TWO_DAYS:
        first = ctx.today + timedelta(days=TWO_DAYS[w])
        return Piece("span", m.start(), m.end(), "two_days", start=ctx.at(first),
                     end=ctx.at(first + timedelta(days=2)), grain="day")
    if w in DAY_PERIOD:
        n, period = DAY_PERIOD[w]
        return Piece("date", m.start(), m.end(), "day_period", day=ctx.today + timedelta(days=n),
                     period=period, extra={"word": w})
    return Piece("date", m.start(), m.end(), "day_relative", day=ctx.today + timedelta(days=REL_DAY[w]))


def weekday(m: re.Match[str], ctx: Ctx) -> Piece | None:
    pre = m.group("pre")
    wk = WEEK_PRE[pre]
    if m.group("wd") == "末":
        mon = week_monday(ctx.today, wk or 0)
        return Piece("span", m.start(), m.end(), "weekend", start=ctx.at(mon + timedelta(days=5)),
                     end=ctx.at(mon + timedelta(days=7)), grain="day", wk=wk, wd=5)
    return Piece("date", m.start(), m.end(), "weekday", wd=WD_INDEX[m.group("wd")], wk=wk)


def week_span(m: re.Match[str], ctx: Ctx) -> Piece:
    mon = week_monday(ctx.today, WEEK_PRE[m.group("pre")] or 0)
    return Piece("span", m.start(), m.end(), "week", start=ctx.at(mon), end=ctx.at(mon + timedelta(weeks=1)),
                 grain="week")


def year_span(m: re.Match[str], ctx: Ctx) -> Piece | None:
    y = year_of(m, ctx.today)
    if y is None or not 1 <= y <= 9998:
        return None
    edge = (m.group("edge") or "").lstrip("年")
    if edge == "伊始":
        return Piece("span", m.start(), m.end(), "year_start", start=ctx.at(date(y, 1, 1)),
                     end=ctx.at(date(y, 2, 1)), grain="month")
    if edge in ("底", "末", "终"):
        return Piece("span", m.start(), m.end(), "year_end", start=ctx.at(date(y, 11, 1)),
                     end=ctx.at(date(y + 1, 1, 1)), grain="month")
    if edge == "初":
        return Piece("span", m.start(), m.end(), "year_start", start=ctx.at(date(y, 1, 1)),
                     end=ctx.at(date(y, 3, 1)), grain="month")
    return Piece("span", m.start(), m.end(), "year", start=ctx.at(date(y, 1, 1)),
                 end=ctx.at(date(y + 1, 1, 1)), grain="year", y=y)


def numeric(m: re.Match[str], ctx: Ctx) -> Piece | None:
    g = m.groupdict()
    y = int(g["y"]) if g.get("y") else None
    mo, d = int(g["m"]), int(g["d"])
    if y is not None and len(g["y"]) == 2:
        y = two_digit_year(y, ctx.today)
    rule = "date_numeric"
    if y is None:
        day = month_day(mo, d, ctx.today)
        return None if day is None else Piece("date", m.start(), m.end(), rule, day=day, m=mo, d=d)
    if not valid(y, mo, d):
        return None
    p = Piece("date", m.start(), m.end(), rule, day=date(y, mo, d), y=y, m=mo, d=d)
    if g.get("hh"):
        p.h, p.mi, p.s = int(g["hh"]), int(g["mm"]), int(g["ss"]) if g.get("ss") else None
        p.extra["h24"] = "1"
    return p


def dmy(m: re.Match[str], ctx: Ctx) -> Piece | None:
    """A/B/YYYY and A-B-YY: day-first unless that is impossible; 2-digit lead → YY-M-D."""
    a, b, c = m.group("a"), m.group("b"), m.group("c")
    if len(c) == 1 and not (m.group("sep") == "-" and len(a) == 2):
        return None
    if m.group("sep") == "-" and len(a) == 2 and len(c) <= 2:
        y, mo, d = two_digit_year(int(a), ctx.today), int(b), int(c)
    else:
        y = int(c) if len(c) == 4 else two_digit_year(int(c), ctx.today)
        d, mo = int(a), int(b)
        if mo > 12 >= d:
            d, mo = mo, d
    if not valid(y, mo, d):
        return None
    return Piece("date", m.start(), m.end(), "date_dmy", day=date(y, mo, d), y=y, m=mo, d=d)


def _alt(words: object) -> str:
    return "|".join(sorted(map(str, words), key=len, reverse=True))  # type: ignore[call-overload]


WD = "(?:[一二三四五六日天末]|[1-7](?!\\d))"
# 本周日程 / 下周日历: 日 starts a noun there (the week's agenda), not Sunday.
_DAY_NOUN = "程|历|记|志|报|常"
_NOT_A_DAY = rf"(?!(?<=日)(?:{_DAY_NOUN}))"

RULES: list[tuple[str, str, Handler]] = [
    ("date_ymd", rf"(?:{YEAR})?(?:的)?(?:{MONTH})"
                 rf"(?:的? ?{DAYN} ?(?P<ds>日|号)?(?(ds)|(?![\d点时:.个天年月分秒小周{CN}]))|{EDGE})?",
     ymd),
    # (never a house number: 人民路8号, 胡同12号)
    ("date_day", rf"(?<![路街巷弄同\d{CN}])(?:(?P<mr>{_alt(MONTH_REL)})的?)?(?:{DAYN})(?:日|号)(?![\d])",
     lambda m, c: _day_rel(m, c)),
    ("date_day_bare", rf"(?<=[到至~\-])(?:{DAYN})(?![\d点时:.分号日月个天年周小半刻{CN}])",
     lambda m, c: _bare_day(m, c)),
    ("day_relative", _alt([*REL_DAY, *DAY_PERIOD, *TWO_DAYS]), rel_day),
    ("weekday",
     rf"(?:(?P<pre>上上|下下|上|下|这|本|今)(?:个|一)?{WEEKWORD}的?{WEEKWORD}?|{WEEKWORD})(?P<wd>{WD}){_NOT_A_DAY}",
     weekday),
    ("week", rf"(?P<pre>上上|下下|上|下|这|本)(?:个|一)?{WEEKWORD}(?![一二三四五六天末1-7]|日(?!{_DAY_NOUN}))",
     week_span),
    ("year", rf"(?:{YEAR})(?P<edge>年?底|年?末|年?终|年?初|伊始)?|(?P<edge2>年底|年末|年初)",
     lambda m, c: _year_edge(m, c)),
    ("date_iso", r"(?<![\d.])(?P<y>\d{4})[-/.年](?P<m>1[0-2]|0?[1-9])[-/.月](?P<d>3[01]|[12]\d|0?[1-9])"
                 r"(?:(?:[T\s-]?|(?=\d\d:))(?P<hh>[01]\d|2[0-3]|\d):(?P<mm>[0-5]\d)(?::(?P<ss>[0-5]\d))?|(?![\d.]))"
                 r"(?:时)?", numeric),
    ("date_space", r"(?<!\d)(?P<y>\d{4}) (?P<m>1[0-2]|0[1-9]) (?P<d>3[01]|[12]\d|0[1-9])(?!\d)", numeric),
    ("date_compact", r"(?<!\d)(?P<y>(?:19|20)\d\d)(?P<m>1[0-2]|0[1-9])(?P<d>3[01]|[12]\d|0[1-9])(?!\d)", numeric),
    ("date_dmy", r"(?<![\d.:])(?P<a>\d{1,2})(?P<sep>[-/.])(?P<b>\d{1,2})(?P=sep)(?P<c>\d{4}|\d{1,2})(?![\d.:])", dmy),
    ("date_md", r"(?<![\d./:\-])(?P<m>1[0-2]|0?[1-9])/(?P<d>3[01]|[12]\d|0?[1-9])号?(?![\d./:%])", numeric),
    ("date_md_dash", r"(?<![\d.\-])(?P<m>1[0-2]|0[1-9])-(?P<d>3[01]|[12]\d|0[1-9])(?![\d\-])", numeric),
    ("date_md_dot", r"(?<![\d.A-Za-z])(?P<m>1[0-2]|0?[1-9])\.(?P<d>3[01]|[12]\d|0?[1-9])"
                    r"(?![\d.%A-Za-z版倍元米度个斤克块件人次岁楼层栋升吨亿万千百磅折])",
     numeric),
    ("month_edge", r"(?<![\d一二三四五六七八九十个])(?:本月|这个月|这月)?(?P<e>月底|月末|月初)",
     lambda m, c: _edge(m, c)),
]


def _day_rel(m: re.Match[str], ctx: Ctx) -> Piece | None:
    p = day_alone(m, ctx)
    if p is None or not m.group("mr"):
        return p
    y, mo = add_months(ctx.today.year, ctx.today.month, MONTH_REL[m.group("mr")])
    if p.d is None or not valid(y, mo, p.d):
        return Piece("void", m.start(), m.end(), "date_day")
    return Piece("date", m.start(), m.end(), "date_month_day", day=date(y, mo, p.d), y=y, m=mo, d=p.d)


def _bare_day(m: re.Match[str], ctx: Ctx) -> Piece | None:
    """二月十三到十五: a bare number after 到 is a day, but only as the end of a date range."""
    d = _day(m)
    return None if d is None else Piece("date", m.start(), m.end(), "date_day_bare", d=d, weak=True)


def _edge(m: re.Match[str], ctx: Ctx) -> Piece:
    t = ctx.today
    if m.group("e") == "月初":
        y, mo = (t.year, t.month) if t.day == 1 else add_months(t.year, t.month, 1)
        return Piece("date", m.start(), m.end(), "month_edge", day=date(y, mo, 1))
    last = date(*add_months(t.year, t.month, 1), 1) - timedelta(days=1)
    return Piece("date", m.start(), m.end(), "month_edge", day=last)


def _year_edge(m: re.Match[str], ctx: Ctx) -> Piece | None:
    if m.group("edge2"):
        e = m.group("edge2")[-1]
        y = ctx.today.year
        if e == "初":
            return Piece("span", m.start(), m.end(), "year_start", start=ctx.at(date(y, 1, 1)),
                         end=ctx.at(date(y, 3, 1)), grain="month")
        return Piece("span", m.start(), m.end(), "year_end", start=ctx.at(date(y, 11, 1)),
                     end=ctx.at(date(y + 1, 1, 1)), grain="month")
    return year_span(m, ctx)
