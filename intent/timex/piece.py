"""Intermediate pieces found by the rules, before grammar merges them into mentions."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from intent.timex.types import Grain, LunarDate


@dataclass(frozen=True, slots=True)
class Ctx:
    """Reference instant for one extraction."""

    now: datetime
    tz: ZoneInfo

    @property
    def today(self) -> date:
        return self.now.date()

    def at(self, day: date, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
        """Local wall-clock instant on day (hour may be 24 → next day)."""
        extra = timedelta(days=hour // 24)
        return datetime(day.year, day.month, day.day, hour % 24, minute, second, tzinfo=self.tz) + extra


@dataclass(slots=True)
class Piece:
    """One matched atom. kind: date | clock | period | span | dur | set | now | every."""

    kind: str
    b: int
    e: int
    rule: str
    # date: a known day, or a partial y/m/d, or a weekday with week offset (None = bare)
    day: date | None = None
    y: int | None = None
    m: int | None = None
    d: int | None = None
    mshift: int | None = None  # month given as offset from this month (本月 0, 下个月 1)
    wd: int | None = None
    wk: int | None = None
    confirm: int | None = None  # a weekday said next to a year-less date picks the year
    # clock
    h: int | None = None
    mi: int = 0
    s: int | None = None
    weak: bool = False  # needs a neighbour (一点, 早, 晚) to count as time
    period: str | None = None
    ampm: str | None = None
    # span (already resolved range) / relative instant
    start: datetime | None = None
    end: datetime | None = None
    grain: Grain | None = None
    relative: bool = False
    # duration
    secs: int | None = None
    lead: bool = False
    # set
    rrule: str | None = None
    workdays: str | None = None
    lunar: LunarDate | None = None
    freq: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


Handler = Callable[[re.Match[str], Ctx], Piece | None]
