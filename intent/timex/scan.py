"""Run every named rule over the text and keep a leftmost-longest, non-overlapping set of pieces."""

from __future__ import annotations

import re

from intent.timex import (
    rules_break,
    rules_clock,
    rules_date,
    rules_duration,
    rules_holiday,
    rules_ordinal,
    rules_set,
)
from intent.timex.piece import Ctx, Handler, Piece

_RULES: list[tuple[str, re.Pattern[str], Handler]] = [
    (name, re.compile(rx), fn)
    for name, rx, fn in (*rules_break.RULES, *rules_date.RULES, *rules_holiday.RULES, *rules_ordinal.RULES,
                         *rules_set.RULES, *rules_clock.RULES, *rules_duration.RULES)
]
_PRIORITY = {name: i for i, (name, _, _) in enumerate(_RULES)}


def scan(text: str, ctx: Ctx) -> list[Piece]:
    found: list[tuple[int, int, int, Piece]] = []
    for i, (_name, rx, fn) in enumerate(_RULES):
        for m in rx.finditer(text):
            if m.end() <= m.start():
                continue
            try:
                piece = fn(m, ctx)
            except (OverflowError, ValueError):  # 一亿小时后, year 10000: not a representable time
                continue
            if piece is not None:
                found.append((piece.b, -(piece.e - piece.b), i, piece))
    found.sort(key=lambda t: t[:3])
    chosen: list[Piece] = []
    last = 0
    for b, _neg, _i, piece in found:
        if b >= last:
            chosen.append(piece)
            last = piece.e
    return chosen
