"""Durations and what surrounds them: 三天, 半小时后, 提前十分钟, 未来7天, 前两天, 每隔15分钟."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, timedelta

from intent.timex.lexicon import CN
from intent.timex.numerals import cn_int
from intent.timex.piece import Ctx, Handler, Piece
from intent.timex.resolve import add_months
from intent.timex.types import Grain

UNIT_SECS = {"秒": 1, "分": 60, "刻": 900, "时": 3600, "钟": 3600, "天": 86400, "日": 86400, "周": 604800,
             "星": 604800, "礼": 604800, "晚": 0, "夜": 0}
UNIT_MONTHS = {"月": 1, "季": 3, "年": 12}
# A week unit followed by a weekday is a day, not a duration (添加一个周五晚上的提醒), but 两周一次 stays a duration.
_NOT_WEEKDAY = r"(?![一二三四五六日天1-7](?!次|回|遍))"
UNITS = rf"秒钟?|分钟|分(?=半|[\d{CN}]+秒)|刻钟|小时|个?钟头|天|日|晚|夜|周{_NOT_WEEKDAY}|星期{_NOT_WEEKDAY}|" \
        rf"礼拜{_NOT_WEEKDAY}|月|季度|年"
NUMBER = rf"(?:\d[\d,]*(?:\.\d+)?万?|[{CN}万]+|俩|几)"


def _comp(named: bool, units: str = UNITS) -> str:
    def g(name: str) -> str:
        return f"?P<{name}>" if named else "?:"

    return rf"(?:({g('n')}{NUMBER})\s*多?个?多?({g('h1')}半)?|({g('hn')}半)个?)({g('u')}{units})({g('h2')}半钟?)?"


_COMP = re.compile(_comp(True, UNITS + "|分|时"))
PRE = r"过|提前|未来的?|最近的?|近|过去的?|之后|之前|还剩|上|前|下|后|每隔|隔|每"
POST = r"之后|以后|后|之前|以前|前|以内|之内|内|里"
GRAIN: dict[str, Grain] = {"秒": "second", "分": "minute", "刻": "minute", "时": "hour", "钟": "hour",
                           "天": "day", "日": "day", "周": "week", "星": "week", "礼": "week",
                           "月": "month", "季": "month", "年": "year"}


def _parse(text: str) -> tuple[int, int, str] | None:
    """(seconds, months, smallest unit char) of a chain like 8天又二十个小时, 一个半小时."""
    secs, months, last = 0.0, 0.0, ""
    for c in _COMP.finditer(text):
        raw = c.group("n")
        if c.group("hn"):
            n = 0.5
        elif raw in ("几",):
            return None
        else:
            raw = raw.replace(",", "")
            wan = raw.endswith("万") and raw[:-1].replace(".", "").isdigit()
            num: float | None = float(raw[:-1]) * 10000 if wan else (
                float(raw) if raw.replace(".", "").isdigit() else cn_int(raw))
            if num is None:
                return None
            n = num + (0.5 if c.group("h1") or c.group("h2") else 0)
        u = c.group("u")
        key = "时" if u in ("小时",) else ("钟" if "钟头" in u else u[0])
        if key in UNIT_MONTHS:
            months += n * UNIT_MONTHS[key]
        else:
            secs += n * UNIT_SECS[key]
        last = key if key not in ("晚", "夜") else last
    if secs == 0 and months == 0:
        return None
    whole = int(months)
    return round(secs + (months - whole) * 30 * 86400), whole, last


_DATEY_MONTH = re.compile(r"(?<![个\s多半])月")
_DATEY_DAY = re.compile(rf"(?<![\d{CN}])(?:[12]?\d|3[01]|[一二三四五六七八九十廿卅]{{1,3}})日")


def _datey(body: str, framed: bool, pre: str = "") -> bool:
    """Does the chain read as a calendar date (3月, 26日) rather than a length of time?"""
    if _DATEY_MONTH.search(body) is not None and not pre:
        return True
    return not framed and _DATEY_DAY.search(body) is not None


def _trunc(now: datetime, g: Grain) -> datetime:
    base = now.replace(microsecond=0)
    if g == "second":
        return base
    base = base.replace(second=0)
    if g == "minute":
        return base
    base = base.replace(minute=0)
    if g == "hour":
        return base
    base = base.replace(hour=0)
    if g == "week":
        return base - timedelta(days=base.weekday())
    if g == "month":
        return base.replace(day=1)
    return base.replace(month=1, day=1) if g == "year" else base


def _shift(at: datetime, secs: int, months: int, sign: int, absolute: bool = False) -> datetime:
    """Calendar units move the wall clock (3天后 keeps the hour); hours and minutes are elapsed time, so
    三个小时后 across a DST change is 3 real hours (aware arithmetic in one zone would be wall-clock)."""
    if months:
        y, mo = add_months(at.year, at.month, sign * months)
        at = at.replace(year=y, month=mo, day=min(at.day, calendar.monthrange(y, mo)[1]))
    if absolute and at.tzinfo is not None:
        return (at.astimezone(UTC) + timedelta(seconds=sign * secs)).astimezone(at.tzinfo)
    return at + timedelta(seconds=sign * secs)


def duration(m: re.Match[str], ctx: Ctx) -> Piece | None:
    pre, post, body = m.group("pre") or "", m.group("post") or "", m.group("body")
    parsed = (90, 0, "分") if body == "分半" else _parse(body)
    if parsed is None:
        return None
    secs, months, unit = parsed
    if re.search(r"\d{3,}\s*年", body):
        return None  # 2018年: a year, not 2018 years
    b, e = m.start(), m.end()
    total = secs + months * 30 * 86400
    grain = GRAIN.get(unit, "day")
    if _datey(body, bool(pre or post), pre):
        return None  # 29日, 3月, 4月26日20时: dates, not durations
    if pre == "过" and not post:
        post = "后"
        pre = ""
    if pre in ("上", "下") and body in ("半年", "半个月", "半月", "半周"):
        return _half(m, ctx, pre, body)
    if pre in ("每隔", "隔", "每"):
        return _every(m, ctx, secs, months, unit)
    if pre == "提前":
        return Piece("dur", b, e, "lead", secs=total, lead=True)
    now = ctx.now
    real = grain in ("hour", "minute", "second") and not months
    if (pre.startswith(("未来", "最近")) and grain in ("day", "week")) or (pre == "最近" and grain == "month"):
        start = ctx.at(ctx.today)
        return Piece("span", b, e, "next_days", start=start, end=_shift(start, secs, months, 1), grain="day")
    if pre.startswith("未来") or pre == "之后":
        return Piece("span", b, e, "next_span", start=now, end=_shift(now, secs, months, 1, real), grain="second")
    if pre.startswith(("最近", "过去")) or pre in ("近", "之前"):
        return Piece("span", b, e, "past_span", start=_shift(now, secs, months, -1, real), end=now,
                     grain="second")
    if pre in ("前", "后") and not post and b > 0 and m.string[b - 1] in "推延挪移调往":
        return Piece("dur", b + len(pre), e, "duration", secs=total)  # 推后一小时: by how much, not the next hour
    if pre in ("上", "前", "下", "后"):
        t = _trunc(now, grain)
        if pre in ("上", "前"):
            return Piece("span", b, e, "last_n", start=_shift(t, secs, months, -1), end=t, grain=grain)
        step = _shift(t, *((GRAIN_SECS.get(grain, 0), 0) if grain not in ("month", "year") else
                           (0, 1 if grain == "month" else 12)), 1)
        return Piece("span", b, e, "next_n", start=step, end=_shift(step, secs, months, 1), grain=grain)
    if post in ("以内", "之内", "内", "里"):
        return Piece("span", b, e, "within", start=now, end=_shift(now, secs, months, 1, real), grain="second")
    if post:
        sign = -1 if "前" in post else 1
        at = _shift(now, secs, months, sign, real)
        if grain in ("day", "week", "month", "year"):
            return Piece("date", b, e, "days_from_now", day=at.date(),
                         grain="week" if grain == "week" else "day")
        at = at.replace(second=0, microsecond=0) if sign > 0 else at
        return Piece("rel", b, e, "from_now", start=at, grain="minute", relative=True)
    return Piece("dur", b, e, "duration", secs=total)


GRAIN_SECS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}


def _half(m: re.Match[str], ctx: Ctx, pre: str, body: str) -> Piece:
    """上半年/下半年, 上半月/下半月, 上半周/下半周 of the current year, month or week."""
    t = ctx.today
    if body == "半年":
        a, z = (date(t.year, 1, 1), date(t.year, 7, 1)) if pre == "上" else (
            date(t.year, 7, 1), date(t.year + 1, 1, 1))
    elif body == "半周":
        mon = t - timedelta(days=t.weekday())
        a, z = (mon, mon + timedelta(days=3)) if pre == "上" else (mon + timedelta(days=3), mon + timedelta(days=7))
    else:
        y, mo = add_months(t.year, t.month, 1)
        a, z = (date(t.year, t.month, 1), date(t.year, t.month, 16)) if pre == "上" else (
            date(t.year, t.month, 16), date(y, mo, 1))
    return Piece("span", m.start(), m.end(), "half", start=ctx.at(a), end=ctx.at(z), grain="day")


def _every(m: re.Match[str], ctx: Ctx, secs: int, months: int, unit: str) -> Piece:
    if months:
        freq, n = ("YEARLY", months // 12) if months % 12 == 0 else ("MONTHLY", months)
    else:
        for freq, size in (("WEEKLY", 604800), ("DAILY", 86400), ("HOURLY", 3600), ("MINUTELY", 60),
                           ("SECONDLY", 1)):
            if secs % size == 0 and (freq != "WEEKLY" or unit in "周星礼"):
                n = secs // size
                break
    rrule = f"FREQ={freq}" + (f";INTERVAL={n}" if n != 1 else "")
    start = ctx.now.replace(second=0, microsecond=0)
    return Piece("set", m.start(), m.end(), "every_interval", rrule=rrule, start=start, freq=freq)


RULES: list[tuple[str, str, Handler]] = [
    ("duration", rf"(?P<pre>{PRE})?"
                 rf"(?P<body>{_comp(False)}(?:(?:又|零|\s)?{_comp(False, UNITS + '|分(?!钟)|时(?!间)')})*|分半)"
                 rf"(?P<post>{POST})?", duration),
]
