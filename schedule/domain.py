"""Domain values returned by the service (frozen dataclasses, instants as epoch ms UTC)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

ItemKind = Literal["task", "event"]
ItemStatus = Literal["active", "completed", "cancelled", "deleted"]


@dataclass(frozen=True, slots=True)
class Lunar:
    month: int
    day: int
    leap: bool = False


@dataclass(frozen=True, slots=True)
class Recurrence:
    """RFC 5545 RRULE body plus the two things RRULE cannot say."""

    rrule: str | None = None
    workdays: str | None = None  # "cn": official Chinese workdays with 调休
    lunar: Lunar | None = None  # yearly on a lunar month/day
    # Closed occurrences, as local keys: a day ("2026-12-04": every occurrence that day) or one occurrence by its
    # local start ("2026-12-04T07:30", for a series several times a day): no reminder, not due any more.
    skipped: tuple[str, ...] = ()
    done: tuple[str, ...] = ()  # those of `skipped` that were done rather than cancelled (still listed, as done)

    @property
    def cancelled(self) -> tuple[str, ...]:
        """The occurrences that are gone from the series (RFC 5545 EXDATE): skipped and not done."""
        return tuple(day for day in self.skipped if day not in self.done)


def occurrence_key(on: date | datetime) -> str:
    """The key of a closed occurrence: its local day, or for one of several a day its local start (minutes)."""
    if isinstance(on, datetime):
        return on.strftime("%Y-%m-%dT%H:%M")
    return on.isoformat()


def key_closes(keys: tuple[str, ...] | set[str] | frozenset[str], local_start: datetime) -> bool:
    """Whether an occurrence starting at `local_start` (local wall clock) is among `keys` (its day or itself)."""
    if not keys:
        return False
    return local_start.date().isoformat() in keys or local_start.strftime("%Y-%m-%dT%H:%M") in keys


def key_moment(key: str) -> tuple[date, tuple[int, int] | None]:
    """A key's local day and, for one occurrence's key, its local (hour, minute)."""
    day = date.fromisoformat(key[:10])
    if len(key) > 10 and key[10] == "T":
        return day, (int(key[11:13]), int(key[14:16]))
    return day, None


@dataclass(frozen=True, slots=True)
class User:
    id: int
    wechat_openid: str
    timezone: str
    subscribed: bool


@dataclass(frozen=True, slots=True)
class Reminder:
    id: int
    item_id: int
    remind_at: int
    offset_minutes: int | None
    channel: str
    status: str
    sent_at: int | None = None
    once: bool = False  # about one occurrence of a series only (a snooze): never carried to the next one
    planned: bool = False  # a later occurrence's reminder, not stored yet: `id` is the stored one it is made from


@dataclass(frozen=True, slots=True)
class Item:
    id: int
    user_id: int
    kind: ItemKind
    title: str
    status: ItemStatus
    timezone: str
    start_at: int | None = None
    end_at: int | None = None
    due_at: int | None = None
    all_day: bool = False
    local_date: str | None = None
    description: str | None = None
    location: str | None = None
    recurrence: Recurrence | None = None
    source_channel: str = "api"
    created_at: int = 0
    updated_at: int = 0
    sequence: int = 0  # how many times the item was changed since it was created
    reminders: tuple[Reminder, ...] = field(default=())

    @property
    def anchor_at(self) -> int | None:
        """The instant the item is about: an event's start, a task's deadline."""
        return self.start_at if self.kind == "event" else self.due_at


@dataclass(frozen=True, slots=True)
class NewReminder:
    remind_at: int
    offset_minutes: int | None = None
    channel: str = "wechat"
    once: bool = False  # a series' reminder of one occurrence only (its lead counts back from that occurrence)


@dataclass(frozen=True, slots=True)
class NewItem:
    kind: ItemKind
    title: str
    timezone: str
    start_at: int | None = None
    end_at: int | None = None
    due_at: int | None = None
    all_day: bool = False
    description: str | None = None
    location: str | None = None
    recurrence: Recurrence | None = None
    source_channel: str = "api"
    source_message_id: str | None = None
    source_text: str | None = None
    metadata: dict[str, Any] | None = None
    reminders: tuple[NewReminder, ...] = ()


@dataclass(frozen=True, slots=True)
class ItemChanges:
    """A partial update; None means 'unchanged'. `clear_*` flags remove optional values."""

    title: str | None = None
    description: str | None = None
    location: str | None = None
    start_at: int | None = None
    end_at: int | None = None
    due_at: int | None = None
    all_day: bool | None = None
    timezone: str | None = None
    clear_end: bool = False
    recurrence: Recurrence | None = None  # a new rule for the series (its cancelled occurrences are kept)
    clear_recurrence: bool = False  # the item stops repeating


@dataclass(frozen=True, slots=True)
class DigestSubscription:
    id: int
    user_id: int
    kind: str
    local_time: str
    timezone: str
    channel: str
    status: str
    next_run_at: int | None
    workdays: str | None = None
    rrule: str | None = None  # FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR: only on those days (周末不用发)


# ---------------------------------------------------------------- requests the bot runs later
@dataclass(frozen=True, slots=True)
class AgendaQuery:
    """A schedule query run at the request's time: its day or week, `shift` days/weeks on."""

    span: Literal["day", "week"] = "day"
    shift: int = 0
    filter_kind: Literal["task", "event"] | None = None
    done: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"span": self.span, "shift": self.shift, "filter_kind": self.filter_kind, "done": self.done}


@dataclass(frozen=True, slots=True)
class ScheduledRequest:
    id: int
    user_id: int
    text: str
    title: str
    remind: str | None
    query: AgendaQuery | None  # None: free-form, for the agent
    timezone: str
    first_at: int
    recurrence: Recurrence | None
    status: str
    run_at: int
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class NewRequest:
    text: str
    title: str
    first_at: int
    timezone: str
    remind: str | None = None
    query: AgendaQuery | None = None
    recurrence: Recurrence | None = None
