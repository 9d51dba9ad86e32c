"""Shared helpers for the timex corpus tests: reference instants and a compact mention format."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from intent.timex import TimeMention, extract

TZ = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 6, 18, 10, 0, tzinfo=TZ)  # Thursday morning; 2026-06-19 is 端午
LATE = datetime(2026, 6, 18, 23, 30, tzinfo=TZ)  # Thursday, late at night
YEAR_END = datetime(2026, 12, 31, 20, 0, tzinfo=TZ)  # Thursday, last evening of the year


def _fmt(d: datetime | None) -> str:
    if d is None:
        return "None"
    return d.strftime("%Y-%m-%d") if (d.hour, d.minute) == (0, 0) else d.strftime("%Y-%m-%d %H:%M")


def describe(m: TimeMention) -> str:
    """'2026-06-19 15:00', '2026-06-20..2026-06-26', 'dur 1800', 'lead 600', 'set FREQ=DAILY@first'."""
    if m.type == "duration":
        return f"{'lead' if m.lead else 'dur'} {m.seconds}"
    if m.type == "set":
        return f"set {m.rrule}{';cn' if m.workdays else ''}@{_fmt(m.start)}"
    if m.type == "range":
        return f"{_fmt(m.start)}..{_fmt(m.end)}"
    if m.grain == "day":
        return _fmt(m.start)
    return m.start.strftime("%Y-%m-%d %H:%M") if m.start else "None"


def first(text: str, now: datetime = NOW) -> tuple[str, str]:
    """(description, rule) of the first mention, ('nothing', '-') if none."""
    found = extract(text, now=now, tz=TZ)
    if not found:
        return "nothing", "-"
    return describe(found[0]), found[0].rule
