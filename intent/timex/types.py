"""The value the time-expression engine hands to the intent rules and to `schedbot timex`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

MentionType = Literal["point", "range", "set", "duration"]
Grain = Literal["year", "month", "week", "day", "hour", "minute", "second"]


@dataclass(frozen=True, slots=True)
class LunarDate:
    month: int
    day: int
    leap: bool = False


@dataclass(frozen=True, slots=True)
class TimeMention:
    """One time expression found in a text, resolved against `now` in the user's timezone.

    `start`/`end` are aware datetimes in that timezone; `end` is exclusive.
    """

    span: tuple[int, int]  # [begin, end) character offsets in the input text
    text: str  # the matched substring
    type: MentionType
    rule: str  # name of the rule that produced it (shown in test failures)
    start: datetime | None = None  # point instant / range start / set's first occurrence
    end: datetime | None = None  # range only, exclusive
    grain: Grain | None = None
    seconds: int | None = None  # duration only
    rrule: str | None = None  # set only, RFC 5545 RRULE body
    workdays: str | None = None  # set only: "cn" (official calendar) or None
    lunar: LunarDate | None = None  # set only, for 每年农历M月D日
    has_date: bool = False  # a day was named (今天, 6月20日, 周三, 元旦 …)
    has_clock: bool = False  # a clock time was named (三点, 15:00, 中午 …)
    period: str | None = None  # day period named: 凌晨/上午/中午/下午/晚上 …
    relative: bool = False  # now + duration (半小时后): an instant, not a date
    lead: bool = False  # 提前N分钟: a lead time before something (type duration)
    rolled: bool = False  # a time today that had passed, rolled to the next occurrence
