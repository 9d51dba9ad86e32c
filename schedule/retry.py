"""Retry policy as a small value object with a pure `decide()` (failure classes: docs/delivery.md#retries)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from schedule.channel import DeliveryFailure


@dataclass(frozen=True, slots=True)
class Decision:
    retry_at_ms: int | None  # None: give up (failed) unless `fallback`
    fallback: bool = False  # try the next rung of the channel ladder instead
    refund: bool = False  # the attempt does not count (no call was made, or only the operator can fix it)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay_s: float = 5.0
    max_delay_s: float = 1800.0
    jitter: float = 0.2  # ± share of the delay
    transient_max_attempts: int = 3  # -1 "system busy", timeouts, 5xx (the error table's row): a few tries
    catchup_ms: int = 12 * 3_600_000  # how late a push held by a pause may still go out on its rung

    def backoff_ms(self, attempts: int, rand: random.Random | None = None) -> int:
        delay = min(self.max_delay_s, self.base_delay_s * 2 ** max(0, attempts - 1))
        spread = (rand or random).uniform(-self.jitter, self.jitter) * delay
        return int((delay + spread) * 1000)

    def decide(self, failure: DeliveryFailure, *, attempts: int, now_ms: int,
               rand: random.Random | None = None, due_ms: int | None = None, called: bool = True) -> Decision:
        """What to do after the `attempts`-th failed attempt (`called` False: a pause held it back, no call
        was made; `due_ms`: when the push was due)."""
        kind = failure.failure
        if kind == "window" or (kind in ("rate_limit", "config") and (failure.until_tomorrow or failure.ladder)):
            return Decision(None, fallback=True)  # closed, or the day's quota gone: the next rung, not tomorrow
        if kind == "invalid_payload" and failure.ladder:  # this rung refuses this row's data: the next rung
            return Decision(None, fallback=True)
        if kind == "config" or not called:  # it waits without spending the attempt, up to the catch-up window
            if due_ms is not None and now_ms - due_ms > self.catchup_ms:
                return Decision(None, fallback=True, refund=True)
            wait = int((failure.retry_after_s or 0) * 1000) or self.backoff_ms(1, rand)
            return Decision(now_ms + wait, refund=True)
        if kind == "gone":
            return Decision(None)
        if kind == "invalid_payload" and failure.code != "45002":
            return Decision(None)
        if attempts >= self.max_attempts or (kind == "transient" and attempts >= self.transient_max_attempts):
            return Decision(None)
        delay = self.backoff_ms(attempts, rand)
        if failure.retry_after_s is not None:
            delay = max(delay, int(failure.retry_after_s * 1000))
        return Decision(now_ms + delay)
