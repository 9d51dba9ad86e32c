"""A background loop's failures logged as one outage: an ERROR with the traceback when the loop starts
failing, then at most one short WARNING a minute while it goes on, and an INFO when a pass works again.
(A loop that polls every second would otherwise log a traceback a second while the database is down.)
"""

from __future__ import annotations

import logging

from schedule.clock import Clock, now_ms

REPEAT_MS = 60_000  # how often a continuing outage is mentioned again


class OutageLog:
    """The failure log of one loop (`what`: "delivery tick", "metrics refresh"…)."""

    def __init__(self, logger: logging.Logger, what: str, clock: Clock, *, repeat_ms: int = REPEAT_MS) -> None:
        self._log, self._what, self._clock, self._repeat_ms = logger, what, clock, repeat_ms
        self._since: int | None = None  # when the current outage began
        self._said_at = 0
        self._failures = 0

    @property
    def failing(self) -> bool:
        return self._since is not None

    def failed(self, exc: BaseException) -> None:
        now = now_ms(self._clock)
        self._failures += 1
        if self._since is None:
            self._since = self._said_at = now
            self._log.error("%s failed; retrying until it works (reported again at most once a minute)",
                            self._what, exc_info=exc)
            return
        if now - self._said_at >= self._repeat_ms:
            self._said_at = now
            # the type only: a driver's text can carry a statement and its parameters
            self._log.warning("%s still failing after %d s (%d failures, last %s)", self._what,
                              (now - self._since) // 1000, self._failures, type(exc).__name__)

    def recovered(self) -> None:
        if self._since is None:
            return
        self._log.info("%s works again after %d s (%d failures)", self._what,
                       (now_ms(self._clock) - self._since) // 1000, self._failures)
        self._since, self._failures = None, 0
