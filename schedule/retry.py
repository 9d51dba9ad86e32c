"""Retrying: a delivery's retry policy as a small value object with a pure `decide()` (failure classes:
docs/delivery.md#retries), and the one helper that runs a database unit of work again when the database
aborted it for contention.

`retry_contention` is also where driver errors stop: a unit that still fails, or fails any other way at
the database (unreachable, connection lost), raises the schedule package's `DatabaseUnavailable`, chained
to the driver's error, so callers never catch a SQLAlchemy class.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.exc import InterfaceError, OperationalError

from schedule.channel import DeliveryFailure
from schedule.errors import DatabaseUnavailable

T = TypeVar("T")
CONTENTION_ATTEMPTS = 5  # tries of a unit of work the database keeps aborting as a deadlock victim
# MySQL/MariaDB: 1213 deadlock (InnoDB rolled the transaction back), 1205 lock wait timeout, 1020 a row
# changed since the transaction's snapshot (MariaDB's snapshot isolation: "try restarting transaction"), and
# 1467: InnoDB reports a deadlock over the table's AUTO-INC lock, which an INSERT … SELECT takes, as "failed
# to read auto-increment value" (seen with concurrent claims into a fresh table).
_CONTENTION_MYSQL = {1213, 1205, 1020, 1467}


def is_retryable(exc: BaseException) -> bool:
    """A transaction the database aborted for concurrency reasons: running it again is safe."""
    orig = getattr(exc, "orig", None)
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()) or ())
    return isinstance(exc, OperationalError) and bool(args) and args[0] in _CONTENTION_MYSQL


async def retry_contention(call: Callable[[], Awaitable[T]], *, attempts: int = CONTENTION_ATTEMPTS,
                           sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                           rand: random.Random | None = None) -> T:
    """`call()` (one whole unit of work: it begins and ends its transaction), run again after a short
    jittered pause, longer each time, while the database aborts it for contention, up to `attempts` runs.
    A database failure that is not contention, or contention on the last run, raises DatabaseUnavailable
    from the driver's error; any other error passes through untouched."""
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except (OperationalError, InterfaceError) as exc:
            if is_retryable(exc) and attempt < attempts:
                await sleep((rand or random).uniform(0.005, 0.02) * attempt)
                continue
            raise _unavailable(exc, attempt) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def _unavailable(exc: OperationalError | InterfaceError, attempts: int) -> DatabaseUnavailable:
    args = getattr(exc.orig, "args", ()) or ()
    code = args[0] if args and isinstance(args[0], int | str) else None
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    return DatabaseUnavailable(f"the database failed a unit of work{tried}: {type(exc.orig).__name__} {code!r}"[:300],
                               code=code, contention=is_retryable(exc))


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
