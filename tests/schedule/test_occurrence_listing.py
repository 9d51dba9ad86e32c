"""One expansion for every listing: a series at each occurrence in a range, a done day listed as
done, a cancelled day left out, each occurrence with its own reminders; closing and reopening one occurrence
leaves the series and its next reminder alone. On SQLite and MariaDB; the clock is Thursday 2026-06-18 10:00."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule.clock import from_ms, to_ms
from schedule.domain import NewItem, NewReminder, Recurrence
from schedule.recurrence import is_cn_workday
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
TZ = "Asia/Shanghai"


def ms(month: int, day: int, hour: int = 0, minute: int = 0, year: int = 2026) -> int:
    return to_ms(datetime(year, month, day, hour, minute, tzinfo=SH))


def day_of(at: int | None) -> date:
    assert at is not None
    return from_ms(at).astimezone(SH).date()


@pytest.fixture
def service(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> ScheduleService:
    return ScheduleService(sessions, clock)


def pills() -> NewItem:  # every day 22:00 from today, reminded at the time
    return NewItem(kind="task", title="吃药", timezone=TZ, due_at=ms(6, 18, 22),
                   recurrence=Recurrence(rrule="FREQ=DAILY"), reminders=(NewReminder(remind_at=ms(6, 18, 22)),))


def weekly() -> NewItem:  # Mondays 09:30 from 6/22, reminded 15 minutes ahead
    return NewItem(kind="event", title="周会", timezone=TZ, start_at=ms(6, 22, 9, 30), end_at=ms(6, 22, 10, 30),
                   recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"),
                   reminders=(NewReminder(remind_at=ms(6, 22, 9, 15), offset_minutes=15),))


def workdays() -> NewItem:  # 每个工作日 08:30 from Monday 9/28, across 国庆 2026 and its 调休 Saturday 10/10
    return NewItem(kind="task", title="打卡", timezone=TZ, due_at=ms(9, 28, 8, 30),
                   recurrence=Recurrence(rrule="FREQ=DAILY", workdays="cn"),
                   reminders=(NewReminder(remind_at=ms(9, 28, 8, 30)),))


async def test_a_daily_series_is_every_day_of_the_week_each_with_its_own_reminder(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    await service.create_item(user.id, pills())
    week = await service.list_items(user.id, start_ms=ms(6, 18), end_ms=ms(6, 25), expand=True)
    assert [day_of(i.due_at) for i in week] == [date(2026, 6, 18) + timedelta(days=n) for n in range(7)]
    assert all(len(i.reminders) == 1 and i.reminders[0].remind_at == i.due_at for i in week)
    # the later ones are planned (no rows yet): each carries the id of the stored reminder it will be made from
    first = week[0].reminders[0]
    assert first.id > 0 and not first.planned
    assert all(i.reminders[0].id == first.id and i.reminders[0].planned for i in week[1:])
    plain = await service.list_items(user.id, start_ms=ms(6, 18), end_ms=ms(6, 25))
    assert len(plain) == 1  # without expand: the series once, at its first occurrence in the range


async def test_workdays_follow_the_official_calendar(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    await service.create_item(user.id, workdays())
    listed = await service.list_items(user.id, start_ms=ms(9, 28), end_ms=ms(10, 18), expand=True)
    days = [day_of(i.due_at) for i in listed]
    expected = [date(2026, 9, 28) + timedelta(days=n) for n in range(20)]
    assert days == [d for d in expected if is_cn_workday(d)]
    assert date(2026, 10, 1) not in days and date(2026, 10, 10) in days  # 国庆 off, 调休 Saturday on


@pytest.mark.parametrize("make", [pills, weekly, workdays], ids=["daily", "weekly", "workdays"])
async def test_done_and_cancelled_occurrences_leave_the_series_and_the_next_reminder(
        service: ScheduleService, make) -> None:  # type: ignore[no-untyped-def]
    user = await service.get_or_create_user("u")
    series = await service.create_item(user.id, make())
    start = series.anchor_at
    assert start is not None
    span = (start, start + 40 * 86_400_000)
    first, second, third = (await service.list_items(user.id, start_ms=span[0], end_ms=span[1], expand=True))[:3]
    await service.complete_occurrence(user.id, series.id, day_of(first.anchor_at))
    await service.skip_occurrence(user.id, series.id, day_of(second.anchor_at))
    stored = await service.get_item(user.id, series.id)
    assert stored.status == "active"
    pending = [r.remind_at for r in stored.reminders if r.status == "pending"]
    lead = first.anchor_at - first.reminders[0].remind_at  # type: ignore[operator]
    assert pending == [third.anchor_at - lead]  # type: ignore[operator]  # the next open day keeps its reminder
    again = await service.list_items(user.id, start_ms=span[0], end_ms=span[1], expand=True)
    assert [i.anchor_at for i in again[:2]] == [first.anchor_at, third.anchor_at]  # the cancelled day is gone
    assert [i.status for i in again[:2]] == ["completed", "active"]  # the done day is listed, as done
    assert {r.status for r in again[0].reminders} == {"cancelled"} and again[1].reminders[0].remind_at == pending[0]


async def test_reopening_a_done_occurrence_rearms_its_reminder(service: ScheduleService, clock: FrozenClock) -> None:
    user = await service.get_or_create_user("u")
    series = await service.create_item(user.id, pills())
    await service.complete_occurrence(user.id, series.id, date(2026, 6, 18))
    reopened = await service.reopen_occurrence(user.id, series.id, date(2026, 6, 18))
    assert reopened.recurrence is not None and reopened.recurrence.skipped == () and reopened.recurrence.done == ()
    assert sorted(r.remind_at for r in reopened.reminders if r.status == "pending") == [ms(6, 18, 22), ms(6, 19, 22)]
    listed = await service.list_items(user.id, start_ms=ms(6, 18), end_ms=ms(6, 20), expand=True)
    assert [(i.status, [r.remind_at for r in i.reminders]) for i in listed] == [
        ("active", [ms(6, 18, 22)]), ("active", [ms(6, 19, 22)])]


async def test_reopening_a_closed_item_rearms_what_the_close_cancelled(service: ScheduleService,
                                                                       clock: FrozenClock) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, NewItem(kind="task", title="交材料", timezone=TZ, due_at=ms(6, 19, 9),
                                                      reminders=(NewReminder(remind_at=ms(6, 19, 8)),)))
    await service.complete_item(user.id, item.id)
    clock.advance(timedelta(seconds=5))
    back = await service.reopen_item(user.id, item.id)
    assert back.status == "active" and [r.status for r in back.reminders] == ["pending"]


async def test_a_multi_day_event_overlaps_each_of_its_days(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    await service.create_item(user.id, NewItem(kind="event", title="出差", timezone=TZ, all_day=True,
                                               start_at=ms(6, 20), end_at=ms(6, 22)))
    for day in (20, 21):
        listed = await service.list_items(user.id, start_ms=ms(6, day), end_ms=ms(6, day + 1), expand=True)
        assert [i.title for i in listed] == ["出差"]
    assert await service.list_items(user.id, start_ms=ms(6, 22), end_ms=ms(6, 23), expand=True) == []
