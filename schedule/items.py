"""An item's life: created (with its reminders, under the active-item quota), read, changed (its reminders moved
with it), closed (completed, cancelled, deleted) and reopened. Every statement is scoped by the user's id."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, time, timedelta
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import bindparam, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule import users
from schedule.clock import from_ms, to_ms
from schedule.convert import ITEM_COLUMNS, ITEMS, REMINDER_COLUMNS, REMINDERS, item_of, local_date_of, recurrence_of
from schedule.domain import Item, ItemChanges, NewItem, NewReminder, Recurrence
from schedule.errors import InvalidChange, NotFound, QuotaExceeded
from schedule.fastsql import Executor, Fast, Rows, run_all
from schedule.model import ReminderRow, ScheduleItemRow, UserRow
from schedule.recurrence import localize, refused, refused_recurrence
from schedule.rows import OPEN_REMINDER, insert_reminder, owned_item, reminders_of

MAX_ACTIVE_ITEMS = 2000
# The per-user quota of active items, counted in the trip that inserts the next one, after locking the user's
# row: two creates (or reopens) of one user at once take turns, so the second counts the first's item. On
# SQLite the statement has no FOR UPDATE, and the database's one writer serialises them instead.
_LOCK_USER = Fast(select(UserRow.id).where(UserRow.id == bindparam("p_uid")).with_for_update())
_ACTIVE_COUNT = Fast(select(func.count()).select_from(ITEMS).where(ITEMS.c.user_id == bindparam("p_uid"),
                                                                  ITEMS.c.status == "active"))
# … and what takes back the item that went over it (its reminders first), in the same transaction: a caller
# that catches the error and goes on (a unit of work that commits other changes) never keeps the item.
_UNDO_ITEM = [Fast(delete(REMINDERS).where(REMINDERS.c.item_id == bindparam("p_id"))),
              Fast(delete(ITEMS).where(ITEMS.c.id == bindparam("p_id")))]
# Chat reads and writes items on every message: prebuilt statements over the columns `item_of` reads, so a
# message costs no ORM objects and no wide rows (source_text stays put).
_ITEM = Fast(select(*ITEM_COLUMNS).where(ITEMS.c.id == bindparam("p_id"), ITEMS.c.user_id == bindparam("p_uid"),
                                         ITEMS.c.status != "deleted"))
# An item's reminders sent in the trip that reads the item: owned by the user, or none are returned.
_REMINDERS_OF_OWN_ITEM = Fast(select(*REMINDER_COLUMNS).where(REMINDERS.c.item_id == bindparam("p_id"),
                                                              REMINDERS.c.user_id == bindparam("p_uid")))
_ITEM_FIELDS = ("user_id", "kind", "title", "description", "status", "start_at", "end_at", "due_at", "all_day",
                "local_date", "timezone", "location", "rrule", "workdays", "lunar", "source_channel",
                "source_message_id", "source_text", "metadata_json", "created_at", "updated_at", "sequence")
_REMINDER_FIELDS = ("user_id", "item_id", "remind_at", "offset_minutes", "channel", "status", "attempts",
                    "next_attempt_at", "created_at", "updated_at", "once")
_INSERT_ITEM = Fast(insert(ITEMS).values(
    {ITEMS.c[f]: bindparam(f"v_{f}", type_=ITEMS.c[f].type) for f in _ITEM_FIELDS}))
_INSERT_REMINDER = Fast(insert(REMINDERS).values(
    {REMINDERS.c[f]: bindparam(f"v_{f}", type_=REMINDERS.c[f].type) for f in _REMINDER_FIELDS}))
# A new item's one reminder, sent in the item INSERT's trip: its item_id is the id that INSERT just made.
_INSERT_ITS_REMINDER = Fast({
    dialect: insert(REMINDERS).values(
        {REMINDERS.c[f]: (last_id if f == "item_id" else bindparam(f"v_{f}", type_=REMINDERS.c[f].type))
         for f in _REMINDER_FIELDS})
    for dialect, last_id in (("mysql", func.last_insert_id()), ("sqlite", func.last_insert_rowid()))})
# Closing an item is one trip: read it, close it and its open reminders, read those back. Each statement
# carries the ownership guard itself (user, not deleted), so an item that is not the user's changes nothing.
_CLOSE_ITEM = Fast(update(ITEMS).where(ITEMS.c.id == bindparam("p_id"), ITEMS.c.user_id == bindparam("p_uid"),
                                       ITEMS.c.status != "deleted").values(
    status=bindparam("p_status"), updated_at=bindparam("p_at"), deleted_at=bindparam("p_deleted"),
    sequence=ITEMS.c.sequence + 1))
_CLOSE_REMINDERS = Fast(update(REMINDERS)  # the open statuses spelled out: no IN list to expand
                        .where(REMINDERS.c.item_id == bindparam("p_id"), REMINDERS.c.user_id == bindparam("p_uid"),
                               or_(*(REMINDERS.c.status == status for status in OPEN_REMINDER)))
                        .values(status="cancelled", updated_at=bindparam("p_at"), locked_until=None))


async def create(session: Executor, user_id: int, new: NewItem, *, now_ms: int, max_active: int) -> Item:
    values = _row_values(user_id, new, now_ms)
    await users.check_exists(session, user_id)
    # A new item has no reminders yet: plain inserts (duplicates in the request collapse to one).
    wanted = [{"user_id": user_id, "remind_at": r.remind_at, "offset_minutes": r.offset_minutes,
               "channel": r.channel, "status": "pending", "attempts": 0, "next_attempt_at": r.remind_at,
               "created_at": now_ms, "updated_at": now_ms, "once": r.once}
              for r in {(r.remind_at, r.channel): r for r in new.reminders}.values()]
    item_params = _prefixed(values)
    counted: list[tuple[Fast, Mapping[str, Any] | None]] = [(_ACTIVE_COUNT, {"p_uid": user_id})]
    if not users.holds_lock(session, user_id):  # a chat message's unit locked it when it opened
        counted.insert(0, (_LOCK_USER, {"p_uid": user_id}))
    if len(wanted) == 1:  # the usual case: item and reminder in one round trip (with the quota count)
        *_, count, item_row, rem_row = await run_all(session, [*counted, (_INSERT_ITEM, item_params),
                                                               (_INSERT_ITS_REMINDER, _prefixed(wanted[0]))])
        item_id = _new_id(item_row)
        rem_ids = [_new_id(rem_row)]
    else:
        *_, count, item_row = await run_all(session, [*counted, (_INSERT_ITEM, item_params)])
        item_id = _new_id(item_row)
        rem_ids = [_new_id(await _INSERT_REMINDER.run(session, _prefixed({**rem, "item_id": item_id})))
                   for rem in wanted]
    if (count.first() or (0,))[0] >= max_active:
        await run_all(session, [(undo, {"p_id": item_id}) for undo in _UNDO_ITEM])
        raise QuotaExceeded(max_active)
    reminders = [SimpleNamespace(id=rem_id, sent_at=None, item_id=item_id, **rem)
                 for rem_id, rem in zip(rem_ids, wanted, strict=True)]
    return item_of(SimpleNamespace(id=item_id, **values), reminders)  # type: ignore[arg-type]


def _row_values(user_id: int, new: NewItem, stamp: int) -> dict[str, Any]:
    """The new item's column values, once it is known to be valid (InvalidChange otherwise)."""
    _check_times(new.start_at, new.end_at)
    if new.kind == "event" and new.start_at is None:
        raise InvalidChange("an event needs start_at")
    anchor = new.start_at if new.kind == "event" else new.due_at
    end_at = new.end_at
    if new.all_day and new.kind == "event" and new.start_at is not None and end_at is None:
        end_at = _next_local_midnight(new.start_at, new.timezone)
    recurrence = new.recurrence
    refusal = refused_recurrence(recurrence, anchor_ms=anchor, tz=new.timezone)
    if refusal is not None:
        raise InvalidChange(refusal)
    return {
        "user_id": user_id, "kind": new.kind, "title": new.title, "description": new.description,
        "status": "active", "start_at": new.start_at, "end_at": end_at, "due_at": new.due_at,
        "all_day": new.all_day,
        "local_date": local_date_of(anchor, new.timezone) if new.all_day and anchor is not None else None,
        "timezone": new.timezone, "location": new.location,
        **_rule_columns(recurrence),
        "source_channel": new.source_channel, "source_message_id": new.source_message_id,
        "source_text": new.source_text, "metadata_json": new.metadata,
        "created_at": stamp, "updated_at": stamp, "sequence": 0,
    }


