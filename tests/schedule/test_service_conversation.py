"""Service methods the conversation relies on, on SQLite and MariaDB: the unit of work, skipping one
occurrence of a series, changing a reminder's lead, the last delivered reminder, the in-app queue."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import inbox, outbox
from schedule.clock import to_ms
from schedule.domain import NewItem, NewReminder, Recurrence
from schedule.errors import InvalidChange
from schedule.model import DeliveryLogRow, OutboundMessageRow, ReminderRow, ScheduleItemRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
Sessions = async_sessionmaker[AsyncSession]


def ms(month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return to_ms(datetime(2026, month, day, hour, minute, tzinfo=SH))


@pytest.fixture
def service(sessions: Sessions, clock: FrozenClock) -> ScheduleService:
    return ScheduleService(sessions, clock)


def weekly_meeting() -> NewItem:  # Mondays 10:00 from 6/22, reminded 15 minutes ahead
    return NewItem(kind="event", title="周会", timezone="Asia/Shanghai", start_at=ms(6, 22, 10),
                   recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"),
                   reminders=(NewReminder(remind_at=ms(6, 22, 9, 45), offset_minutes=15),))


async def test_unit_of_work_commits_or_rolls_back_every_call(service: ScheduleService, sessions: Sessions) -> None:
    user = await service.get_or_create_user("u")

    async def failing_message() -> None:
        async with service.unit_of_work() as unit:
            in_unit = service.within(unit)  # every call of it runs in the unit
            await in_unit.create_item(user.id, NewItem(kind="task", title="甲", timezone="Asia/Shanghai"))
            await in_unit.create_item(user.id, NewItem(kind="task", title="乙", timezone="Asia/Shanghai"))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await failing_message()
    assert await service.list_items(user.id, include_undated_tasks=True) == []
    async with service.unit_of_work() as unit:
        in_unit = service.within(unit)  # every call of it runs in the unit
        await in_unit.create_item(user.id, NewItem(kind="task", title="甲", timezone="Asia/Shanghai"))
        await in_unit.create_item(user.id, NewItem(kind="task", title="乙", timezone="Asia/Shanghai"))
    assert [i.title for i in await service.list_items(user.id, include_undated_tasks=True)] == ["甲", "乙"]


async def test_skipping_an_occurrence_keeps_the_series(service: ScheduleService, sessions: Sessions) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, weekly_meeting())
    skipped = await service.skip_occurrence(user.id, item.id, date(2026, 6, 22))
    assert skipped.status == "active" and skipped.recurrence is not None
    assert skipped.recurrence.skipped == ("2026-06-22",)
    reminders = sorted((r.remind_at, r.status) for r in skipped.reminders)
    assert reminders == [(ms(6, 22, 9, 45), "cancelled"), (ms(6, 29, 9, 45), "pending")]
    week_of_22 = await service.list_items(user.id, start_ms=ms(6, 22), end_ms=ms(6, 29))
    week_of_29 = await service.list_items(user.id, start_ms=ms(6, 29), end_ms=ms(7, 6))
    assert week_of_22 == [] and [i.start_at for i in week_of_29] == [ms(6, 29, 10)]
    plain = await service.create_item(user.id, NewItem(kind="event", title="会", timezone="Asia/Shanghai",
                                                       start_at=ms(6, 23, 10)))
    with pytest.raises(InvalidChange):
        await service.skip_occurrence(user.id, plain.id, date(2026, 6, 23))


async def test_reminder_lead_is_replaced(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, NewItem(
        kind="event", title="会议", timezone="Asia/Shanghai", start_at=ms(6, 19, 15),
        reminders=(NewReminder(remind_at=ms(6, 19, 14), offset_minutes=60),)))
    changed = await service.set_reminder_lead(user.id, item.id, 15)
    assert sorted((r.remind_at, r.offset_minutes, r.status) for r in changed.reminders) == [
        (ms(6, 19, 14), 60, "cancelled"), (ms(6, 19, 14, 45), 15, "pending")]


async def test_last_delivered_reminder(service: ScheduleService, sessions: Sessions) -> None:
    user = await service.get_or_create_user("u")
    other = await service.get_or_create_user("v")
    for owner, title, hour in ((user, "早", 8), (user, "晚", 9), (other, "别人", 9)):
        item = await service.create_item(owner.id, NewItem(
            kind="task", title=title, timezone="Asia/Shanghai", due_at=ms(6, 18, hour),
            reminders=(NewReminder(remind_at=ms(6, 18, hour)),)))
        async with sessions.begin() as session:
            await session.execute(update(ReminderRow).where(ReminderRow.item_id == item.id)
                                  .values(status="sent", sent_at=ms(6, 18, hour, 1)))
    found = await service.last_delivered_reminder(user.id, since_ms=ms(6, 18, 7))
    assert found is not None and found[1].title == "晚"
    assert await service.last_delivered_reminder(user.id, since_ms=ms(6, 18, 10)) is None


async def test_in_app_queue_is_taken_once(service: ScheduleService, sessions: Sessions) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, NewItem(
        kind="task", title="交水费", timezone="Asia/Shanghai", due_at=ms(6, 18, 9),
        reminders=(NewReminder(remind_at=ms(6, 18, 9)),)))
    rid = item.reminders[0].id
    async with sessions.begin() as session:
        await session.execute(update(ReminderRow).where(ReminderRow.id == rid).values(status="locked"))
        await outbox.enqueue(session, user_id=user.id, idempotency_key="r1", kind="reminder", channel="inapp",
                             payload={"text": "⏰ 提醒：交水费"}, now_ms=ms(6, 18, 9), reminder_id=rid)
        await outbox.enqueue(session, user_id=user.id, idempotency_key="r2", kind="notice", channel="inapp",
                             payload={"text": "⏰ 提醒：昨天的事", "expired": True}, now_ms=ms(6, 18, 9, 1))
    async with sessions.begin() as session:
        taken = await inbox.take(session, user.id, now_ms=ms(6, 18, 10))
    assert [(n.text, n.expired) for n in taken] == [("⏰ 提醒：交水费", False), ("⏰ 提醒：昨天的事", True)]
    async with sessions.begin() as session:
        assert await inbox.take(session, user.id, now_ms=ms(6, 18, 11)) == []
        rows = (await session.scalars(select(OutboundMessageRow))).all()
        reminder = await session.get(ReminderRow, rid)
        logs = (await session.scalars(select(DeliveryLogRow))).all()
        items = (await session.scalars(select(ScheduleItemRow))).all()
    assert {r.status for r in rows} == {"sent"}
    assert reminder is not None and (reminder.status, reminder.sent_at) == ("sent", ms(6, 18, 10))
    assert [(log.channel, log.status) for log in logs] == [("inapp", "success")] * 2
    assert len(items) == 1
