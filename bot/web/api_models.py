"""Request and response bodies of the REST API (pydantic at the edge; strict bounds, no extras)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from bot.web.api_recurrence import RecurrenceIn
from schedule.domain import Item, Recurrence, Reminder
from schedule.occurrence import reminder_occurrence

# Instants are epoch milliseconds UTC. Before 2000 is almost always epoch *seconds* sent by mistake
# (1781766000 s read as ms is January 1970), after 2100 a client bug: both are refused.
MIN_MS = 946_684_800_000  # 2000-01-01T00:00Z
MAX_MS = 4_102_444_800_000  # 2100-01-01T00:00Z
EPOCH_MS_EXPECTED = "epoch milliseconds expected (an instant between 2000 and 2100, e.g. 1781766000000)"
# The characters the chat path blanks (intent/normalise.py): C0/C1 controls, zero-width, bidi, surrogates.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")
_CONTROL_KEEP_LINES = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")


def _epoch_ms(value: int) -> int:
    if not MIN_MS <= value < MAX_MS:
        raise ValueError(EPOCH_MS_EXPECTED)
    return value


def _one_line(value: Any) -> Any:
    """Blank control characters (as the chat path does) and collapse runs of whitespace."""
    return " ".join(_CONTROL.sub(" ", value).split()) if isinstance(value, str) else value


def _text(value: Any) -> Any:
    """Multi-line text keeps newlines and tabs; other control characters are removed."""
    return _CONTROL_KEEP_LINES.sub("", value).strip() if isinstance(value, str) else value


EpochMs = Annotated[int, AfterValidator(_epoch_ms), Field(description="epoch milliseconds (UTC)")]
Title = Annotated[str, BeforeValidator(_one_line), Field(min_length=1, max_length=200)]
Line = Annotated[str, BeforeValidator(_one_line), Field(max_length=200)]
Text = Annotated[str, BeforeValidator(_text), Field(max_length=2000)]
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
    description: Text | None = None
    location: Line | None = None
    start_at: EpochMs | None = None
    end_at: EpochMs | None = None
    due_at: EpochMs | None = None
    all_day: bool = False
    timezone: str | None = Field(None, max_length=64)
    source_text: Text | None = None
    reminder: ReminderIn | None = None
    recurrence: RecurrenceIn | None = None

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
        if self.recurrence is not None and anchor is None:
            raise ValueError("recurrence needs the item's start_at or due_at (the first occurrence)")
        return self


class ItemPatch(_Body):
    """Only the fields sent change. `null` is refused except for `end_at` (removes the end) and `recurrence`
    (the item stops repeating)."""

    title: Title | None = None
    description: Text | None = None
    location: Line | None = None
    start_at: EpochMs | None = None
    end_at: EpochMs | None = None
    due_at: EpochMs | None = None
    all_day: bool | None = None
    timezone: str | None = Field(None, max_length=64)
    recurrence: RecurrenceIn | None = None  # null: the item stops repeating

    _tz = field_validator("timezone")(lambda v: v if v is None else check_timezone(v))

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = sorted(k for k, v in data.items() if v is None and k not in ("end_at", "recurrence"))
            if nulls:
                raise ValueError(f"{', '.join(nulls)} cannot be null: leave a field out to keep it")
        return data


class Timing(BaseModel):
    """What the worker will do with a pending reminder, given now and the catch-up window (past times)."""

    now_ms: int
    catchup_ms: int

    def delivery(self, reminder: Reminder) -> Literal["scheduled", "now", "expired"] | None:
        if reminder.status != "pending":
            return None
        if reminder.remind_at > self.now_ms:
            return "scheduled"
        return "now" if self.now_ms - reminder.remind_at <= self.catchup_ms else "expired"


class ReminderOut(BaseModel):
    """A reminder. `id` is always a stored reminder's id, which `POST /reminders/{id}/cancel` takes.

    A series stores a row only for its next reminder; the worker adds the following occurrence's row (same
    lead, same channel) when that one fires. So in an expanded listing a later occurrence's reminder is
    `planned: true` and carries the id of the series' stored reminder it will be made from (cancelling that
    id stops the series' reminders from then on; skip the occurrence to silence one day). A reminder keeps
    its identity (`item_id`, `remind_at`, `channel`: the table's unique key) when its own row is made, and
    then shows that row's id and `planned: false`. `occurrence_start` is the start (an event) or deadline
    (a task) of the occurrence the reminder is about, for a series' reminder; null for a one-off item's.
    `once`: a reminder of that occurrence only (a snooze), never carried to the next one."""

    id: int
    item_id: int
    remind_at: int
    offset_minutes: int | None
    channel: str
    status: str
    planned: bool = False
    occurrence_start: int | None = None
    once: bool = False
    delivery: Literal["scheduled", "now", "expired"] | None = Field(None, description=(
        "for a pending reminder: scheduled (in the future); now (in the past but within "
        "H5_REMINDER_CATCHUP_HOURS: sent at once); expired (older: marked expired and reported to the user "
        "on their next message instead of sent)"))

    @classmethod
    def of(cls, reminder: Reminder, timing: Timing | None = None, *, series_anchor: int | None = None
           ) -> ReminderOut:
        """`series_anchor`: the first instant of the reminder's series (None for a one-off item)."""
        return cls(id=reminder.id, item_id=reminder.item_id, remind_at=reminder.remind_at,
                   offset_minutes=reminder.offset_minutes, channel=reminder.channel, status=reminder.status,
                   planned=reminder.planned, once=reminder.once,
                   occurrence_start=reminder_occurrence(reminder, series_anchor) if series_anchor is not None
                   else None, delivery=timing.delivery(reminder) if timing else None)


class LunarOut(BaseModel):
    month: int
    day: int
    leap: bool = False


class RecurrenceOut(BaseModel):
    """How the item repeats: `rrule` (RFC 5545, its UNTIL in the item's local wall clock), `workdays: "cn"`
    (official Chinese working days, 调休 included), or `lunar` (yearly on that lunar month and day; such a
    series shows no rrule, since its solar dates move every year)."""

    rrule: str | None = None
    workdays: str | None = None
    lunar: LunarOut | None = None

    @classmethod
    def of(cls, recurrence: Recurrence) -> RecurrenceOut:
        lunar = recurrence.lunar
        if lunar is not None:
            return cls(workdays=recurrence.workdays, lunar=LunarOut(month=lunar.month, day=lunar.day, leap=lunar.leap))
        return cls(rrule=recurrence.rrule, workdays=recurrence.workdays)


class ItemOut(BaseModel):
    """An item, or in an expanded listing (`from` and `to` given) one occurrence of a series.

    `id` is the item's own id (what PATCH, complete and cancel take). For a repeating item, `series_id` is
    that same id and `occurrence_start` the occurrence this entry is (an event's start, a task's deadline,
    epoch ms; the item as stored is its first occurrence); `start_at`/`end_at`/`due_at` are that occurrence's
    and `reminders` its own. Both are null for a one-off item."""

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
    recurrence: RecurrenceOut | None = None
    series_id: int | None = None
    occurrence_start: int | None = None
    reminders: list[ReminderOut] | None = None

    @classmethod
    def of(cls, item: Item, *, with_reminders: bool = True, timing: Timing | None = None) -> ItemOut:
        series = item.recurrence is not None and item.anchor_at is not None
        # an occurrence lists its own reminders only; a reminder with no lead belongs to the first occurrence,
        # which is the entry whose time is the series' own
        series_anchor = item.anchor_at if series else None
        return cls(
            id=item.id, kind=item.kind, title=item.title, status=item.status, start_at=item.start_at,
            end_at=item.end_at, due_at=item.due_at, all_day=item.all_day, local_date=item.local_date,
            timezone=item.timezone, description=item.description, location=item.location,
            rrule=item.recurrence.rrule if item.recurrence and item.recurrence.lunar is None else None,
            recurrence=RecurrenceOut.of(item.recurrence) if item.recurrence else None,
            series_id=item.id if series else None, occurrence_start=item.anchor_at if series else None,
            reminders=[ReminderOut.of(r, timing, series_anchor=series_anchor) for r in item.reminders]
            if with_reminders else None,
        )


class ItemList(BaseModel):
    items: list[ItemOut]
    next_offset: int | None = Field(None, description="pass as `offset` for the next page; null on the last page")
    truncated: bool = Field(False, description="true when the range held more occurrences than one request may "
                                              "expand: the entries are the earliest ones; ask for a shorter range")