async def get(session: Executor, user_id: int, item_id: int) -> Item:
    params = {"p_id": item_id, "p_uid": user_id}
    found, reminders = await run_all(session, [(_ITEM, params), (_REMINDERS_OF_OWN_ITEM, params)])
    row = found.first()
    if row is None:
        raise NotFound(f"item {item_id}")
    return item_of(row, reminders.all())


async def change(session: AsyncSession, user_id: int, item_id: int, changes: ItemChanges, *, now_ms: int) -> Item:
    """Apply a partial change; moving an event or deadline moves its open reminders (offset kept)."""
    row = await owned_item(session, user_id, item_id, include_deleted=False)
    old_anchor = row.start_at if row.kind == "event" else row.due_at
    _check_series(row, changes)  # before any change to the row: a refused change leaves it as it was
    for name in ("title", "description", "location", "start_at", "end_at", "due_at", "all_day", "timezone"):
        value = getattr(changes, name)
        if value is not None:
            setattr(row, name, value)
    if changes.clear_end:
        row.end_at = None
    if changes.recurrence is not None or changes.clear_recurrence:
        for name, value in _rule_columns(changes.recurrence).items():
            setattr(row, name, value)
    if changes.start_at is not None and changes.end_at is None and row.end_at is not None \
            and old_anchor is not None and row.kind == "event":
        row.end_at += changes.start_at - old_anchor  # keep the duration
    _check_times(row.start_at, row.end_at)
    new_anchor = row.start_at if row.kind == "event" else row.due_at
    if row.all_day and new_anchor is not None:
        row.local_date = local_date_of(new_anchor, row.timezone)
    row.updated_at, row.sequence = now_ms, row.sequence + 1
    reminders = await reminders_of(session, [row.id])
    if old_anchor is not None and new_anchor is not None and new_anchor != old_anchor:
        def moved(rem: ReminderRow) -> int:
            return (new_anchor - rem.offset_minutes * 60_000 if rem.offset_minutes is not None
                    else rem.remind_at + (new_anchor - old_anchor))

        for rem in reminders:
            if rem.status == "pending":
                rem.remind_at, rem.updated_at = moved(rem), now_ms
        if not any(rem.status == "pending" for rem in reminders) and not recurrence_of(row):
            # Its reminder went out (or is going out) for the old time: the new time gets one again,
            # offset kept. One in flight keeps its row, so its delivery stays fenced and counted.
            again = {(moved(rem), rem.offset_minutes, rem.channel) for rem in reminders
                     if rem.status in ("sent", "locked") and moved(rem) > now_ms}
            for remind_at, offset, channel in sorted(again):
                await insert_reminder(session, row, NewReminder(remind_at=remind_at, offset_minutes=offset,
                                                                channel=channel), now_ms)
            reminders = await reminders_of(session, [row.id]) if again else reminders
    await session.flush()
    return item_of(row, reminders)


