"""The API's `recurrence` object: an RFC 5545 RRULE (validated part by part), Chinese workdays, lunar dates.

A bad RRULE is refused with a message naming the offending part (`BYDAY=XX`), so a client can fix it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from schedule.domain import Lunar, Recurrence
from schedule.recurrence import local_until
from schedule.rrule import impossible, too_frequent

FREQS = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")  # finer ones are not schedule items
KEYS = {"FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", "BYMONTHDAY", "BYMONTH", "BYYEARDAY", "BYWEEKNO",
        "BYSETPOS", "BYHOUR", "BYMINUTE", "WKST"}
# Naive local wall clock, as schedule/recurrence.py expands rules.
_PROBE_START = datetime(2026, 1, 1, 9, 0)  # noqa: DTZ001


def check_rrule(value: str) -> str:
    """The normalised RRULE body (`FREQ=WEEKLY;BYDAY=MO`), or ValueError naming the bad part."""
    body = value.strip().upper().removeprefix("RRULE:")
    if not body or len(body) > 300:
        raise ValueError("rrule must be 1–300 characters, e.g. FREQ=WEEKLY;BYDAY=MO,WE")
    parts = [p for p in body.split(";") if p]
    seen: dict[str, str] = {}
    for part in parts:
        key, sep, val = part.partition("=")
        if not sep or not val:
            raise ValueError(f"rrule part {part!r} is not KEY=VALUE")
        if key not in KEYS:
            allowed = ", ".join(sorted(KEYS))
            raise ValueError(f"rrule part {part!r}: unknown or unsupported key {key} (allowed: {allowed})")
        if key in seen:
            raise ValueError(f"rrule part {part!r}: {key} appears twice")
        seen[key] = val
    freq = seen.get("FREQ")
    if freq not in FREQS:
        raise ValueError(f"rrule needs FREQ={'|'.join(FREQS)} (got {'FREQ=' + freq if freq else 'no FREQ'})")
    if "COUNT" in seen and "UNTIL" in seen:
        raise ValueError("rrule parts COUNT and UNTIL cannot both be given (RFC 5545)")
    # RFC 5545's UTC form `UNTIL=…Z` is read against the item's timezone when stored; dateutil only checks
    # its syntax here, next to a naive probe start.
    probed = [p[:-1] if p.startswith("UNTIL=") and p.endswith("Z") else p for p in parts]
    for part in probed:
        if part.startswith("FREQ="):
            continue
        try:
            rrulestr(f"FREQ={freq};{part}", dtstart=_PROBE_START)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise ValueError(f"rrule part {part!r} is invalid ({str(exc)[:80] or type(exc).__name__})") from None
    try:
        rrulestr(";".join(probed), dtstart=_PROBE_START)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise ValueError(f"rrule is invalid ({str(exc)[:80] or type(exc).__name__})") from None
    reason = impossible(";".join(parts)) or too_frequent(";".join(parts))
    if reason is not None:
        raise ValueError(reason)
    return ";".join(parts)


class LunarIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    month: int = Field(ge=1, le=12)
    day: int = Field(ge=1, le=30)
    leap: bool = False


class RecurrenceIn(BaseModel):
    """`{rrule, workdays, lunar}`: at least one; `workdays: "cn"` keeps official Chinese working days (调休)."""

    model_config = ConfigDict(extra="forbid")

    rrule: Annotated[str, AfterValidator(check_rrule)] | None = None
    workdays: Literal["cn"] | None = None
    lunar: LunarIn | None = None

    @model_validator(mode="after")
    def _something(self) -> RecurrenceIn:
        if self.rrule is None and self.workdays is None and self.lunar is None:
            raise ValueError("recurrence needs rrule, workdays or lunar")
        if self.lunar is not None and self.rrule is not None:
            raise ValueError("give either lunar (yearly on a lunar date) or rrule, not both")
        return self

    def to_domain(self, tz: str) -> Recurrence:
        """The stored rule: a UTC `UNTIL=…Z` becomes the item's local wall clock (`tz`), as rules are kept."""
        lunar = Lunar(self.lunar.month, self.lunar.day, self.lunar.leap) if self.lunar else None
        rrule = local_until(self.rrule, ZoneInfo(tz)) if self.rrule else None
        return Recurrence(rrule=rrule, workdays=self.workdays, lunar=lunar)

    @classmethod
    def of(cls, recurrence: Recurrence) -> RecurrenceIn | None:
        lunar = recurrence.lunar
        try:
            return cls.model_construct(rrule=recurrence.rrule, workdays=recurrence.workdays,  # type: ignore[arg-type]
                                       lunar=LunarIn(month=lunar.month, day=lunar.day, leap=lunar.leap)
                                       if lunar else None)
        except ValueError:  # a stored lunar value outside the API's bounds: show the rrule field only
            return None
