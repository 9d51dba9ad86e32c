"""Fallback for Latin-script times the rules do not cover (Dec 25 3pm, tomorrow 9am), via dateparser.

dateparser is imported lazily: it is slow to import and only English-looking text needs it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from intent.timex.piece import Ctx
from intent.timex.types import Grain, TimeMention

_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 :,./\-]*[A-Za-z0-9.]|[A-Za-z]{3,}")
_WORD = re.compile(r"[A-Za-z]{3,}")
_CLOCK = re.compile(r"\d\s*(?:am|pm|a\.m\.|p\.m\.)|\d:\d\d|noon|midnight", re.IGNORECASE)


def needs_fallback(text: str) -> bool:
    return _WORD.search(text) is not None


def latin_mentions(text: str, ctx: Ctx, found: list[TimeMention]) -> list[TimeMention]:
    """Found mentions, with Latin runs that dateparser can read replacing what overlaps them."""
    out = list(found)
    for run in _RUN.finditer(text):
        b, e = run.span()
        chunk = run.group(0).strip(" ,.-/")
        if not _WORD.search(chunk) or any(m.span[0] <= b and e <= m.span[1] for m in found):
            continue
        at = _parse(chunk, ctx)
        if at is None:
            continue
        grain: Grain = "minute" if _CLOCK.search(chunk) else "day"
        if grain == "day":
            at = at.replace(hour=0, minute=0, second=0, microsecond=0)
        out = [m for m in out if m.span[1] <= b or m.span[0] >= e]
        out.append(TimeMention(span=(b, b + len(chunk)), text=chunk, type="point", rule="dateparser", start=at,
                               grain=grain, has_date=True, has_clock=grain == "minute"))
    return sorted(out, key=lambda m: m.span)


def _parse(chunk: str, ctx: Ctx) -> datetime | None:
    import dateparser

    settings: dict[str, Any] = {
        "RELATIVE_BASE": ctx.now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    try:
        got = dateparser.parse(chunk, languages=["en"], settings=settings)
    except Exception:  # dateparser raises assorted errors on odd input
        return None
    if got is None:
        return None
    local: datetime = got.replace(tzinfo=ctx.tz, second=0, microsecond=0)
    return local
