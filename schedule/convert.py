"""Row ↔ domain conversion (kept apart so the service reads as business rules)."""

from __future__ import annotations

from typing import cast
from zoneinfo import ZoneInfo

from sqlalchemy import Table

from schedule.clock import from_ms
from schedule.domain import DigestSubscription, Item, Lunar, Recurrence, Reminder, User
from schedule.model import DigestSubscriptionRow, ReminderRow, ScheduleItemRow, UserRow

ITEMS = cast(Table, ScheduleItemRow.__table__)
REMINDERS = cast(Table, ReminderRow.__table__)
# What `item_of` reads: not the user's original text (source_text), which can be long and is not shown.
ITEM_COLUMNS = [c for c in ITEMS.c if c.name not in ("source_text", "source_message_id", "deleted_at")]
# What `reminder_of` reads.
REMINDER_COLUMNS = [REMINDERS.c[name] for name in
                    ("id", "item_id", "remind_at", "offset_minutes", "channel", "status", "sent_at", "once")]


def user_of(row: UserRow) -> User:
    return User(id=row.id, wechat_openid=row.wechat_openid, timezone=row.timezone, subscribed=row.subscribed)


def reminder_of(row: ReminderRow) -> Reminder:
    return Reminder(id=row.id, item_id=row.item_id, remind_at=row.remind_at, offset_minutes=row.offset_minutes,
                    channel=row.channel, status=row.status, sent_at=row.sent_at, once=bool(row.once))


def recurrence_of(row: ScheduleItemRow) -> Recurrence | None:
    if not (row.rrule or row.workdays or row.lunar):
        return None
    lunar = Lunar(**row.lunar) if row.lunar else None
    return Recurrence(rrule=row.rrule, workdays=row.workdays, lunar=lunar, skipped=skipped_of(row),
                      done=skipped_of(row, "done"))


def skipped_of(row: ScheduleItemRow, key: str = "skipped") -> tuple[str, ...]:
    """Closed occurrences of a series (local ISO dates), kept in metadata_json["skipped"]; those done (rather
    than cancelled) are also in metadata_json["done"]."""
    found = (row.metadata_json or {}).get(key) or ()
    return tuple(sorted(str(d) for d in found))


def item_of(row: ScheduleItemRow, reminders: list[ReminderRow] | None = None) -> Item:
    return Item(
        id=row.id, user_id=row.user_id, kind=row.kind,  # type: ignore[arg-type]
        title=row.title, status=row.status,  # type: ignore[arg-type]
        timezone=row.timezone, start_at=row.start_at, end_at=row.end_at, due_at=row.due_at,
        all_day=row.all_day, local_date=row.local_date, description=row.description, location=row.location,
        recurrence=recurrence_of(row), source_channel=row.source_channel,
        created_at=row.created_at, updated_at=row.updated_at, sequence=row.sequence or 0,
        reminders=tuple(reminder_of(r) for r in sorted(reminders or [], key=lambda r: (r.remind_at, r.id))),
    )


def digest_of(row: DigestSubscriptionRow) -> DigestSubscription:
    return DigestSubscription(id=row.id, user_id=row.user_id, kind=row.kind, local_time=row.local_time,
                              timezone=row.timezone, channel=row.channel, status=row.status,
                              next_run_at=row.next_run_at, workdays=row.workdays, rrule=row.rrule)


def local_date_of(ms: int, tz: str) -> str:
    return from_ms(ms).astimezone(ZoneInfo(tz)).date().isoformat()

