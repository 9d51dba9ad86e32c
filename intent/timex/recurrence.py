"""Recurring sets: 每天/每周X/每个工作日/每月N号/每年M月D日/每年农历 → RRULE + first occurrence."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from intent.timex import calendar_cn as cal
from intent.timex.grammar import Group
from intent.timex.lexicon import BYDAY
from intent.timex.piece import Ctx
from intent.timex.resolve import WINDOWS, hour24
from intent.timex.types import LunarDate, TimeMention


def _clock(g: Group) -> tuple[int, int] | None:
    c = g.clock
    period = g.period or next((p.period for p in g.pieces if p.period), None)  # 每晚十点: 晚 is the period
    if c is not None and c.h is not None:
        if period is None and 1 <= c.h <= 5 and c.ampm is None:
            period = "下午"
        hh, _ = hour24(c.h, period)
        return hh, c.mi
    if period is not None:
        return (12, 0) if period == "中午" else (WINDOWS.get(period, (0, 24))[0] % 24, 0)
    for p in g.pieces:
        if p.period:
            return WINDOWS.get(p.period, (0, 24))[0] % 24, 0
    return None


def set_mention(text: str, g: Group, ctx: Ctx) -> TimeMention | None:
    freq: str | None = None
    workdays: str | None = None
    byday: list[str] = []
    bymonth: int | None = None
    bymonthday: int | None = None
    interval = ""
    fixed: date | None = None
    lunar: LunarDate | None = None
    for p in g.pieces:
        if p.kind == "set":
            if p.rrule and len(g.pieces) == 1:  # 每隔N分钟: complete already
                return TimeMention(span=(g.b, g.e), text=text[g.b:g.e], type="set", rule=p.rule,
                                   start=p.start, rrule=p.rrule)
            if p.rrule:  # 每两周 + 的周五
                freq = p.freq
                interval = p.rrule.partition("INTERVAL=")[2] or interval
                continue
            if p.workdays and freq == "WEEKLY":
                byday = list(BYDAY[:5])
            elif p.workdays:
                workdays, freq = p.workdays, freq or "DAILY"
            elif "nth_byday" in p.extra:
                byday, freq = [p.extra["nth_byday"]], "MONTHLY"
            elif "byday" in p.extra:
                byday, freq = p.extra["byday"].split(","), "WEEKLY"
            elif freq is None or (freq == "DAILY" and workdays):
                freq = freq or p.freq
            interval = p.extra.get("interval", interval)
            if "bymonthday" in p.extra:
                bymonthday = int(p.extra["bymonthday"])
        elif p.kind == "date" and p.wd is not None and p.day is None:
            byday.append(BYDAY[p.wd])
            freq = "WEEKLY"
        elif p.kind == "date" and p.rule == "lunar_date" and "lm" in p.extra:
            lunar, freq = LunarDate(int(p.extra["lm"]), int(p.extra["ld"])), "YEARLY"
        elif p.kind == "last_day":
            bymonthday, freq = -1, "MONTHLY"
        elif p.kind == "date" and p.rule == "holiday" and p.day is not None:
            fixed, freq = p.day, "YEARLY"
        elif p.kind == "date" and p.d is not None:
            bymonthday = p.d
            if p.m is not None and freq in (None, "YEARLY"):
                bymonth, freq = p.m, "YEARLY"
            else:
                freq = "MONTHLY"
        elif p.kind == "span" and p.m is not None:
            bymonth, freq = p.m, "YEARLY"
        elif p.kind in ("period", "clock") and freq is None:
            freq = "DAILY"
    if len(byday) == 2 and text[g.b:g.e].count("到") + text[g.b:g.e].count("至") + text[g.b:g.e].count("-"):
        a, b = BYDAY.index(byday[0]), BYDAY.index(byday[1])
        byday = list(BYDAY[a:b + 1]) if a <= b else byday
    if freq is None:
        return None
    rrule = f"FREQ={freq}" + (f";INTERVAL={interval}" if interval else "")
    if byday:
        rrule += ";BYDAY=" + ",".join(byday)
    if bymonth:
        rrule += f";BYMONTH={bymonth}"
    if bymonthday:
        rrule += f";BYMONTHDAY={bymonthday}"
    hm = _clock(g) or (0, 0)
    start = _first(ctx, hm, byday, bymonth, bymonthday, workdays, fixed, lunar)
    rule = "set(" + "+".join(p.rule for p in g.pieces) + ")"
    return TimeMention(span=(g.b, g.e), text=text[g.b:g.e], type="set", rule=rule, start=start, rrule=rrule,
                       workdays=workdays, lunar=lunar, has_clock=g.clock is not None,
                       period=g.period or next((p.period for p in g.pieces if p.period), None))


def _first(ctx: Ctx, hm: tuple[int, int], byday: list[str], bymonth: int | None, bymonthday: int | None,
           workdays: str | None, fixed: date | None, lunar: LunarDate | None) -> datetime | None:
    """First occurrence at or after now."""
    floor = ctx.now.replace(second=0, microsecond=0)
    if lunar is not None:
        for k in (0, 1):
            got = cal.next_lunar(lunar.month, lunar.day, ctx.today + timedelta(days=k))
            if got is not None and ctx.at(got, *hm) >= floor:
                return ctx.at(got, *hm)
        return None
    if fixed is not None:
        at = ctx.at(fixed, *hm)
        return at if at >= floor else ctx.at(fixed.replace(year=fixed.year + 1), *hm)
    for k in range(800):
        day = ctx.today + timedelta(days=k)
        if byday and not _on_byday(day, byday):
            continue
        if bymonth and day.month != bymonth:
            continue
        if bymonthday and day.day != bymonthday and not (
                bymonthday == -1 and (day + timedelta(days=1)).day == 1):
            continue
        if workdays == "cn" and not cal.is_workday(day):
            continue
        at = ctx.at(day, *hm)
        if at >= floor:
            return at
    return None


def _on_byday(day: date, byday: list[str]) -> bool:
    """MO / -1FR / 2WE: the weekday, or its nth (last = -1) occurrence in the month."""
    for code in byday:
        wd, n = BYDAY.index(code[-2:]), code[:-2]
        if BYDAY[day.weekday()] == code[-2:] and (not n or cal.nth_weekday(day.year, day.month, wd, int(n)) == day):
            return True
    return False
