"""The intent contract (what `schedbot parse` prints): a pydantic union discriminated on `action`, plus `to_json`.

`Intent.model_validate_json` on the base class dispatches to the right action model.
"""

from __future__ import annotations

import datetime as dt
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Action = Literal[
    "create", "query", "update", "cancel", "complete", "snooze",
    "subscribe_digest", "unsubscribe_digest", "none",
    "request",  # a request the bot runs later (intent.request); added to the contract
]
Missing = Literal[
    "event_time", "reminder_time", "reminder_offset", "digest_time", "snooze_duration", "target", "changes"
]
Kind = Literal["task", "event"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class Reminder(_Value):
    remind_at: datetime
    offset_minutes: int | None = None


class Lunar(_Value):
    month: int
    day: int
    leap: bool = False


class Recurrence(_Value):
    rrule: str
    workdays: Literal["cn"] | None = None
    lunar: Lunar | None = None
    # Courses, several times a day, intervals (added to the contract; the rrule says it all, these in words):
    times: tuple[dt.time, ...] = ()  # 早上7点半 晚上9点: the local times of each day, in order
    doses: int | None = None  # 每天两次: times a day said without the times (asked)
    count: int | None = None  # 还12期 / 共10次: occurrences in all (RRULE COUNT)
    until: dt.date | None = None  # 吃两周 / 吃到下周五: the last local day (RRULE UNTIL, end of that day)
    window: tuple[dt.time, dt.time] | None = None  # 每隔两小时 inside 09:00–21:00: the daily window
    step_minutes: int | None = None  # 每隔两小时 → 120


class Changes(_Value):
    start_at: datetime | None = None
    date: dt.date | None = None
    due_at: datetime | None = None
    offset_minutes: int | None = None
    title: str | None = None
    shift_minutes: int | None = None  # 推迟半小时: move by this much (added to the contract; null otherwise)
    location: str | None = None  # 地点改成人民医院 (added to the contract; null otherwise)
    # Follow-ups about the item in focus (added to the contract): 四点结束 / 大概两个小时 / 备注… / 以后每周都这样
    end_at: datetime | None = None
    duration_minutes: int | None = None
    note: str | None = None
    recurrence: Recurrence | None = None
    another_reminder: bool = False  # 再加一个提前10分钟的提醒: offset_minutes is an extra reminder, the others kept
    day_said: bool = False  # the new time names a day (改到明天四点); without one the item keeps its day
    bare_hour: int | None = None  # 改到九点: the new clock's hour (1–11) said without its half of the day
    no_reminder: bool = False  # 不用提醒我了 / 取消提醒: the item stays, its open reminders go
    # A series several times a day (added to the contract): 早上那次改到八点 moves one of its times; 停药 ends it
    dose_from: str | None = None  # which time: a part of the day (早上) or a clock "HH:MM"
    dose_to: dt.time | None = None
    end_series: bool = False  # the series ends now: past occurrences kept, no later one


class Pending(_Value):
    """What the dialogue merge needs to complete a clarified intent from the user's answer."""

    label: str = ""  # shown in the question, e.g. 明天开会
    on_date: dt.date | None = None  # the date already known (local)
    is_meeting: bool = False
    wants_reminder: bool = False  # the user asked for a reminder (提醒)
    lead_minutes: int | None = None  # a lead time already given
    period: str | None = None  # the part of the day already said without a clock (周五晚上 → 晚上)
    remind_on: dt.date | None = None  # a day said for the reminder, not the item's own (clock still to come)
    lead_period: str | None = None  # the part of the lead's day already said (前一晚 / 前一天早上 → 晚上 / 早上)


class Intent(BaseModel):
    """Base of every action model; validating against `Intent` itself picks the action's model."""

    # defer_build: schemas are built on first use, keeping `import intent` fast
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)
    action: Action
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    needs_clarification: list[Missing] = Field(default_factory=list)
    question: str | None = None
    rule: str = ""  # the named rule that decided this intent (for test failures and logs)
    pending: Pending | None = None

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kw: Any) -> Intent:
        if cls is Intent:
            found: Intent = _adapter().validate_json(json_data)
            return found
        return super().model_validate_json(json_data, **kw)

    @classmethod
    def model_validate(cls, obj: Any, **kw: Any) -> Intent:
        if cls is Intent:
            found: Intent = _adapter().validate_python(obj)
            return found
        return super().model_validate(obj, **kw)


class CreateIntent(Intent):
    action: Literal["create"] = "create"
    kind: Kind = "task"
    title: str = ""
    start_at: datetime | None = None
    end_at: datetime | None = None
    due_at: datetime | None = None
    all_day: bool = False
    reminder: Reminder | None = None
    explicit_no_reminder: bool = False
    recurrence: Recurrence | None = None
    location: str | None = None  # 地点在望京SOHO (added to the contract; null otherwise)
    note: str | None = None  # links and phone numbers said with the request (added to the contract; null otherwise)
    day_said: bool = False  # a day was said (this message or an earlier answer): a past clock today is not rolled


class QueryIntent(Intent):
    action: Literal["query"] = "query"
    range_start: datetime | None = None
    range_end: datetime | None = None
    prefer_page: bool = False
    filter_kind: Kind | None = None
    reminders: bool = False  # 我有哪些闹钟 / 看看我的提醒: only what will still be reminded (added to the contract)
    about: str | None = None  # 跟王总吃饭是哪天: the words naming the one item asked about (added to the contract)
    asked: Literal["when", "where"] | None = None  # what is asked of it


