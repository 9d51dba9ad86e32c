"""A series several times a day is one row with one RFC 5545 rule; a dose is closed by its start, not its day:
the other doses of that day stay open in every listing, the feed's EXDATE / RECURRENCE-ID name that dose
only, and recurring-ical-events expands the feed to exactly the service's occurrences. The dose a "done"
is about is the open one nearest now. On SQLite and MariaDB; the clock is Wednesday 2026-12-02 10:00."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import icalendar
import pytest
import recurring_ical_events
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from render.ics import calendar_feed
from schedule.clock import from_ms, to_ms
from schedule.course import due_dose, ended_rule, last_occurrence, several_a_day, times_of_day
from schedule.domain import Item, NewItem, NewReminder, Recurrence
from schedule.rrule import too_frequent
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
TZ = "Asia/Shanghai"
BP = "FREQ=DAILY;BYHOUR=7,21;BYMINUTE=0,30;BYSETPOS=2,3;UNTIL=20261217T235959"  # 07:30 and 21:00, two weeks


def at(month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=SH)


def ms(month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return to_ms(at(month, day, hour, minute))


@pytest.fixture
def service(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> ScheduleService:
    clock.set(at(12, 2, 10))
    return ScheduleService(sessions, clock)


def course(rule: str = BP) -> NewItem:
    return NewItem(kind="task", title="吃降压药", timezone=TZ, due_at=ms(12, 4, 7, 30),
                   recurrence=Recurrence(rrule=rule), reminders=(NewReminder(remind_at=ms(12, 4, 7, 30),
                                                                             offset_minutes=0),))


def locals_of(items: list[Item]) -> list[tuple[date, time, str]]:
    return [(from_ms(i.due_at or 0).astimezone(SH).date(), from_ms(i.due_at or 0).astimezone(SH).time(), i.status)
            for i in items]


def feed_times(item: Item) -> list[tuple[datetime, str]]:
    cal = icalendar.Calendar.from_ical(calendar_feed([item], uid_domain="t.example"))
    found = recurring_ical_events.of(cal).between(datetime(2026, 12, 1), datetime(2026, 12, 31))
    return sorted((e["DTSTART"].dt.astimezone(SH), str(e["SUMMARY"])) for e in found)


async def test_a_course_twice_a_day_is_both_times_every_day_until_its_end(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, course())
    listed = await service.list_items(user.id, start_ms=ms(12, 1), end_ms=ms(12, 31), expand=True)
    assert len(listed) == 28  # 12/4 … 12/17, twice a day
    assert locals_of(listed)[:3] == [(date(2026, 12, 4), time(7, 30), "active"), (date(2026, 12, 4), time(21), "active"),
                                     (date(2026, 12, 5), time(7, 30), "active")]
    assert locals_of(listed)[-1] == (date(2026, 12, 17), time(21), "active")
    assert several_a_day(item.recurrence) and times_of_day(item) == [time(7, 30), time(21)]
    last = last_occurrence(item)
    assert last is not None and last[0].astimezone(SH) == at(12, 17, 21) and last[1] == 28
    assert [t for t, _ in feed_times(item)] == [from_ms(i.due_at or 0).astimezone(SH) for i in listed]


async def test_one_dose_done_leaves_the_other_dose_of_that_day_open_everywhere(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, course())
    await service.complete_occurrence(user.id, item.id, datetime(2026, 12, 5, 7, 30))
    await service.skip_occurrence(user.id, item.id, at(12, 6, 21))  # an aware start: the same key
    day = await service.list_items(user.id, start_ms=ms(12, 5), end_ms=ms(12, 7), expand=True)
    assert locals_of(day) == [(date(2026, 12, 5), time(7, 30), "completed"), (date(2026, 12, 5), time(21), "active"),
                              (date(2026, 12, 6), time(7, 30), "active")]  # 12/6 21:00 is cancelled: gone
    stored = await service.get_item(user.id, item.id)
    assert stored.recurrence is not None and stored.recurrence.skipped == ("2026-12-05T07:30", "2026-12-06T21:00")
    shown = feed_times(stored)
    assert (at(12, 5, 7, 30), "✓ 吃降压药") in shown and (at(12, 5, 21), "☐ 吃降压药") in shown
    assert at(12, 6, 21) not in [t for t, _ in shown] and (at(12, 6, 7, 30), "☐ 吃降压药") in shown
    listed = await service.list_items(user.id, start_ms=ms(12, 1), end_ms=ms(12, 31), expand=True)
    assert [t for t, _ in shown] == [from_ms(i.due_at or 0).astimezone(SH) for i in listed]


async def test_a_day_key_still_closes_every_dose_of_that_day(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, course())
    await service.skip_occurrence(user.id, item.id, date(2026, 12, 5))
    listed = await service.list_items(user.id, start_ms=ms(12, 5), end_ms=ms(12, 6), expand=True)
    assert listed == []
    stored = await service.get_item(user.id, item.id)
    assert not [t for t, _ in feed_times(stored) if t.date() == date(2026, 12, 5)]


async def test_closing_a_dose_moves_its_reminder_to_the_next_dose(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, course())
    after = await service.complete_occurrence(user.id, item.id, datetime(2026, 12, 4, 7, 30))
    pending = [r.remind_at for r in after.reminders if r.status == "pending"]
    assert pending == [ms(12, 4, 21)]  # that evening's dose, not the next day's


def test_the_dose_due_is_the_open_one_nearest_now() -> None:
    item = Item(id=1, user_id=1, kind="task", title="吃降压药", status="active", timezone=TZ, due_at=ms(12, 4, 7, 30),
                recurrence=Recurrence(rrule=BP))
    assert due_dose(item, at(12, 5, 10)) == datetime(2026, 12, 5, 7, 30)
    assert due_dose(item, at(12, 5, 17)) == datetime(2026, 12, 5, 21)
    done = replace(item, recurrence=Recurrence(rrule=BP, skipped=("2026-12-05T07:30",), done=("2026-12-05T07:30",)))
    assert due_dose(done, at(12, 5, 10)) == datetime(2026, 12, 5, 21)
    assert due_dose(item, at(12, 20, 10)) is None  # the course is over
    assert due_dose(item, at(12, 5, 23), on=date(2026, 12, 6)) == datetime(2026, 12, 6, 7, 30)


def test_an_interval_inside_a_window_and_its_daily_limit() -> None:
    every_90 = "FREQ=MINUTELY;INTERVAL=90;BYHOUR=9,10,12,13,15,16,18,19,21"
    item = Item(id=1, user_id=1, kind="task", title="活动", status="active", timezone=TZ, due_at=ms(12, 2, 10, 30),
                recurrence=Recurrence(rrule=every_90))
    assert times_of_day(item) == [time(9), time(10, 30), time(12), time(13, 30), time(15), time(16, 30), time(18),
                                  time(19, 30), time(21)]
    assert too_frequent(every_90) is None
    assert too_frequent("FREQ=DAILY;BYHOUR=7,8,9,10,11,12;BYMINUTE=1,2,3,4,5,6;BYSETPOS=1,8,15,22,29,36") is None
    assert too_frequent("FREQ=MINUTELY;INTERVAL=10") is not None


def test_a_rule_ended_now_keeps_its_parts_and_drops_its_count() -> None:
    assert ended_rule("FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0;COUNT=10", datetime(2026, 12, 3, 10)) == \
        "FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0;UNTIL=20261203T100000"
    assert ended_rule(BP, datetime(2026, 12, 3, 10)).endswith(";BYSETPOS=2,3;UNTIL=20261203T100000")


def test_a_several_a_day_series_is_told_apart_from_a_daily_one() -> None:
    assert not several_a_day(Recurrence(rrule="FREQ=DAILY"))
    assert not several_a_day(Recurrence(rrule="FREQ=DAILY;BYHOUR=8;BYMINUTE=0"))
    assert several_a_day(Recurrence(rrule="FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0"))
    assert not several_a_day(None)