async def close(session: Executor, user_id: int, item_id: int, status: str, *, now_ms: int) -> Item:
    """Complete, cancel or delete the item, and cancel its open reminders."""
    params = {"p_id": item_id, "p_uid": user_id, "p_status": status, "p_at": now_ms,
              "p_deleted": now_ms if status == "deleted" else None}
    steps: list[tuple[Fast, Mapping[str, Any] | None]] = [
        (_ITEM, params), (_CLOSE_ITEM, params), (_CLOSE_REMINDERS, params), (_REMINDERS_OF_OWN_ITEM, params)]
    found, _closed, _cancelled, reminders = await run_all(session, steps)
    row = found.first()
    if row is None:  # not the user's, or deleted: the guarded updates changed nothing
        raise NotFound(f"item {item_id}")
    shown = SimpleNamespace(**{**row._asdict(), "status": status, "updated_at": now_ms, "sequence": row.sequence + 1})
    return item_of(shown, reminders.all())  # type: ignore[arg-type]


async def _check_room(session: Executor, user_id: int, more: int, max_active: int) -> None:
    """QuotaExceeded unless `more` items can become active again: counted under the user's row lock."""
    params = {"p_uid": user_id}
    steps: list[tuple[Fast, Mapping[str, Any] | None]] = [(_ACTIVE_COUNT, params)]
    if not users.holds_lock(session, user_id):
        steps.insert(0, (_LOCK_USER, params))
    *_, count = await run_all(session, steps)
    if (count.first() or (0,))[0] + more > max_active:
        raise QuotaExceeded(max_active)


async def reopen(session: AsyncSession, user_id: int, item_id: int, *, now_ms: int, max_active: int) -> Item:
    """Undo completing or cancelling one item (the page's 撤销): active again, and the reminders that the
    close cancelled (same instant) and that are still ahead are pending again. It counts towards the quota."""
    row = await owned_item(session, user_id, item_id, include_deleted=False)
    if row.status in ("completed", "cancelled"):
        await _check_room(session, user_id, 1, max_active)
        closed_at = row.updated_at
        row.status, row.updated_at, row.sequence = "active", now_ms, row.sequence + 1
        for rem in await reminders_of(session, [row.id]):
            if rem.status == "cancelled" and rem.updated_at == closed_at and rem.remind_at > now_ms:
                rem.status, rem.updated_at, rem.attempts = "pending", now_ms, 0
    await session.flush()
    return item_of(row, await reminders_of(session, [row.id]))


