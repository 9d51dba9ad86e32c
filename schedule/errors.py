"""The store's own small error hierarchy; foreign DB errors are translated here."""

from __future__ import annotations


class ScheduleError(Exception):
    """Base of the schedule package's errors."""


class NotFound(ScheduleError):
    """No such item/reminder for this user (another user's row is also 'not found')."""


class InvalidChange(ScheduleError):
    """A request that is well-formed but not valid for the item (e.g. end before start)."""
