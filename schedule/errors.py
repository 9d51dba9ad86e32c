"""The store's own small error hierarchy; foreign DB errors are translated into it (`DatabaseUnavailable`,
raised by `schedule.retry.retry_contention`, which every transaction runner goes through)."""

from __future__ import annotations


class ScheduleError(Exception):
    """Base of the schedule package's errors."""


class NotFound(ScheduleError):
    """No such item/reminder for this user (another user's row is also 'not found')."""


class InvalidChange(ScheduleError):
    """A request that is well-formed but not valid for the item (e.g. end before start)."""


class QuotaExceeded(InvalidChange):
    """The user already has `limit` active items: a create or a reopen would go over the quota."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"too many active items (at most {limit}): complete or cancel some first")
        self.limit = limit


class NotAnOccurrence(InvalidChange):
    """An action on one occurrence of a series names a day the series does not occur on (a stale page after
    the series changed, or a hand-made request): refused, nothing stored."""

    def __init__(self, item_id: int, day: str) -> None:
        super().__init__(f"item {item_id} has no occurrence on {day}")
        self.item_id, self.day = item_id, day


class DatabaseUnavailable(ScheduleError):
    """The database did not run a unit of work: unreachable, its connection lost, or still aborting it as a
    deadlock victim after the retries. Its writes were rolled back (unless the connection was lost in its
    COMMIT, when no one can tell). The driver's error is the cause;
    the message names only its class and code (never the statement or its parameters: user text)."""

    def __init__(self, message: str, *, code: object = None, contention: bool = False) -> None:
        super().__init__(message)
        self.code = code  # the driver's error code (MySQL's number, SQLite's message), when it gives one
        self.contention = contention  # aborted for concurrency on every attempt, not down
