"""The store's own small error hierarchy; foreign DB errors are translated here."""

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
