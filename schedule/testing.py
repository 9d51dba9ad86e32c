"""Test doubles shipped with the package: a frozen, manually advanced clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FrozenClock:
    """A clock that only moves when told to (tests never sleep for time to pass)."""

    def __init__(self, at: datetime | None = None) -> None:
        self._now = at or datetime(2026, 6, 18, 2, 0, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("FrozenClock needs an aware datetime")

    def now(self) -> datetime:
        return self._now

    def set(self, at: datetime) -> None:
        self._now = at

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        self._now += delta if delta is not None else timedelta(**kwargs)
        return self._now
