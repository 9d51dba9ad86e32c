"""Chinese time expressions: `extract(text, now=, tz=)` → resolved TimeMentions (docs/conversation.md#time)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from intent.timex.build import mention
from intent.timex.calendar_cn import NAMES
from intent.timex.fallback import latin_mentions, needs_fallback
from intent.timex.grammar import group, ranges
from intent.timex.normalise import normalise, squeeze
from intent.timex.piece import Ctx, Piece
from intent.timex.recurrence import set_mention
from intent.timex.scan import scan
from intent.timex.types import LunarDate, TimeMention

__all__ = ["LunarDate", "TimeMention", "extract", "to_timex_json"]

_HINT = re.compile("[0-9０-９零〇一二两三四五六七八九十廿卅半今明昨前后後当本这上下周星礼月年天日号点时分秒"
                   "早晚午夜凌晨节旦春除清端国现此每隔工提未近最过元宵秋腊正农阴季第首暑寒:/.-]|[A-Za-z]{3}|"
                   + "|".join(NAMES))


# 一下/两下 is a verb complement (记一下, 提醒一下): its 下 never starts 下周/下个月 (记一下周二 is this
# week's Tuesday). Masked with a character no rule reads; spans keep their offsets.
_COMPLEMENT = re.compile(r"(?<=[一两])下(?=下?(?:周|星期|礼拜|个?月|一?个|半))")


# The last few extractions: a message's text is read twice when it changes an item (the parse, then the
# target's clock time, `bot.conversation.change`), and the scan is a third of a parse's CPU.
_RECENT: dict[tuple[str, datetime, ZoneInfo], tuple[TimeMention, ...]] = {}
_RECENT_MAX = 64


def extract(text: str, *, now: datetime, tz: ZoneInfo) -> list[TimeMention]:
    """All time expressions in `text`, resolved against `now` (aware) in `tz`, ordered by position."""
    key = (text, now, tz)  # aware datetimes compare by instant, which is all the result depends on
    known = _RECENT.get(key)
    if known is not None:
        return list(known)
    found = _extract(text, now, tz)
    if len(_RECENT) >= _RECENT_MAX:
        _RECENT.clear()
    _RECENT[key] = tuple(found)
    return found


def _extract(text: str, now: datetime, tz: ZoneInfo) -> list[TimeMention]:
    norm, where = squeeze(normalise(text))
    if "下" in norm:
        norm = _COMPLEMENT.sub("#", norm)
    if not _HINT.search(norm):
        return []
    ctx = Ctx(now.astimezone(tz), tz)
    pieces = scan(norm, ctx)
    out: list[TimeMention] = []
    for span in ranges(norm, group(norm, pieces)):
        head = span.head
        m: TimeMention | None
        if head.is_set:
            m = set_mention(norm, head, ctx)
        elif len(head.pieces) == 1 and head.pieces[0].kind in ("dur", "void"):
            m = _single(norm, head.pieces[0])
        else:
            m = mention(norm, span, ctx)
        if m is not None:
            out.append(m)
    if needs_fallback(norm):
        out = latin_mentions(norm, ctx, out)
    return [_restore(m, text, where) for m in out]


def _restore(m: TimeMention, text: str, where: list[int]) -> TimeMention:
    """Map a span found in the squeezed, normalised text back to the caller's characters."""
    b, e = where[m.span[0]], where[m.span[1] - 1] + 1
    return replace(m, span=(b, e), text=text[b:e])


def _single(text: str, p: Piece) -> TimeMention | None:
    if p.kind != "dur":
        return None
    return TimeMention(span=(p.b, p.e), text=text[p.b:p.e], type="duration", rule=p.rule, seconds=p.secs,
                       lead=p.lead)


def _iso(d: datetime | None) -> str | None:
    return None if d is None else d.isoformat()


def to_timex_json(m: TimeMention) -> dict[str, Any]:
    """The `schedbot timex` contract (see eval/score_timex.py)."""
    out: dict[str, Any] = {"span": m.text, "type": m.type, "rule": m.rule}
    if m.type == "duration":
        out["seconds"] = m.seconds
        if m.lead:
            out["lead"] = True
        return out
    out["start"] = _iso(m.start)
    if m.type == "range":
        out["end"] = _iso(m.end)
    if m.type == "point":
        out["grain"] = m.grain
    if m.type == "set":
        out["rrule"] = m.rrule
        out["workdays"] = m.workdays
        if m.lunar is not None:
            out["lunar"] = {"month": m.lunar.month, "day": m.lunar.day, "leap": m.lunar.leap}
    return out
