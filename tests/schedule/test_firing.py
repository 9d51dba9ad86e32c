"""Due reminders and digests become outbox rows exactly once (SQLite and MariaDB)."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from render.push import digest_text, reminder_text
from schedule.clock import to_ms
from schedule.db import create_engine, session_factory
from schedule.domain import NewItem, NewReminder, Recurrence
from schedule.firing import Scheduler
from schedule.model import OutboundMessageRow, ReminderRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock, RecordingChannel
from schedule.worker import DeliveryWorker

SH = ZoneInfo("Asia/Shanghai")


def ms(*args: int) -> int:
    return to_ms(datetime(*args, tzinfo=SH))  # type: ignore[misc]


def scheduler(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> Scheduler:
    return Scheduler(sessions, clock, reminder_text=lambda item, at: reminder_text(item, remind_at=at),
                     digest_text=lambda day, items, tz, ahead: digest_text(day, items, tz=tz, next_day=ahead))


async def outbox_rows(sessions: async_sessionmaker[AsyncSession]) -> list[OutboundMessageRow]:
    async with sessions() as session:
        return list((await session.scalars(select(OutboundMessageRow).order_by(OutboundMessageRow.id))).all())


@pytest.fixture
def service(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> ScheduleService:
    return ScheduleService(sessions, clock)


async def meeting(service: ScheduleService, user_id: int, start: int, lead_min: int = 60, **extra: object) -> int:
    item = await service.create_item(user_id, NewItem(
        kind="event", title="会议", timezone="Asia/Shanghai", start_at=start,
        reminders=(NewReminder(remind_at=start - lead_min * 60_000, offset_minutes=lead_min),), **extra))  # type: ignore[arg-type]
    return item.id


async def test_due_reminder_is_queued_then_sent(service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                                                clock: FrozenClock) -> None:
    user = await service.get_or_create_user("oU")
    await meeting(service, user.id, ms(2026, 6, 18, 15, 0))
    s = scheduler(sessions, clock)
    assert (await s.tick()).reminders_queued == 0  # 10:00, reminder at 14:00
    clock.set(datetime(2026, 6, 18, 14, 0, tzinfo=SH))
    assert (await s.tick()).reminders_queued == 1
    assert (await s.tick()).reminders_queued == 0  # fired once
    [row] = await outbox_rows(sessions)
    assert row.kind == "reminder"
    assert row.payload["text"] == "⏰ 提醒：6月18日（周四）15:00 会议开始，还有 60 分钟。"
    channel = RecordingChannel()
    await DeliveryWorker(sessions, clock, {"wechat": channel}).run_once()
    assert [m.openid for m in channel.sent] == ["oU"]
    async with sessions() as session:
        reminder = (await session.scalars(select(ReminderRow))).one()
    assert reminder.status == "sent"
    assert reminder.sent_at == ms(2026, 6, 18, 14, 0)


async def test_cancelled_item_is_never_pushed(service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                                             clock: FrozenClock) -> None:
    user = await service.get_or_create_user("oU")
    item_id = await meeting(service, user.id, ms(2026, 6, 18, 15, 0))
    await service.cancel_item(user.id, item_id)
    clock.set(datetime(2026, 6, 18, 14, 30, tzinfo=SH))
    assert (await scheduler(sessions, clock).tick()).reminders_queued == 0
    assert await outbox_rows(sessions) == []


@pytest.mark.parametrize(("late_hours", "queued", "expired"), [(11, 1, 0), (13, 0, 1)])
async def test_catch_up_after_downtime(service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                                       clock: FrozenClock, late_hours: int, queued: int, expired: int) -> None:
    user = await service.get_or_create_user("oU")
    await meeting(service, user.id, ms(2026, 6, 18, 15, 0))
    clock.set(datetime(2026, 6, 18, 14, 0, tzinfo=SH) + timedelta(hours=late_hours))
    report = await scheduler(sessions, clock).tick()
    assert (report.reminders_queued, report.reminders_expired) == (queued, expired)


async def test_recurring_reminder_schedules_the_next_occurrence(
        service: ScheduleService, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    user = await service.get_or_create_user("oU")
    await meeting(service, user.id, ms(2026, 6, 22, 10, 0), lead_min=15,
                  recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"))
    s = scheduler(sessions, clock)
    clock.set(datetime(2026, 6, 22, 9, 45, tzinfo=SH))
    assert (await s.tick()).reminders_queued == 1
    clock.set(datetime(2026, 6, 29, 9, 45, tzinfo=SH))
    assert (await s.tick()).reminders_queued == 1
    rows = await outbox_rows(sessions)
    assert [r.payload["when"] for r in rows] == ["2026-06-22 10:00", "2026-06-29 10:00"]
    async with sessions() as session:
        pending = (await session.scalars(select(ReminderRow.remind_at).where(ReminderRow.status == "pending"))).all()
    assert list(pending) == [ms(2026, 7, 6, 9, 45)]


async def test_daily_digest_lists_today_and_overdue(service: ScheduleService,
                                                    sessions: async_sessionmaker[AsyncSession],
                                                    clock: FrozenClock) -> None:
    user = await service.get_or_create_user("oU")
    await service.subscribe_digest(user.id, local_time="07:00")
    await service.create_item(user.id, NewItem(kind="event", title="评审会", timezone="Asia/Shanghai",
                                               start_at=ms(2026, 6, 19, 15, 0)))
    await service.create_item(user.id, NewItem(kind="task", title="交报告", timezone="Asia/Shanghai",
                                               due_at=ms(2026, 6, 19, 18, 0)))
    await service.create_item(user.id, NewItem(kind="task", title="买票", timezone="Asia/Shanghai",
                                               due_at=ms(2026, 6, 17, 12, 0)))
    await service.create_item(user.id, NewItem(kind="event", title="明天的事", timezone="Asia/Shanghai",
                                               start_at=ms(2026, 6, 20, 9, 0)))
    clock.set(datetime(2026, 6, 19, 7, 0, tzinfo=SH))
    assert (await scheduler(sessions, clock).tick()).digests_queued == 1
    [row] = await outbox_rows(sessions)
    assert row.idempotency_key.endswith(":2026-06-19")
    assert row.payload["text"].splitlines() == [
        "早上好！6月19日（周五）的安排（3 项）：",
        "· [已过期] 买票（6月17日（周三））",
        "· 15:00 评审会",
        "· 18:00 截止 交报告",
    ]
    assert (await service.list_digests(user.id))[0].next_run_at == ms(2026, 6, 20, 7, 0)


async def test_empty_day_says_so() -> None:
    assert digest_text(date(2026, 6, 19), [], tz="Asia/Shanghai") == "早上好！6月19日（周五）今天没有待办。"


async def test_one_digest_per_day_whatever_the_number_of_workers(database_url: str, engine: object,
                                                                clock: FrozenClock) -> None:
    engines = [create_engine(database_url) for _ in range(3)]
    try:
        pools = [session_factory(e) for e in engines]
        service = ScheduleService(pools[0], clock)
        user = await service.get_or_create_user("oU")
        await service.subscribe_digest(user.id, local_time="07:00")
        clock.set(datetime(2026, 6, 19, 7, 0, 30, tzinfo=SH))
        reports = await asyncio.gather(*(scheduler(p, clock).tick() for p in pools * 2))
        assert sum(r.digests_queued for r in reports) == 1
        clock.set(datetime(2026, 6, 19, 12, 0, tzinfo=SH))  # later the same day: nothing more
        assert (await scheduler(pools[1], clock).tick()).digests_queued == 0
        assert len(await outbox_rows(pools[0])) == 1
    finally:
        for e in engines:
            await e.dispose()


async def test_orphaned_inbound_messages_are_closed_with_a_notice(
        service: ScheduleService, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    from schedule.clock import now_ms
    from schedule.model import InboundMessageRow

    user = await service.get_or_create_user("oU")
    async with sessions.begin() as session:  # a process crashed while handling this message
        session.add(InboundMessageRow(dedupe_key="msg:1", user_id=user.id, received_at=now_ms(clock),
                                      status="processing"))
    s = scheduler(sessions, clock)
    assert (await s.tick()).inbound_recovered == 0  # still within the reply budget's horizon
    clock.advance(minutes=2)
    assert (await s.tick()).inbound_recovered == 1
    [notice] = await outbox_rows(sessions)
    assert (notice.kind, notice.user_id) == ("notice", user.id)
    async with sessions() as session:
        row = (await session.scalars(select(InboundMessageRow))).one()
    assert row.status == "done"


async def test_expired_reminder_waits_in_the_in_app_queue(
        service: ScheduleService, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    user = await service.get_or_create_user("oU")
    await meeting(service, user.id, ms(2026, 6, 18, 15, 0))
    clock.set(datetime(2026, 6, 19, 3, 0, tzinfo=SH))  # 13 h late: past the catch-up window
    await scheduler(sessions, clock).tick()
    rows = await outbox_rows(sessions)
    assert [(r.kind, r.channel, r.status) for r in rows] == [("notice", "inapp", "pending")]
    assert rows[0].payload["expired"] is True and "会议" in rows[0].payload["text"]
    assert "还有" not in rows[0].payload["text"]  # read a day later: no countdown to an hour long gone


async def test_enqueue_many_skips_keys_already_queued_and_keeps_the_queued_row(
        service: ScheduleService, sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    from schedule import outbox

    user_id = (await service.get_or_create_user("oBulk")).id
    first = {"user_id": user_id, "kind": "reminder", "idempotency_key": "reminder:1:100", "payload": {"text": "原来"}}
    async with sessions.begin() as session:
        await outbox.enqueue_many(session, [first], now_ms=100)
    async with sessions.begin() as session:  # a replayed firing: the same key again, and one new key
        await outbox.enqueue_many(session, [
            {**first, "payload": {"text": "重放"}},
            {**first, "idempotency_key": "reminder:2:100", "payload": {"text": "新的"}}], now_ms=200)
    rows = await outbox_rows(sessions)
    assert [(r.idempotency_key, r.payload["text"], r.created_at) for r in rows] == [
        ("reminder:1:100", "原来", 100), ("reminder:2:100", "新的", 200)]
