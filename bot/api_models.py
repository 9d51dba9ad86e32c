"""Request and response bodies of the REST API (pydantic at the edge; strict bounds, no extras)."""

from __future__ import annotations

from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from schedule.domain import Item, Reminder

# Instants are epoch milliseconds UTC; anything outside 1970–2100 is a client bug, not a plan.
MIN_MS = 0
MAX_MS = 4_102_444_800_000  # 2100-01-01T00:00Z
EpochMs = Annotated[int, Field(ge=MIN_MS, lt=MAX_MS, description="epoch milliseconds (UTC)")]
Title = Annotated[str, Field(min_length=1, max_length=200)]
Channel = Literal["wechat", "template", "inapp"]


def check_timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except Exception as exc:  # ZoneInfoNotFoundError, ValueError on odd keys, OSError on paths
        raise ValueError(f"unknown IANA timezone {value[:64]!r}") from exc
    return value


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ReminderIn(_Body):
    remind_at: EpochMs | None = None
    offset_minutes: int | None = Field(None, ge=0, le=60 * 24 * 366)
    channel: Channel = "wechat"

    @model_validator(mode="after")
    def _has_time(self) -> ReminderIn:
        if self.remind_at is None and self.offset_minutes is None:
            raise ValueError("reminder needs remind_at or offset_minutes")
        return self


class ItemIn(_Body):
    kind: Literal["task", "event"]
    title: Title
    description: str | None = Field(None, max_length=2000)
    location: str | None = Field(None, max_length=200)
    start_at: EpochMs | None = None
    end_at: EpochMs | None = None
    due_at: EpochMs | None = None
    all_day: bool = False
    timezone: str | None = Field(None, max_length=64)
    source_text: str | None = Field(None, max_length=2000)
    reminder: ReminderIn | None = None

    _tz = field_validator("timezone")(lambda v: v if v is None else check_timezone(v))

    @model_validator(mode="after")
    def _consistent(self) -> ItemIn:
        if self.kind == "event" and self.start_at is None:
            raise ValueError("an event needs start_at")
        if self.kind == "task" and (self.start_at is not None or self.end_at is not None):
            raise ValueError("a task has due_at, not start_at/end_at")
        if self.start_at is not None and self.end_at is not None and self.end_at < self.start_at:
            raise ValueError("end_at is before start_at")
        anchor = self.start_at if self.kind == "event" else self.due_at
        if self.reminder and self.reminder.remind_at is None and anchor is None:
            raise ValueError("offset_minutes needs the item's start_at or due_at")
        return self


class ItemPatch(_Body):
    title: Title | None = None
    description: str | None = Field(None, max_length=2000)
    location: str | None = Field(None, max_length=200)
    start_at: EpochMs | None = None
    end_at: EpochMs | None = None
    due_at: EpochMs | None = None
    all_day: bool | None = None
    timezone: str | None = Field(None, max_length=64)

    _tz = field_validator("timezone")(lambda v: v if v is None else check_timezone(v))


class ReminderOut(BaseModel):
    id: int
    item_id: int
    remind_at: int
    offset_minutes: int | None
    channel: str
    status: str

    @classmethod
    def of(cls, reminder: Reminder) -> ReminderOut:
        return cls(id=reminder.id, item_id=reminder.item_id, remind_at=reminder.remind_at,
                   offset_minutes=reminder.offset_minutes, channel=reminder.channel, status=reminder.status)


class ItemOut(BaseModel):
    id: int
    kind: str
    title: str
    status: str
    start_at: int | None
    end_at: int | None
    due_at: int | None
    all_day: bool
    local_date: str | None
    timezone: str
    description: str | None
    location: str | None
    rrule: str | None = None
    reminders: list[ReminderOut] | None = None

    @classmethod
    def of(cls, item: Item, *, with_reminders: bool = True) -> ItemOut:
        return cls(
            id=item.id, kind=item.kind, title=item.title, status=item.status, start_at=item.start_at,
            end_at=item.end_at, due_at=item.due_at, all_day=item.all_day, local_date=item.local_date,
            timezone=item.timezone, description=item.description, location=item.location,
            rrule=item.recurrence.rrule if item.recurrence else None,
            reminders=[ReminderOut.of(r) for r in item.reminders] if with_reminders else None,
        )


class ItemList(BaseModel):
    items: list[ItemOut]
