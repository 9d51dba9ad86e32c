"""Shared fixed reference time and helpers for the intent tests (Duckling style: a fixed `now`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from intent import Intent, parse, to_json
from intent.testing import FakeTimex

TZ = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 6, 18, 10, 0, tzinfo=TZ)  # a Thursday; 端午 is Friday 6-19


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=TZ)  # type: ignore[misc]


def point(start: datetime, *, date: bool = True, clock: bool = True, **kw: Any) -> dict[str, Any]:
    return {"type": "point", "start": start, "has_date": date, "has_clock": clock, **kw}


def run(text: str, phrases: dict[str, dict[str, Any]] | None = None, **kw: Any) -> Intent:
    return parse(text, now=NOW, tz=TZ, extract=FakeTimex(phrases or {}), **kw)


def explain(it: Intent) -> str:
    """Failure message naming the rule that fired."""
    return f"rule={it.rule!r} intent={to_json(it)}"


def engine_ready() -> bool:
    try:
        from intent.timex import extract  # noqa: F401
    except Exception:  # the engine missing or mid-edit
        return False
    return True


needs_engine = pytest.mark.skipif(not engine_ready(), reason="intent.timex.extract not available yet")
