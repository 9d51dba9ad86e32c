"""Retry policy as a small value object with a pure `decide()` (SPEC §7 failure classes)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from schedule.channel import DeliveryFailure


@dataclass(frozen=True, slots=True)
class Decision:
    retry_at_ms: int | None  # None: give up (failed) unless `fallback`
    fallback: bool = False  # try the next rung of the channel ladder instead


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay_s: float = 5.0
    max_delay_s: float = 1800.0
    jitter: float = 0.2  # ± share of the delay
    busy_max_attempts: int = 3  # WeChat's -1 "system busy": a few tries, not the full budget

    def backoff_ms(self, attempts: int, rand: random.Random | None = None) -> int:
        delay = min(self.max_delay_s, self.base_delay_s * 2 ** max(0, attempts - 1))
        spread = (rand or random).uniform(-self.jitter, self.jitter) * delay
        return int((delay + spread) * 1000)

    def decide(self, failure: DeliveryFailure, *, attempts: int, now_ms: int,
               rand: random.Random | None = None) -> Decision:
        """What to do after the `attempts`-th failed attempt."""
        kind = failure.failure
        if kind == "window" or (kind == "rate_limit" and failure.until_tomorrow):
            return Decision(None, fallback=True)  # closed, or the day's quota gone: the next rung, not tomorrow
        if kind == "gone":
            return Decision(None)
        if kind == "invalid_payload" and failure.code != "45002":
            return Decision(None)
        if attempts >= self.max_attempts or (failure.code == "-1" and attempts >= self.busy_max_attempts):
            return Decision(None)
        delay = self.backoff_ms(attempts, rand)
        if failure.retry_after_s is not None:
            delay = max(delay, int(failure.retry_after_s * 1000))
        return Decision(now_ms + delay)
