"""The clock port. This is the only module that reads the wall clock."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware (UTC)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class PinnedClock:
    """A clock that stands at one instant and moves only when told to (`schedbot chat --now`, and the
    tests, which never sleep for time to pass)."""

    def __init__(self, at: datetime | None = None) -> None:
        self._now = at or datetime(2026, 6, 18, 2, 0, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("PinnedClock needs an aware datetime")

    def now(self) -> datetime:
        return self._now

    def set(self, at: datetime) -> None:
        self._now = at

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        self._now += delta if delta is not None else timedelta(**kwargs)
        return self._now


def to_ms(moment: datetime) -> int:
    """Aware datetime → epoch milliseconds (UTC)."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: instants must be timezone-aware")
    delta = moment - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def from_ms(ms: int) -> datetime:
    """Epoch milliseconds → aware UTC datetime."""
    return _EPOCH + timedelta(milliseconds=ms)


def now_ms(clock: Clock) -> int:
    return to_ms(clock.now())
