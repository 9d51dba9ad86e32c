"""The schedule tools offered to the LLM (the agent's tools): pydantic argument models and the JSON schemas sent.

Times are ISO 8601 strings; one without an offset is read in the user's timezone (passed as the
validation context `{"tz": ZoneInfo}`), so every validated instant is aware.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from bot.web.api_models import Line, Title
from schedule.recurrence import localize

MAX_LIST_DAYS = 92
# The years an instant from the model may fall in: a year 1 or 9999 stored once made that user's listings and
# feed fail from then on (no local time exists for it in every timezone).
FIRST_YEAR, LAST_YEAR = 2000, 2100


def _resolve(value: datetime, info: ValidationInfo) -> datetime:
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValueError(f"年份 {value.year} 超出范围：只接受 {FIRST_YEAR} 到 {LAST_YEAR} 年之间的时间，"
                         "请按用户所说的日期（通常是今年或明年）重新给出")
    if value.tzinfo is not None:
        return value
    tz = (info.context or {}).get("tz")
    if not isinstance(tz, ZoneInfo):
        raise ValueError("时间需要带时区偏移，例如 2026-06-19T15:00:00+08:00")
    return localize(value, tz)


Instant = Annotated[datetime, AfterValidator(_resolve),
                    Field(description="ISO 8601 时间，带时区偏移，例如 2026-06-19T15:00:00+08:00")]
ItemId = Annotated[int, Field(ge=1, le=2**62, description="条目 id（来自 schedule_list_items 的结果）")]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class CreateItemArgs(_Args):
    kind: Literal["task", "event"] = Field(description="event：占用时间段的日程（开会、面试）；task：待办或截止事项")
    # Title and Line blank control characters as the API and chat do (NUL, VT, bidi overrides never reach
    # pages, ICS or pushes).
    title: Title = Field(description="简短标题，如“会议”“交房租”")
    start_at: Instant | None = Field(None, description="event 的开始时间（event 必填）")
    end_at: Instant | None = Field(None, description="event 的结束时间（可选）")
    due_at: Instant | None = Field(None, description="task 的截止时间（可选）")
    all_day: bool = Field(False, description="只有日期没有具体时刻时为 true，时间取当天 00:00")
    remind_at: Instant | None = Field(None, description="提醒时间（可选，与 remind_offset_minutes 二选一）")
    remind_offset_minutes: int | None = Field(None, ge=0, le=10_080, description="提前多少分钟提醒（可选）")
    location: Line | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CreateItemArgs:
        if self.kind == "event" and self.start_at is None:
            raise ValueError("event 需要 start_at")
        if self.kind == "task" and (self.start_at is not None or self.end_at is not None):
            raise ValueError("task 用 due_at，不用 start_at/end_at")
        if self.start_at is not None and self.end_at is not None and self.end_at < self.start_at:
            raise ValueError("end_at 早于 start_at")
        if self.remind_at is not None and self.remind_offset_minutes is not None:
            raise ValueError("remind_at 与 remind_offset_minutes 只能给一个")
        if self.remind_offset_minutes is not None and (self.start_at or self.due_at) is None:
            raise ValueError("没有开始或截止时间，无法按提前量提醒")
        return self


class ListItemsArgs(_Args):
    start: Instant = Field(description="范围开始（含）")
    end: Instant = Field(description="范围结束（不含）")
    kind: Literal["task", "event"] | None = Field(None, description="只看日程或只看待办（可选）")
    include_undated_tasks: bool = Field(False, description="同时列出没有截止时间的待办")

    @model_validator(mode="after")
    def _range(self) -> ListItemsArgs:
        _check_range(self.start, self.end)
        return self


class UpdateItemArgs(_Args):
    item_id: ItemId
    title: Title | None = None
    start_at: Instant | None = None
    end_at: Instant | None = None
    due_at: Instant | None = None
    location: Line | None = None

    @model_validator(mode="after")
    def _some_change(self) -> UpdateItemArgs:
        if all(getattr(self, name) is None for name in ("title", "start_at", "end_at", "due_at", "location")):
            raise ValueError("没有要修改的内容")
        return self


class CancelItemArgs(_Args):
    item_id: ItemId


class CreateReminderArgs(_Args):
    item_id: ItemId
    remind_at: Instant | None = Field(None, description="提醒时间（与 offset_minutes 二选一）")
    offset_minutes: int | None = Field(None, ge=0, le=10_080, description="在开始/截止前多少分钟提醒")

    @model_validator(mode="after")
    def _one_of(self) -> CreateReminderArgs:
        if (self.remind_at is None) == (self.offset_minutes is None):
            raise ValueError("remind_at 与 offset_minutes 必须且只能给一个")
        return self


class PlanPageArgs(_Args):
    start: Instant = Field(description="范围开始（含）")
    end: Instant = Field(description="范围结束（不含）")

    @model_validator(mode="after")
    def _range(self) -> PlanPageArgs:
        _check_range(self.start, self.end)
        return self


def _check_range(start: datetime, end: datetime) -> None:
    if end <= start:
        raise ValueError("end 必须晚于 start")
    if end - start > timedelta(days=MAX_LIST_DAYS):
        raise ValueError(f"范围最多 {MAX_LIST_DAYS} 天")


DESCRIPTIONS: dict[str, tuple[str, type[_Args]]] = {
    "schedule_create_item": ("新建一条待办（task）或日程（event），可同时设置提醒。", CreateItemArgs),
    "schedule_list_items": ("列出某个时间范围内的待办和日程（含 id 和提醒），修改或取消前先用它找到 id。",
                            ListItemsArgs),
    "schedule_update_item": ("修改一条已有条目的标题、时间或地点；移动日程时提醒会跟着移动。", UpdateItemArgs),
    "schedule_cancel_item": ("取消一条已有条目（它的提醒也会取消）。", CancelItemArgs),
    "schedule_create_reminder": ("给已有条目加一个提醒：指定时间，或提前若干分钟。", CreateReminderArgs),
    "schedule_render_plan_page": ("生成某个时间范围的行程页面链接；不可用时返回该范围的条目列表。", PlanPageArgs),
}


def tool_params() -> list[dict[str, Any]]:
    """The `tools` array of a chat-completions request, schemas generated from the models."""
    return [
        {"type": "function",
         "function": {"name": name, "description": text, "parameters": model.model_json_schema()}}
        for name, (text, model) in DESCRIPTIONS.items()
    ]
