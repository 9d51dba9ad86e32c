"""Resolve groups and ranges to TimeMentions against `now` (periods, bare hours, rolling; docs/conversation.md#time)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from intent.timex.grammar import Group, Span
from intent.timex.piece import Ctx, Piece
from intent.timex.resolve import WINDOWS, bare_hour, day_only, hour24, valid, weekday
from intent.timex.types import Grain, MentionType, TimeMention


@dataclass(slots=True)
class Res:
    start: datetime
    end: datetime | None
    grain: Grain
    rule: str
    has_date: bool = False
    has_clock: bool = False
    period: str | None = None
    rolled: bool = False
    relative: bool = False
    explicit_day: date | None = None


def group_day(p: Piece, ctx: Ctx, base: tuple[Piece, date] | None = None) -> date | None:
    if p.day is not None and p.confirm is not None and p.y is None and p.m is not None and p.d is not None:
        for y in (p.day.year, p.day.year - 1, p.day.year + 1):
            if valid(y, p.m, p.d) and date(y, p.m, p.d).weekday() == p.confirm:
                return date(y, p.m, p.d)
    if p.day is not None:
        if base is not None and p.y is None and p.m is not None and p.d is not None and p.mshift is None:
            y = base[1].year
            while y < base[1].year + 9 and not valid(y, p.m, p.d):
                y += 1
            if valid(y, p.m, p.d):
                got = date(y, p.m, p.d)
                return got if got >= base[1] or not valid(y + 1, p.m, p.d) else date(y + 1, p.m, p.d)
        return p.day
    if p.wd is not None:
        wk = p.wk
        if wk is None and base is not None and base[0].wd is not None and base[0].wk is not None:
            wk = base[0].wk
        after = base[1] if base is not None and wk is None else None
        return weekday(p.wd, wk, ctx.today, after)
    if p.d is not None:
        if base is not None:  # a range end: the first such day at or after the start (20号到25号, 12号到3号)
            return day_only(p.d, base[1])
        return day_only(p.d, ctx.today)
    return None


def _clock_at(c: Piece, h: int, mi: int, period: str | None, day: date | None, ctx: Ctx,
              explicit: bool) -> tuple[datetime, bool]:
    """Instant for hour h; explicit: the hour needs no AM/PM guess."""
    sec = c.s or 0
    if period is not None or explicit:
        hh, extra = hour24(h, period) if period is not None else (h % 24, h // 24)
        if extra and day is None and ctx.now.hour < 5 and period is not None:
            extra = 0  # said after midnight, 夜里两点 is tonight's, i.e. today's
        at = ctx.at(day or ctx.today, hh, mi, sec) + timedelta(days=extra)
        if day is None and at < ctx.now.replace(second=0, microsecond=0):
            return at + timedelta(days=1), True
        return at, False
    at, rolled = bare_hour(h, mi, day, ctx)
    return at.replace(second=sec), rolled


def _explicit(c: Piece) -> bool:
    return c.ampm is not None or "h24" in c.extra or (c.h is not None and (c.h >= 13 or c.h == 0))


def resolve(g: Group, ctx: Ctx, base: tuple[Group, Res] | None = None) -> Res | None:
    d, c = g.date, g.clock
    if d is not None and d.weak and base is None:
        return None
    period = g.period
    rule = "+".join(p.rule for p in g.pieces)
    day: date | None = None
    if d is not None:
        bp = (base[0].date, base[1].start.date()) if base is not None and base[0].date is not None else None
        day = group_day(d, ctx, bp)
        if day is None:
            return None
    elif base is not None and (base[1].has_date or c is not None):
        day = base[1].start.date() if base[1].has_date or base[1].has_clock else None
    now_p, span = g.first("now"), g.first("span")
    if now_p is not None:
        return Res(ctx.now, None, "second", rule, has_date=True, has_clock=True)
    if c is not None and c.weak and d is None and any(p.weak for p in g.pieces if p.kind == "period"):
        return None  # 差一点, 晚一点: not a clock time
    if c is not None and "needs_context" in c.extra and d is None and period is None and base is None:
        return None
    if c is not None and c.h is not None:
        explicit = _explicit(c)
        if period is None and base is not None and not explicit and day is not None:
            # the end of a range keeps the start's half of the day: 下午两点到四点, 5:00到6:00
            s0 = base[1].start
            for hh in (c.h, c.h + 12) if c.h < 12 else (c.h,):
                cand = ctx.at(day, hh, c.mi)
                if cand > s0:
                    return Res(cand, None, "minute", rule, has_date=d is not None, has_clock=True)
        at, rolled = _clock_at(c, c.h, c.mi, period, day, ctx, explicit)
        grain: Grain = "second" if c.s else "minute"
        res = Res(at, None, grain, rule, has_date=d is not None, has_clock=True, period=period,
                  rolled=rolled)
        if "h2" in c.extra:
            h2, mi2 = int(c.extra["h2"]), int(c.extra["mi2"])
            end, _ = _clock_at(c, h2, mi2, period, at.date(), ctx, _explicit(c) or h2 >= 13)
            if period is None and end <= at and h2 < 12:
                end += timedelta(hours=12)
            if end <= at:
                end += timedelta(days=1)
            res.end = end
        return res
    if span is not None and span.start is not None:
        if period is not None and span.rule == "weekend":
            return None
        return Res(span.start, span.end, span.grain or "day", rule)
    if period is not None:
        on = day or ctx.today
        if period == "中午":
            noon, rolled = ctx.at(on, 12), False
            if day is None and noon < ctx.now.replace(second=0, microsecond=0):
                noon, rolled = noon + timedelta(days=1), True
            return Res(noon, None, "minute", rule, has_date=d is not None, has_clock=True, period=period,
                       rolled=rolled)
        if g.first("period") is not None and g.first("period").weak and d is None:  # type: ignore[union-attr]
            return None
        ws, we = WINDOWS.get(period, (0, 24))
        return Res(ctx.at(on, ws), ctx.at(on, we), "hour", rule, has_date=d is not None, period=period)
    if d is not None and day is not None:
        grain = d.grain or "day"
        return Res(ctx.at(day), None, grain, rule, has_date=True)
    rel = g.first("rel")
    if rel is not None and rel.start is not None:
        return Res(rel.start, None, rel.grain or "minute", rule, relative=True, has_date=True, has_clock=True)
    return None


def _end_of(r: Res) -> datetime:
    if r.end is not None:
        return r.end
    if r.grain == "day":
        return r.start + timedelta(days=1)
    if r.grain == "week":
        return r.start + timedelta(days=7)
    return r.start


def mention(text: str, s: Span, ctx: Ctx) -> TimeMention | None:
    r1 = resolve(s.head, ctx)
    if r1 is None:
        return None
    if s.tail is not None:
        r2 = resolve(s.tail, ctx, (s.head, r1))
        if r2 is None:
            return None
        end = _end_of(r2)
        if end <= r1.start and s.tail.date is None:
            end += timedelta(days=1)
        return TimeMention(
            span=(s.b, s.e), text=text[s.b:s.e], type="range", rule=f"range({r1.rule}|{r2.rule})",
            start=r1.start, end=end, grain=r1.grain, has_date=r1.has_date or r2.has_date,
            has_clock=r1.has_clock, period=r1.period)
    kind: MentionType = "range" if r1.end is not None else "point"
    return TimeMention(
        span=(s.b, s.e), text=text[s.b:s.e], type=kind, rule=r1.rule, start=r1.start, end=r1.end,
        grain=r1.grain, has_date=r1.has_date, has_clock=r1.has_clock, period=r1.period,
        rolled=r1.rolled, relative=r1.relative)
