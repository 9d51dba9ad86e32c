"""Calendar rules: named holidays (and their official breaks), lunar dates, the next workday."""

from __future__ import annotations

import re
from datetime import timedelta

from intent.timex import calendar_cn as cal
from intent.timex.numerals import cn_int
from intent.timex.piece import Ctx, Handler, Piece
from intent.timex.rules_date import YEAR, year_of


def holiday(m: re.Match[str], ctx: Ctx) -> Piece | None:
    name = m.group("name")
    y = year_of(m, ctx.today)
    day = cal.next_holiday(name, ctx.today, y)
    if day is None:
        return None
    adj = m.group("adj") or ""
    if adj.endswith(("假期", "长假", "黄金周", "放假", "期间")):
        first, last = cal.off_days_around(day)
        return Piece("span", m.start(), m.end(), "holiday_break", start=ctx.at(first),
                     end=ctx.at(last + timedelta(days=1)), grain="day")
    if m.group("dir"):  # 国庆前三天 / 春节前一周 / 元旦后一天
        n = cn_int(m.group("n")) or 0
        days = n * (7 if m.group("unit").endswith(("周", "星期", "礼拜")) else 1)
        day += timedelta(days=-days if m.group("dir") == "前" else days)
    elif adj == "前夕":
        day -= timedelta(days=1)
    return Piece("date", m.start(), m.end(), "holiday", day=day)


LUNAR_MONTH = {"正": 1, "冬": 11, "腊": 12}


def lunar(m: re.Match[str], ctx: Ctx) -> Piece | None:
    if m.group("big"):
        big = m.group("big")
        mo, d = (12, 30) if big == "三十" else (1, cn_int(big[1:]) or 0)
    else:
        mtxt, dtxt = m.group("lm"), m.group("ld")
        if not (m.group("nl") or mtxt in LUNAR_MONTH or dtxt.startswith(("初", "廿"))):
            return None
        mo = LUNAR_MONTH.get(mtxt) or cn_int(mtxt.lstrip("闰")) or 0
        d = cn_int(dtxt.lstrip("初")) or 0
    y = year_of(m, ctx.today)
    if (mo, d) == (12, 30):
        got = cal.lunar_to_solar(y, 12, 30) if y else None
        if got is None:
            base = y if y is not None else cal.lunar_year_of(ctx.today) - 1
            for ly in (base, base + 1) if y is None else (y,):
                got = cal.lunar_eve(ly)
                if (got is not None and got >= ctx.today) or y is not None:
                    break
    else:
        got = cal.next_lunar(mo, d, ctx.today, y)
    if got is None:
        return Piece("void", m.start(), m.end(), "lunar_date")
    return Piece("date", m.start(), m.end(), "lunar_date", day=got, extra={"lm": str(mo), "ld": str(d)})


def next_workday(m: re.Match[str], ctx: Ctx) -> Piece:
    return Piece("date", m.start(), m.end(), "next_workday", day=cal.next_workday(ctx.today))


LDAY = (r"初[一二三四五六七八九十]|廿[一二三四五六七八九]?|二十[一二三四五六七八九]?|三十|十[一二三四五六七八九]?"
        r"|[一二三四五六七八九]|30|[12]\d|[1-9]")
HOL = "|".join(n for n in cal.NAMES if n not in ("十一", "六一", "七一", "八一", "三八"))
def workdays_ahead(m: re.Match[str], ctx: Ctx) -> Piece | None:
    """N个工作日内 → [now, end of the Nth workday); N个工作日后 → that workday."""
    n = cn_int(m.group("n"))
    if not n or n > 366:
        return None
    day = ctx.today
    for _ in range(n):
        day = cal.next_workday(day)
    if m.group("post").endswith("后"):
        return Piece("date", m.start(), m.end(), "workdays_after", day=day)
    return Piece("span", m.start(), m.end(), "within_workdays", start=ctx.now,
                 end=ctx.at(day + timedelta(days=1)), grain="day")


RULES: list[tuple[str, str, Handler]] = [
    ("workdays_ahead", r"(?P<n>\d{1,3}|[零一二两三四五六七八九十百]+)个?工作日(?P<post>以内|之内|内|以后|之后|后)",
     workdays_ahead),
    ("lunar_date", rf"(?:{YEAR})?(?:的)?(?:大年(?P<big>初[一二三四五六七八九十]|三十)|(?P<nl>农历|阴历)?"
                   rf"(?P<lm>正|腊|冬|闰?十[一二]?|闰?[一二三四五六七八九]|1[0-2]|[1-9])月(?P<ld>{LDAY})(?![\d])(?:日|号)?)",
     lunar),
    ("holiday", rf"(?:{YEAR})?(?:五一)?(?:国际)?(?P<name>{HOL})(?:节|日)?"
                rf"(?P<adj>(?P<dir>[前后])(?P<n>[一两二三四五六七八九十\d]{{1,3}})(?P<unit>天|日|周|个?星期|个?礼拜)"
                rf"|前夕|小?长?假期|长假|黄金周|放假|期间)?"
                rf"(?![点时:号日月\d个])", holiday),
    ("next_workday", r"下一?个?工作日", next_workday),
]
