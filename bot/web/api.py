"""REST API `/api/schedule/...`: thin routes over ScheduleService, every query scoped to the caller."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from bot.web.api_models import EpochMs, ItemIn, ItemList, ItemOut, ItemPatch, ReminderOut, Timing
from schedule.clock import now_ms
from schedule.domain import ItemChanges, NewItem, NewReminder, User
from schedule.service import ScheduleService

_bearer = HTTPBearer(auto_error=False)


def service_of(request: Request) -> ScheduleService:
    service: ScheduleService = request.app.state.service
    return service


async def current_user(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    unauthorized = HTTPException(401, "missing or invalid bearer token", headers={"WWW-Authenticate": "Bearer"})
    if credentials is None or not credentials.credentials or len(credentials.credentials) > 200:
        raise unauthorized
    user = await service_of(request).user_for_token(credentials.credentials)
    if user is None:
        raise unauthorized
    return user


def timing_of(request: Request) -> Timing:
    """Now and the catch-up window, so responses can say what happens to a reminder in the past."""
    catchup_hours: int = request.app.state.settings.H5_REMINDER_CATCHUP_HOURS
    return Timing(now_ms=now_ms(request.app.state.clock), catchup_ms=catchup_hours * 3_600_000)


def json_body(request: Request) -> None:
    """A body must be JSON: a missing content-type is read as JSON, another one is refused with a clear 415."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.method in ("POST", "PATCH", "PUT") and content_type and \
            not (content_type == "application/json" or content_type.endswith("+json")):
        raise HTTPException(415, "send JSON with content-type application/json")


Caller = Annotated[User, Depends(current_user)]
Service = Annotated[ScheduleService, Depends(service_of)]
Now = Annotated[Timing, Depends(timing_of)]
DEFAULT_PAGE, MAX_PAGE = 200, 1000  # items per page of GET /items (`limit`, then `offset` = next_offset)
RowId = Annotated[int, Path(ge=1, lt=1 << 62)]

# strict_content_type=False: curl without -H content-type still works. The API authenticates with bearer
# tokens, never cookies, so the CSRF reason for strictness does not apply.
router = APIRouter(prefix="/api/schedule", tags=["schedule"], dependencies=[Depends(json_body)],
                   strict_content_type=False)


@router.post("/items", status_code=201)
async def create_item(body: ItemIn, user: Caller, service: Service, timing: Now) -> ItemOut:
    anchor = body.start_at if body.kind == "event" else body.due_at
    reminders: tuple[NewReminder, ...] = ()
    if body.reminder is not None:
        offset = body.reminder.offset_minutes
        remind_at = body.reminder.remind_at
        if remind_at is None and anchor is not None and offset is not None:
            remind_at = anchor - offset * 60_000
        if remind_at is not None:
            reminders = (NewReminder(remind_at=remind_at, offset_minutes=offset, channel=body.reminder.channel),)
    tz = body.timezone or user.timezone
    item = await service.create_item(user.id, NewItem(
        kind=body.kind, title=body.title, timezone=tz, start_at=body.start_at,
        end_at=body.end_at, due_at=body.due_at, all_day=body.all_day, description=body.description,
        location=body.location, source_channel="api", source_text=body.source_text, reminders=reminders,
        recurrence=body.recurrence.to_domain(tz) if body.recurrence else None,
    ))
    return ItemOut.of(item, timing=timing)


@router.get("/items")
async def list_items(
    user: Caller,
    service: Service,
    timing: Now,
    from_: Annotated[EpochMs | None, Query(alias="from")] = None,
    to: Annotated[EpochMs | None, Query()] = None,
    kind: Literal["task", "event"] | None = None,
    include_reminders: Annotated[bool, Query()] = False,
    include_undated: Annotated[bool, Query()] = True,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
    offset: Annotated[int, Query(ge=0, le=1 << 31)] = 0,
) -> ItemList:
    if from_ is not None and to is not None and to < from_:
        raise HTTPException(422, "'to' is before 'from'")
    # The page is cut before the series are expanded: only the entries up to it (and one more, to know
    # whether a next page exists) are ever built, within the request's expansion budget.
    window = await service.list_window(user.id, start_ms=from_, end_ms=to, kind=kind, expand=to is not None,
                                       include_undated_tasks=include_undated, include_reminders=include_reminders,
                                       first=offset + limit + 1)
    items = window.items
    page = items[offset:offset + limit]
    return ItemList(items=[ItemOut.of(i, with_reminders=include_reminders, timing=timing) for i in page],
                    next_offset=offset + limit if offset + limit < len(items) else None,
                    truncated=not window.complete)


@router.get("/items/{item_id}")
async def get_item(item_id: RowId, user: Caller, service: Service, timing: Now) -> ItemOut:
    return ItemOut.of(await service.get_item(user.id, item_id), timing=timing)


@router.patch("/items/{item_id}")
async def update_item(item_id: RowId, body: ItemPatch, user: Caller, service: Service, timing: Now) -> ItemOut:
    sent = body.model_dump(exclude_unset=True)
    clear_end = "end_at" in sent and sent["end_at"] is None
    rule = sent.pop("recurrence", None)
    recurrence = None
    if body.recurrence is not None:
        tz = body.timezone or (await service.get_item(user.id, item_id)).timezone
        recurrence = body.recurrence.to_domain(tz)
    changes = ItemChanges(**{k: v for k, v in sent.items() if v is not None}, clear_end=clear_end,
                          recurrence=recurrence,
                          clear_recurrence="recurrence" in body.model_fields_set and rule is None)
    return ItemOut.of(await service.update_item(user.id, item_id, changes), timing=timing)


OccurrenceDay = Annotated[date | None, Query(alias="on", description=(
    "a series' occurrence, by its local date (YYYY-MM-DD): only that occurrence is done or cancelled and the "
    "series goes on; a day the series does not occur on is refused (422)"))]


@router.post("/items/{item_id}/complete")
async def complete_item(item_id: RowId, user: Caller, service: Service, on: OccurrenceDay = None) -> ItemOut:
    if on is not None:
        return ItemOut.of(await service.complete_occurrence(user.id, item_id, on))
    return ItemOut.of(await service.complete_item(user.id, item_id))


@router.post("/items/{item_id}/cancel")
async def cancel_item(item_id: RowId, user: Caller, service: Service, on: OccurrenceDay = None) -> ItemOut:
    if on is not None:
        return ItemOut.of(await service.skip_occurrence(user.id, item_id, on))
    return ItemOut.of(await service.cancel_item(user.id, item_id))


@router.delete("/items/{item_id}")
async def delete_item(item_id: RowId, user: Caller, service: Service) -> ItemOut:
    return ItemOut.of(await service.delete_item(user.id, item_id))


@router.post("/reminders/{reminder_id}/cancel")
async def cancel_reminder(reminder_id: RowId, user: Caller, service: Service) -> ReminderOut:
    return ReminderOut.of(await service.cancel_reminder(user.id, reminder_id))
