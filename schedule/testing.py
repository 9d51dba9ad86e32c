"""Test doubles shipped with the package: a frozen, manually advanced clock and a recording channel."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schedule.channel import DeliveryFailure, Outgoing, Receipt


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


class RecordingChannel:
    """A Channel double: records every message; scripted failures are raised first, in order."""

    def __init__(self, name: str = "wechat", *, failures: list[DeliveryFailure] | None = None,
                 needs_window: bool = False) -> None:
        self.name = name
        self.needs_window = needs_window
        self.sent: list[Outgoing] = []
        self.attempts: list[Outgoing] = []
        self.failures = list(failures or [])
        self._counter = 0

    async def send(self, message: Outgoing) -> Receipt:
        self.attempts.append(message)
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append(message)
        parts: dict[int, str | None] = {}
        for index in range(int(message.payload.get("parts", 1))):
            if index not in message.sent_parts:
                self._counter += 1
                parts[index] = f"{self.name}-{self._counter}"
        return Receipt(parts)