async def restore_recent(session: AsyncSession, user_id: int, *, since_ms: int, now_ms: int, max_active: int
                         ) -> tuple[list[Item], int]:
    """Undo the user's last cancel or complete (撤销), if it is their latest change and not older than
    `since_ms`: the items it closed are active again, and their reminders still ahead are pending again.
    Also returns how many series that change touched (one occurrence skipped): those are not undone.
    All of them or none: QuotaExceeded when they would take the user over the quota."""
    latest = await session.scalar(select(func.max(ScheduleItemRow.updated_at))
                                  .where(ScheduleItemRow.user_id == user_id))
    if latest is None or latest < since_ms:
        return [], 0
    touched = list(await session.scalars(select(ScheduleItemRow).where(
        ScheduleItemRow.user_id == user_id, ScheduleItemRow.updated_at == latest)))
    rows = [row for row in touched if row.status in ("cancelled", "completed")]
    series = sum(1 for row in touched if row.status == "active" and recurrence_of(row) is not None
                 and (row.metadata_json or {}).get("skipped"))
    if not rows:
        return [], series  # the latest change was something else (a create, a move, a skipped day)
    await _check_room(session, user_id, len(rows), max_active)
    ids = [row.id for row in rows]
    reminders = await session.scalars(select(ReminderRow).where(
        ReminderRow.item_id.in_(ids), ReminderRow.user_id == user_id, ReminderRow.status == "cancelled",
        ReminderRow.updated_at == latest, ReminderRow.remind_at > now_ms))
    for rem in reminders:
        rem.status, rem.updated_at = "pending", now_ms
    for row in rows:
        row.status, row.updated_at, row.sequence = "active", now_ms, row.sequence + 1
    await session.flush()
    found = await reminders_of(session, ids)
    items = [item_of(row, [r for r in found if r.item_id == row.id]) for row in rows]
    return sorted(items, key=lambda i: (i.anchor_at is None, i.anchor_at or 0, i.id)), series


def _rule_columns(rule: Recurrence | None) -> dict[str, Any]:
    """How a series' rule is stored: rrule, workdays and lunar columns (all None for a one-off)."""
    lunar = rule.lunar if rule else None
    return {"rrule": rule.rrule if rule else None, "workdays": rule.workdays if rule else None,
            "lunar": {"month": lunar.month, "day": lunar.day, "leap": lunar.leap} if lunar else None}


def _check_series(row: ScheduleItemRow, changes: ItemChanges) -> None:
    """A series whose rule or first day changes must still occur (a rule that never does is refused)."""
    rule = row.rrule
    if changes.recurrence is not None or changes.clear_recurrence:
        rule = changes.recurrence.rrule if changes.recurrence else None
    anchor = (changes.start_at or row.start_at) if row.kind == "event" else (changes.due_at or row.due_at)
    if rule is not None and (rule != row.rrule or changes.start_at or changes.due_at or changes.timezone):
        refusal = refused(rule, anchor_ms=anchor, tz=changes.timezone or row.timezone)
        if refusal is not None:
            raise InvalidChange(refusal)
    if changes.recurrence is not None and (changes.recurrence.lunar or changes.recurrence.workdays):
        refusal = refused_recurrence(changes.recurrence, anchor_ms=anchor, tz=changes.timezone or row.timezone)
        if refusal is not None:
            raise InvalidChange(refusal)


def _check_times(start_at: int | None, end_at: int | None) -> None:
    if start_at is not None and end_at is not None and end_at < start_at:
        raise InvalidChange("end_at is before start_at")


def _next_local_midnight(ms: int, tz: str) -> int:
    zone = ZoneInfo(tz)
    following = from_ms(ms).astimezone(zone).date() + timedelta(days=1)
    return to_ms(localize(datetime.combine(following, time()), zone))


def _prefixed(values: dict[str, Any]) -> dict[str, Any]:
    """Column values as the prebuilt INSERTs' parameters (`v_<column>`)."""
    return {f"v_{k}": v for k, v in values.items()}


def _new_id(result: Rows) -> int:
    assert result.lastrowid  # a single-row INSERT into a table with an autoincrement id
    return int(result.lastrowid)
