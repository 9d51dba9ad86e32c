"""Runs the LLM's tool calls for one user, only through `ScheduleService`.

Arguments are validated by the pydantic models of `bot.agent.tools` before anything runs; a bad
argument, an unknown tool, another user's id (NotFound) or a refused change becomes a JSON error
returned to the model as the tool result — never an exception to the caller. A call that writes is one
unit of work: it fails with nothing stored, or it is committed before the model (and `done`) hear of it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import ValidationError

from bot.agent.port import PageLink
from bot.agent.tools import (
    DESCRIPTIONS,
    CancelItemArgs,
    CreateItemArgs,
    CreateReminderArgs,
    ListItemsArgs,
    PlanPageArgs,
    UpdateItemArgs,
)
from render.timefmt import local, moment_label
from schedule.clock import to_ms
from schedule.domain import Item, ItemChanges, NewItem, NewReminder, User
from schedule.errors import InvalidChange, NotFound
from schedule.recurrence import localize
from schedule.service import ScheduleService

log = logging.getLogger(__name__)
MAX_LISTED = 50
Done = str | None  # what a tool wrote, said in Chinese for the reply ("已记录：…"), or None


class Toolbox:
    """The tools bound to one user and one message; `done` lists what was written, in Chinese."""

    def __init__(self, service: ScheduleService, user: User, *, page_link: PageLink | None = None,
                 source_text: str | None = None) -> None:
        self._service, self._user, self._page_link = service, user, page_link
        self._tz = ZoneInfo(user.timezone)
        self._source_text = source_text
        self.done: list[str] = []
        self._run: dict[str, Callable[[Any, ScheduleService], Awaitable[tuple[dict[str, Any], Done]]]] = {
            "schedule_create_item": self._create_item, "schedule_list_items": self._list_items,
            "schedule_update_item": self._update_item, "schedule_cancel_item": self._cancel_item,
            "schedule_create_reminder": self._create_reminder, "schedule_render_plan_page": self._plan_page,
        }
        # Reads run without one: a page link is made on a connection of its own.
        self._writes = {"schedule_create_item", "schedule_update_item", "schedule_cancel_item",
                        "schedule_create_reminder"}

    async def run(self, name: str, arguments: str) -> str:
        """Validate and execute one call; the answer is the JSON text of the tool result."""
        if name not in self._run:
            return tool_error("unknown_tool", f"没有名为 {name[:60]} 的工具")
        model = DESCRIPTIONS[name][1]
        try:
            args = model.model_validate_json(arguments or "{}", context={"tz": self._tz})
        except ValidationError as exc:
            problems = [{"field": ".".join(str(p) for p in err["loc"]) or "arguments", "problem": err["msg"]}
                        for err in exc.errors(include_url=False, include_input=False)[:10]]
            return tool_error("invalid_arguments", "参数不合法，未执行", problems)
        try:
            if name in self._writes:
                async with self._service.unit_of_work() as unit:  # the writes and the result's view, or nothing
                    result, done = await self._run[name](args, self._service.within(unit))
            else:
                result, done = await self._run[name](args, self._service)
        except NotFound:
            return tool_error("not_found", "没有找到这个条目，未做任何修改")
        except InvalidChange as exc:
            return tool_error("invalid_change", f"无法执行：{exc}")
        except Exception as exc:  # a tool failure is reported to the model, not to the user as a crash
            log.warning("agent tool %s failed: %s", name, type(exc).__name__)
            return tool_error("tool_failed", "执行失败，未完成，没有保存任何改动")
        if done is not None:
            self.done.append(done)
        return json.dumps({"ok": True, **result}, ensure_ascii=False)

    # ------------------------------------------------------------------ the tools
    async def _create_item(self, args: CreateItemArgs, service: ScheduleService) -> tuple[dict[str, Any], Done]:
        start_at, due_at = self._day_start(args.start_at, args.all_day), self._day_start(args.due_at, args.all_day)
        anchor = start_at if args.kind == "event" else due_at
        reminders: tuple[NewReminder, ...] = ()
        if args.remind_at is not None:
            reminders = (NewReminder(remind_at=to_ms(args.remind_at)),)
        elif args.remind_offset_minutes is not None and anchor is not None:
            reminders = (NewReminder(remind_at=anchor - args.remind_offset_minutes * 60_000,
                                     offset_minutes=args.remind_offset_minutes),)
        item = await service.create_item(self._user.id, NewItem(
            kind=args.kind, title=args.title, timezone=self._user.timezone, start_at=start_at,
            end_at=_ms(args.end_at), due_at=due_at, all_day=args.all_day, location=args.location,
            source_channel="agent", source_text=self._source_text, reminders=reminders))
        return {"item": self._view(item)}, f"已记录：{_label(item)}"

    async def _list_items(self, args: ListItemsArgs, service: ScheduleService) -> tuple[dict[str, Any], Done]:
        items = await service.list_items(self._user.id, start_ms=to_ms(args.start), end_ms=to_ms(args.end),
                                               kind=args.kind, include_undated_tasks=args.include_undated_tasks)
        return self._listing(items), None

    async def _update_item(self, args: UpdateItemArgs, service: ScheduleService) -> tuple[dict[str, Any], Done]:
        item = await service.update_item(self._user.id, args.item_id, ItemChanges(
            title=args.title, location=args.location, start_at=_ms(args.start_at), end_at=_ms(args.end_at),
            due_at=_ms(args.due_at)))
        return {"item": self._view(item)}, f"已修改：{_label(item)}"

    async def _cancel_item(self, args: CancelItemArgs, service: ScheduleService) -> tuple[dict[str, Any], Done]:
        item = await service.cancel_item(self._user.id, args.item_id)
        return {"item": self._view(item)}, f"已取消：{_label(item)}"

    async def _create_reminder(self, args: CreateReminderArgs, service: ScheduleService) -> tuple[dict[str, Any], Done]:
        if args.remind_at is not None:
            new = NewReminder(remind_at=to_ms(args.remind_at))
        else:
            item = await service.get_item(self._user.id, args.item_id)
            if item.anchor_at is None or args.offset_minutes is None:
                raise InvalidChange("这个条目没有开始或截止时间，请给出具体提醒时间")
            new = NewReminder(remind_at=item.anchor_at - args.offset_minutes * 60_000,
                              offset_minutes=args.offset_minutes)
        reminder = await service.create_reminder(self._user.id, args.item_id, new)
        when = moment_label(reminder.remind_at, self._user.timezone)
        return {"reminder": {"id": reminder.id, "item_id": reminder.item_id, "remind_at": self._iso(reminder.remind_at),
                             "label": when}}, f"已设置提醒：{when}"

    async def _plan_page(self, args: PlanPageArgs, service: ScheduleService) -> tuple[dict[str, Any], Done]:
        start_ms, end_ms = to_ms(args.start), to_ms(args.end)
        if self._page_link is not None:
            return {"url": await self._page_link(self._user.id, start_ms, end_ms)}, None
        listing = self._listing(await service.list_items(self._user.id, start_ms=start_ms, end_ms=end_ms))
        return {"url": None, "note": "行程页暂不可用，请直接用文字按日期列出这些安排", **listing}, None

    # ------------------------------------------------------------------ views
    def _listing(self, items: list[Item]) -> dict[str, Any]:
        shown = [self._view(item) for item in items[:MAX_LISTED]]
        return {"count": len(items), "items": shown, "more": max(0, len(items) - MAX_LISTED)}

    def _view(self, item: Item) -> dict[str, Any]:
        view: dict[str, Any] = {"id": item.id, "kind": item.kind, "title": item.title, "status": item.status,
                                "when": _label(item), "all_day": item.all_day}
        for name in ("start_at", "end_at", "due_at"):
            value = getattr(item, name)
            if value is not None:
                view[name] = self._iso(value)
        if item.location:
            view["location"] = item.location
        view["reminders"] = [self._iso(r.remind_at) for r in item.reminders if r.status in ("pending", "locked")]
        return view

    def _iso(self, ms: int) -> str:
        return local(ms, self._user.timezone).isoformat(timespec="minutes")

    def _day_start(self, moment: datetime | None, all_day: bool) -> int | None:
        if moment is None:
            return None
        if all_day:  # an all-day item is anchored at local midnight of its date
            return to_ms(localize(datetime.combine(moment.astimezone(self._tz).date(), time()), self._tz))
        return to_ms(moment)


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else to_ms(moment)


def _label(item: Item) -> str:
    anchor = item.anchor_at
    if anchor is None:
        return item.title
    return f"{moment_label(anchor, item.timezone, all_day=item.all_day)} {item.title}"


def tool_error(code: str, message: str, details: list[dict[str, Any]] | None = None) -> str:
    body: dict[str, Any] = {"ok": False, "error": code, "message": message}
    if details:
        body["details"] = details
    return json.dumps(body, ensure_ascii=False)
