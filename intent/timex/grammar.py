"""Merge adjacent pieces into groups (明天 + 下午 + 三点) and groups into ranges (A 到 B)."""

from __future__ import annotations

from dataclasses import dataclass, field

from intent.timex.piece import Piece

TIME_KINDS = {"date", "period", "clock", "span", "now"}
JOIN_GAPS = {"", " ", "的"}
RANGE_GAPS = {"到", "至", "~", "-", "和", "起至", "起到", "一直到", "到次日", "至次日"}
PREFIXES = ("从", "自", "由")
SUFFIXES = ("之间", "为止", "止", "期间")


@dataclass(slots=True)
class Group:
    pieces: list[Piece] = field(default_factory=list)
    is_set: bool = False

    @property
    def b(self) -> int:
        return self.pieces[0].b

    @property
    def e(self) -> int:
        return self.pieces[-1].e

    def first(self, kind: str) -> Piece | None:
        return next((p for p in self.pieces if p.kind == kind), None)

    @property
    def date(self) -> Piece | None:
        dates = [p for p in self.pieces if p.kind == "date"]
        return next((p for p in dates if p.wd is None), dates[0] if dates else None)

    @property
    def clock(self) -> Piece | None:
        c = self.first("clock")
        if c is None and self.date is not None and self.date.h is not None:
            return self.date
        return c

    @property
    def period(self) -> str | None:
        p = self.first("period")
        if p is not None:
            return p.period
        d = self.date
        return d.period if d is not None else None


def _joins_across(g: Group, p: Piece, gap: str) -> bool:
    """A comma between a weekday and a date, a dash before a clock, 到 inside 每周一到周三."""
    last = g.pieces[-1]
    if gap.strip() in (",", "，") and p.kind == "date" and g.date is not None and len(g.pieces) == 1:
        return p.wd is not None or g.date.wd is not None
    if gap == "-" and p.kind == "clock" and last.kind == "date":
        return g.clock is None
    return g.is_set and gap in ("到", "至", "-") and p.kind == "date" and p.wd is not None and last.wd is not None


def _accepts(g: Group, p: Piece, gap: str) -> bool:
    last = g.pieces[-1]
    if gap.strip() not in ("", "的"):
        return _joins_across(g, p, gap)
    if g.is_set:
        return p.kind in ("date", "period", "clock", "set", "span") and not (p.kind == "clock" and g.clock)
    if p.kind == "set" and last.kind in ("set",):
        return True
    if last.kind not in TIME_KINDS or p.kind not in TIME_KINDS:
        return False
    if p.kind == "date":
        if g.clock is not None or g.first("period") is not None or g.first("span") is not None:
            return False
        return g.date is None or p.wd is not None or (g.date.wd is not None and g.date.day is None)
    if p.kind == "period":
        return g.clock is None and g.period is None and g.first("now") is None and (
            g.first("span") is None or g.pieces[-1].rule in ("weekend",))
    if p.kind == "clock":
        return g.clock is None and g.first("span") is None and g.first("now") is None
    return False


def group(text: str, pieces: list[Piece]) -> list[Group]:
    groups: list[Group] = []
    for p in pieces:
        if groups:
            g = groups[-1]
            gap = text[g.e:p.b]
            if _accepts(g, p, gap):
                g.pieces.append(p)
                dates = [q for q in g.pieces if q.kind == "date"]
                if len(dates) == 2 and (dates[0].wd is None) != (dates[1].wd is None):
                    named, wd = (dates[0], dates[1]) if dates[1].wd is not None else (dates[1], dates[0])
                    named.confirm = wd.wd
                if p.kind == "set":
                    g.is_set = True
                continue
        groups.append(Group([p], is_set=p.kind in ("set", "every")))
    return groups


@dataclass(slots=True)
class Span:
    """A group, or two groups joined as a range, with the characters it covers."""

    b: int
    e: int
    head: Group
    tail: Group | None = None


def _timeish(g: Group) -> bool:
    return not g.is_set and all(p.kind in TIME_KINDS for p in g.pieces)


def _workweek(g: Group, nxt: Group) -> bool:
    if len(g.pieces) != 1 or sum(p.kind == "date" for p in nxt.pieces) != 1:
        return False
    a, z = g.pieces[0], nxt.pieces[0]
    return a.kind == z.kind == "date" and (a.wd, a.wk, z.wd, z.wk) == (0, None, 4, None)


def ranges(text: str, groups: list[Group]) -> list[Span]:
    out: list[Span] = []
    i = 0
    while i < len(groups):
        g = groups[i]
        nxt = groups[i + 1] if i + 1 < len(groups) else None
        gap = text[g.e:nxt.b].strip() if nxt is not None else ""
        if gap == "和" and nxt is not None and not text.startswith("之间", nxt.e):
            gap = "?"
        bare_end = nxt is not None and nxt.date is not None and nxt.date.weak
        if bare_end and (g.date is None or g.date.d is None or g.clock is not None):
            gap = "?"  # 三点到五: a bare number ends only a date range
        if nxt is not None and _timeish(g) and _timeish(nxt) and gap in RANGE_GAPS:
            b, e = g.b, nxt.e
            if b > 0 and text[b - 1] in PREFIXES:
                b -= 1
            for suf in SUFFIXES:
                if text.startswith(suf, e):
                    e += len(suf)
                    break
            if _workweek(g, nxt):  # 周一到周五: the literal MO–FR recurrence
                out.append(Span(g.b, nxt.e, Group([*g.pieces, *nxt.pieces], is_set=True)))
            else:
                out.append(Span(b, e, g, nxt))
            i += 2
            continue
        out.append(Span(g.b, g.e, g))
        i += 1
    return _merge_sets(text, out)


def _merge_sets(text: str, spans: list[Span]) -> list[Span]:
    """周一到周五 + 每天早上8点 → one recurrence."""
    merged: list[Span] = []
    for s in spans:
        prev = merged[-1] if merged else None
        if (prev is not None and prev.tail is None and s.tail is None and prev.head.is_set and s.head.is_set
                and text[prev.e:s.b].strip() in ("", "的")):
            merged[-1] = Span(prev.b, s.e, Group([*prev.head.pieces, *s.head.pieces], is_set=True))
        else:
            merged.append(s)
    return merged