class _Targeted(Intent):
    target_text: str | None = None
    target_date: dt.date | None = None
    choice: int | None = None  # 1-based pick among candidates ("第二个")
    every: bool = False  # 都/全部/所有: every match, not one (cancel and complete only)
    reminders: bool = False  # 关掉闹钟 / 清空提醒: among reminders (a task reminded at its own time), not any item
    # The clock said about the target (下午三点的会改到四点 → 15:00), the day it falls on, and whether that day
    # was said (else it is today's or the next one's).
    target_minute: int | None = None
    target_on: dt.date | None = None
    target_on_said: bool = False


class UpdateIntent(_Targeted):
    action: Literal["update"] = "update"
    changes: Changes | None = None
    new_day: dt.date | None = None  # 改到上午 / 改到明天上午 asked 几点: the day and part said so far
    new_period: str | None = None
    or_focus: bool = False  # the words may name no item (集合地点改成…): then the item in focus is meant


class CancelIntent(_Targeted):
    action: Literal["cancel"] = "cancel"


class CompleteIntent(_Targeted):
    action: Literal["complete"] = "complete"


class SnoozeIntent(Intent):
    action: Literal["snooze"] = "snooze"
    reminder: Reminder | None = None


class SubscribeDigestIntent(Intent):
    action: Literal["subscribe_digest"] = "subscribe_digest"
    digest_kind: str = "todo_day"
    time: str | None = None
    recurrence: Recurrence | None = None
    # A change to the push the user has (推送改到8点, 周末就别发了): what is not said stays as it is.
    retime: bool = False
    kind_said: bool = False  # the agenda was named (当天 / 第二天的): `digest_kind` replaces the push's
    days_said: bool = False  # the days were named (工作日 / 周末不用发 / 每天都发): `recurrence` replaces the push's


class UnsubscribeDigestIntent(Intent):
    action: Literal["unsubscribe_digest"] = "unsubscribe_digest"


class RequestQuery(_Value):
    """A schedule query run at a request's time: the run's day or week (`shift` later), maybe only events
    or tasks, maybe only what was done."""

    span: Literal["day", "week"] = "day"
    shift: int = 0
    filter_kind: Kind | None = None
    done: bool = False


class RequestIntent(Intent):
    """A request the bot runs later (每天早上8点告诉我今天的天气), or listing / cancelling those."""

    action: Literal["request"] = "request"
    op: Literal["create", "list", "cancel", "update"] = "create"
    text: str = ""  # the request to run, its time words left out (告诉我今天的天气)
    title: str = ""  # the short label a reply shows (今天的天气)
    remind: str | None = None  # 提醒我写周报并列出…: the reminder said before the request
    first_at: datetime | None = None  # create: the first run; update: the new time
    recurrence: Recurrence | None = None
    query: RequestQuery | None = None  # a schedule query the rules answer; None: free-form (the agent)
    target_text: str | None = None  # cancel: the words naming the request (天气)
    period: str | None = None  # cancel: the part of the day said (早上); update: the new time's, if said


class NoneIntent(Intent):
    action: Literal["none"] = "none"


AnyIntent = Annotated[
    CreateIntent | QueryIntent | UpdateIntent | CancelIntent | CompleteIntent | SnoozeIntent
    | SubscribeDigestIntent | UnsubscribeDigestIntent | NoneIntent | RequestIntent,
    Field(discriminator="action"),
]


class _Cache:
    adapter: ClassVar[TypeAdapter[Any] | None] = None


def _adapter() -> TypeAdapter[Any]:
    if _Cache.adapter is None:
        _Cache.adapter = TypeAdapter(AnyIntent)
    return _Cache.adapter


CONTRACT_FIELDS = (
    "action", "kind", "title", "start_at", "end_at", "due_at", "all_day", "reminder", "explicit_no_reminder",
    "recurrence", "needs_clarification", "question", "range_start", "range_end", "prefer_page", "filter_kind",
    "target_text", "target_date", "changes", "time", "confidence",
)


def to_json(intent: Intent) -> dict[str, Any]:
    """The contract JSON: every original field present (null when not applicable), instants with their offset."""
    dumped = intent.model_dump(mode="json")
    out: dict[str, Any] = {name: dumped.get(name) for name in CONTRACT_FIELDS}
    if isinstance(out["changes"], dict):
        out["changes"] = {k: v for k, v in out["changes"].items() if v is not None}
    if not out["needs_clarification"]:
        out["needs_clarification"] = None
    for extra in ("rule", "choice", "digest_kind", "pending"):
        if extra in dumped:
            out[extra] = dumped[extra]
    if dumped.get("every"):
        out["every"] = True
    if dumped.get("reminders"):
        out["reminders"] = True
    if dumped.get("about"):
        out.update(about=dumped["about"], asked=dumped["asked"])
    if dumped.get("location"):
        out["location"] = dumped["location"]
    if dumped.get("action") == "request":  # requests run later: added to the contract
        out.update({k: dumped.get(k) for k in ("op", "text", "title", "remind", "first_at", "query", "period")})
    return out
