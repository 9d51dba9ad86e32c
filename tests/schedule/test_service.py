"""ScheduleService contract, run on SQLite and MariaDB (fixtures give each test a fresh database)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule.clock import to_ms
from schedule.db import create_engine, session_factory
from schedule.domain import ItemChanges, NewItem, NewReminder, Recurrence
from schedule.errors import InvalidChange, NotFound
from schedule.model import ReminderRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
NY = ZoneInfo("America/New_York")


def ms(*args: int, tz: ZoneInfo = SH) -> int:
    return to_ms(datetime(*args, tzinfo=tz))  # type: ignore[misc]


@pytest.fixture
def service(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> ScheduleService:
    return ScheduleService(sessions, clock)


def event(title: str, start: int, *, end: int | None = None, tz: str = "Asia/Shanghai",
          reminders: tuple[NewReminder, ...] = ()) -> NewItem:
    return NewItem(kind="event", title=title, timezone=tz, start_at=start, end_at=end, reminders=reminders)


async def test_user_get_or_create_is_stable(service: ScheduleService) -> None:
    first = await service.get_or_create_user("openid-a")
    again = await service.get_or_create_user("openid-a")
    other = await service.get_or_create_user("openid-b", timezone="Europe/Berlin")
    assert first.id == again.id != other.id
    assert first.timezone == "Asia/Shanghai" and other.timezone == "Europe/Berlin"


async def test_concurrent_user_creation_yields_one_user(service: ScheduleService) -> None:
    users = await asyncio.gather(*(service.get_or_create_user("same-openid") for _ in range(5)))
    assert len({u.id for u in users}) == 1


async def test_create_get_update_complete(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 14, 0), offset_minutes=60),)))
    assert item.kind == "event" and item.status == "active" and len(item.reminders) == 1
    fetched = await service.get_item(user.id, item.id)
    assert fetched.title == "会议" and fetched.reminders[0].remind_at == ms(2026, 6, 18, 14, 0)
    renamed = await service.update_item(user.id, item.id, ItemChanges(title="项目评审会"))
    assert renamed.title == "项目评审会"
    done = await service.complete_item(user.id, item.id)
    assert done.status == "completed"
    assert [r.status for r in done.reminders] == ["cancelled"]


async def test_cancel_cancels_pending_reminders(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, event("体检", ms(2026, 6, 20, 9, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 20, 8, 0)), NewReminder(remind_at=ms(2026, 6, 19, 20, 0)))))
    cancelled = await service.cancel_item(user.id, item.id)
    assert cancelled.status == "cancelled"
    assert {r.status for r in cancelled.reminders} == {"cancelled"}


async def test_soft_delete_hides_item_but_keeps_row(service: ScheduleService,
                                                   sessions: async_sessionmaker[AsyncSession]) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, event("理发", ms(2026, 6, 19, 18, 0)))
    await service.delete_item(user.id, item.id)
    with pytest.raises(NotFound):
        await service.get_item(user.id, item.id)
    assert await service.list_items(user.id, start_ms=ms(2026, 6, 18, 0, 0), end_ms=ms(2026, 6, 25, 0, 0)) == []
    from schedule.model import ScheduleItemRow

    async with sessions() as session:
        row = await session.get(ScheduleItemRow, item.id)
    assert row is not None and row.status == "deleted" and row.deleted_at is not None


@pytest.mark.parametrize("tz", [SH, NY])
async def test_range_across_midnight_in_user_timezone(service: ScheduleService, tz: ZoneInfo) -> None:
    user = await service.get_or_create_user("u", timezone=tz.key)
    late = await service.create_item(user.id, event("夜班", ms(2026, 6, 18, 23, 30, tz=tz), tz=tz.key))
    early = await service.create_item(user.id, event("早会", ms(2026, 6, 19, 0, 15, tz=tz), tz=tz.key))
    spanning = await service.create_item(user.id, event("跨夜", ms(2026, 6, 18, 22, 0, tz=tz),
                                                        end=ms(2026, 6, 19, 2, 0, tz=tz), tz=tz.key))
    task = await service.create_item(user.id, NewItem(kind="task", title="交材料", timezone=tz.key,
                                                      due_at=ms(2026, 6, 19, 0, 0, tz=tz)))
    day18 = await service.list_items(user.id, start_ms=ms(2026, 6, 18, 0, 0, tz=tz), end_ms=ms(2026, 6, 19, 0, 0, tz=tz))
    day19 = await service.list_items(user.id, start_ms=ms(2026, 6, 19, 0, 0, tz=tz), end_ms=ms(2026, 6, 20, 0, 0, tz=tz))
    assert [i.id for i in day18] == [spanning.id, late.id]
    assert [i.id for i in day19] == [spanning.id, task.id, early.id]


async def test_list_filters_kind_and_orders_by_time(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    b = await service.create_item(user.id, event("B", ms(2026, 6, 18, 16, 0)))
    a = await service.create_item(user.id, event("A", ms(2026, 6, 18, 9, 0)))
    t = await service.create_item(user.id, NewItem(kind="task", title="T", timezone="Asia/Shanghai",
                                                   due_at=ms(2026, 6, 18, 12, 0)))
    window = {"start_ms": ms(2026, 6, 18, 0, 0), "end_ms": ms(2026, 6, 19, 0, 0)}
    assert [i.id for i in await service.list_items(user.id, **window)] == [a.id, t.id, b.id]
    assert [i.id for i in await service.list_items(user.id, kind="task", **window)] == [t.id]


async def test_a_listing_reads_only_what_may_be_in_range_and_finds_the_same(service: ScheduleService) -> None:
    """The active-items listing filters in SQL first (a superset of the range); the general path, which reads
    every row of the statuses and decides in Python, must find exactly the same items with the same reminders."""
    user = await service.get_or_create_user("many")
    day = 24 * 3_600_000
    base = ms(2026, 6, 1, 9, 0)
    for n in range(40):  # one-offs over 40 days, some spanning days, some with an end before their start
        start = base + n * day
        end = start + (n % 3) * day if n % 3 else (start - 3_600_000 if n % 5 == 0 else None)
        reminders = (NewReminder(remind_at=start - 3_600_000),) if n % 2 else ()
        await service.create_item(user.id, NewItem(kind="event", title=f"e{n}", timezone="Asia/Shanghai",
                                                   start_at=start, end_at=end if end is None or end >= start
                                                   else None, reminders=reminders))
        await service.create_item(user.id, NewItem(kind="task", title=f"t{n}", timezone="Asia/Shanghai",
                                                   due_at=start + 5 * 3_600_000 if n % 4 else None))
    for rule in (Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"), Recurrence(workdays="cn")):
        await service.create_item(user.id, NewItem(kind="event", title="repeat", timezone="Asia/Shanghai",
                                                   start_at=base - 30 * day, recurrence=rule))
    windows = [(None, None), (base, base + day), (base + 10 * day + 3_600_000, base + 12 * day),
               (base - 60 * day, base - 59 * day), (base + 2 * day, base + 40 * day)]
    for start_ms, end_ms in windows:
        for undated in (False, True):
            fast = await service.list_items(user.id, start_ms=start_ms, end_ms=end_ms, include_undated_tasks=undated)
            general = await service.list_items(user.id, start_ms=start_ms, end_ms=end_ms, statuses=("active", "active"),
                                               include_undated_tasks=undated)
            assert fast == general
            for kind in ("event", "task"):
                fast = await service.list_items(user.id, start_ms=start_ms, end_ms=end_ms, kind=kind,
                                                include_undated_tasks=undated)
                general = await service.list_items(user.id, start_ms=start_ms, end_ms=end_ms, kind=kind,
                                                   statuses=("active", "active"), include_undated_tasks=undated)
                assert fast == general
    first_day = await service.list_items(user.id, start_ms=base - 9 * 3_600_000, end_ms=base + 15 * 3_600_000)
    assert [i.title for i in first_day] == ["e0", "repeat", "repeat"]  # 06-01: a Monday and a workday, both series


async def test_all_day_event_covers_its_local_date(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, NewItem(kind="event", title="出差", timezone="Asia/Shanghai",
                                                      start_at=ms(2026, 6, 20, 0, 0), all_day=True))
    assert item.local_date == "2026-06-20" and item.end_at == ms(2026, 6, 21, 0, 0)
    found = await service.list_items(user.id, start_ms=ms(2026, 6, 20, 12, 0), end_ms=ms(2026, 6, 20, 13, 0))
    assert [i.id for i in found] == [item.id]


async def test_recurring_item_listed_at_its_occurrence(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    weekly = await service.create_item(user.id, NewItem(
        kind="event", title="周会", timezone="Asia/Shanghai", start_at=ms(2026, 6, 1, 10, 0),
        recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO")))
    found = await service.list_items(user.id, start_ms=ms(2026, 6, 22, 0, 0), end_ms=ms(2026, 6, 29, 0, 0))
    assert [(i.id, i.start_at) for i in found] == [(weekly.id, ms(2026, 6, 22, 10, 0))]
    assert found[0].recurrence == Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO")


async def test_moving_an_event_moves_its_reminders(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0), end=ms(2026, 6, 18, 16, 0),
                                                    reminders=(NewReminder(remind_at=ms(2026, 6, 18, 14, 0),
                                                                           offset_minutes=60),
                                                               NewReminder(remind_at=ms(2026, 6, 18, 9, 0)))))
    moved = await service.update_item(user.id, item.id, ItemChanges(start_at=ms(2026, 6, 19, 16, 0)))
    assert moved.start_at == ms(2026, 6, 19, 16, 0) and moved.end_at == ms(2026, 6, 19, 17, 0)
    # offset reminders keep their offset; absolute ones shift by the same amount as the event
    assert sorted(r.remind_at for r in moved.reminders) == [ms(2026, 6, 19, 10, 0), ms(2026, 6, 19, 15, 0)]
    assert {r.offset_minutes for r in moved.reminders} == {60, None}


async def test_end_before_start_is_rejected(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    with pytest.raises(InvalidChange):
        await service.create_item(user.id, event("x", ms(2026, 6, 18, 15, 0), end=ms(2026, 6, 18, 14, 0)))


async def test_reminder_creation_is_idempotent(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0)))
    one = await service.create_reminder(user.id, item.id, NewReminder(remind_at=ms(2026, 6, 18, 14, 0)))
    two = await service.create_reminder(user.id, item.id, NewReminder(remind_at=ms(2026, 6, 18, 14, 0)))
    assert one.id == two.id
    cancelled = await service.cancel_reminder(user.id, one.id)
    assert cancelled.status == "cancelled"
    again = await service.create_reminder(user.id, item.id, NewReminder(remind_at=ms(2026, 6, 18, 14, 0)))
    assert again.id == one.id and again.status == "pending"


async def test_reminder_idempotent_under_two_concurrent_sessions(database_url: str, engine: object,
                                                                 clock: FrozenClock) -> None:
    # Two independent engines: two connection pools, as two processes would have.
    engines = [create_engine(database_url), create_engine(database_url)]
    try:
        services = [ScheduleService(session_factory(e), clock) for e in engines]
        user = await services[0].get_or_create_user("u")
        item = await services[0].create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0)))
        new = NewReminder(remind_at=ms(2026, 6, 18, 14, 0), offset_minutes=60)
        results = await asyncio.gather(*(s.create_reminder(user.id, item.id, new) for s in services * 3))
        assert len({r.id for r in results}) == 1
        async with session_factory(engines[0])() as session:
            count = await session.scalar(select(func.count()).select_from(ReminderRow))
        assert count == 1
    finally:
        for e in engines:
            await e.dispose()


async def test_ownership_other_user_sees_not_found(service: ScheduleService) -> None:
    alice = await service.get_or_create_user("alice")
    bob = await service.get_or_create_user("bob")
    item = await service.create_item(alice.id, event("alice 的会", ms(2026, 6, 18, 15, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 14, 0)),)))
    reminder_id = item.reminders[0].id
    for attempt in (
        service.get_item(bob.id, item.id),
        service.update_item(bob.id, item.id, ItemChanges(title="hacked")),
        service.complete_item(bob.id, item.id),
        service.cancel_item(bob.id, item.id),
        service.delete_item(bob.id, item.id),
        service.create_reminder(bob.id, item.id, NewReminder(remind_at=ms(2026, 6, 18, 13, 0))),
        service.cancel_reminder(bob.id, reminder_id),
    ):
        with pytest.raises(NotFound):
            await attempt
    assert await service.list_items(bob.id) == []
    untouched = await service.get_item(alice.id, item.id)
    assert untouched.title == "alice 的会" and untouched.status == "active"
    assert untouched.reminders[0].status == "pending"


async def test_api_tokens_store_only_a_hash(service: ScheduleService, sessions: async_sessionmaker[AsyncSession]) -> None:
    user, token, replaced = await service.issue_api_token("api-user")
    assert (await service.user_for_token(token)) == user and not replaced
    assert await service.user_for_token(token + "x") is None
    _, fresh, replaced = await service.issue_api_token("api-user")
    assert replaced and await service.user_for_token(token) is None  # the same label: the old one stops
    assert (await service.user_for_token(fresh)) == user
    async with sessions() as session:
        stored = (await session.execute(text("SELECT token_hash FROM api_tokens"))).scalars().all()
    assert token not in stored and fresh not in stored and len(stored) == 1


async def test_named_api_tokens_live_side_by_side(service: ScheduleService) -> None:
    user, laptop, _ = await service.issue_api_token("api-user", label="laptop")
    _, phone, _ = await service.issue_api_token("api-user", label="phone")
    assert await service.user_for_token(laptop) == user and await service.user_for_token(phone) == user
    assert [t.label for t in await service.api_tokens("api-user")] == ["laptop", "phone"]
    assert await service.revoke_api_token("api-user", "laptop") is True
    assert await service.revoke_api_token("api-user", "laptop") is False
    assert await service.user_for_token(laptop) is None and await service.user_for_token(phone) == user
    assert [t.label for t in await service.api_tokens("api-user")] == ["phone"]
    with pytest.raises(InvalidChange):
        await service.issue_api_token("api-user", label="bad label!")
    await service.forget_user(user.id)
    assert await service.user_for_token(phone) is None


async def test_digest_subscription_next_run_in_user_timezone(service: ScheduleService, clock: FrozenClock) -> None:
    user = await service.get_or_create_user("u")  # now = 2026-06-18 10:00 Shanghai
    sub = await service.subscribe_digest(user.id, local_time="07:00")
    assert sub.next_run_at == ms(2026, 6, 19, 7, 0) and sub.status == "active"
    retimed = await service.subscribe_digest(user.id, local_time="21:30")
    assert retimed.id == sub.id and retimed.next_run_at == ms(2026, 6, 18, 21, 30)
    assert await service.unsubscribe_digest(user.id) is True
    assert await service.unsubscribe_digest(user.id) is False
    assert await service.list_digests(user.id) == []
    again = await service.subscribe_digest(user.id, local_time="07:00", workdays="cn")  # the same row, active again
    assert (again.id, again.status, again.workdays) == (sub.id, "active", "cn")
    assert await service.list_digests(user.id) == [again]
    with pytest.raises(NotFound):
        await service.subscribe_digest(user.id + 1000, local_time="07:00")


async def test_a_digest_subscribed_inside_a_unit_of_work_is_committed_with_it(service: ScheduleService) -> None:
    user = await service.get_or_create_user("in-unit")

    async def fails_after_subscribing() -> None:
        async with service.unit_of_work() as unit:
            in_unit = service.within(unit)  # every call of it runs in the unit
            await in_unit.subscribe_digest(user.id, local_time="07:00")
            raise RuntimeError("the message failed after subscribing")

    with pytest.raises(RuntimeError):
        await fails_after_subscribing()
    assert await service.list_digests(user.id) == []
    async with service.unit_of_work() as unit:
        in_unit = service.within(unit)  # every call of it runs in the unit
        sub = await in_unit.subscribe_digest(user.id, local_time="08:00")
    assert await service.list_digests(user.id) == [sub]


async def test_forget_user_deletes_data_and_stops_pushes(service: ScheduleService) -> None:
    user = await service.get_or_create_user("leaver")
    await service.create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 14, 0)),)))
    await service.subscribe_digest(user.id, local_time="07:00")
    await service.forget_user(user.id)
    assert await service.list_items(user.id, include_undated_tasks=True) == []
    assert await service.list_digests(user.id) == []
    assert (await service.get_user(user.id)).subscribed is False


async def test_clock_is_the_only_time_source(service: ScheduleService, clock: FrozenClock) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, event("x", ms(2026, 6, 18, 15, 0)))
    clock.advance(timedelta(hours=3))
    updated = await service.update_item(user.id, item.id, ItemChanges(title="y"))
    assert updated.created_at == to_ms(datetime(2026, 6, 18, 10, 0, tzinfo=SH))
    assert updated.updated_at == to_ms(datetime(2026, 6, 18, 13, 0, tzinfo=SH))


async def test_an_item_and_its_one_reminder_go_in_one_trip(service: ScheduleService, trips: list[str]) -> None:
    """The reminder INSERT rides with the item INSERT (its item_id is the id that INSERT made): one round
    trip, and what create_item returns is what the database holds."""
    user = await service.get_or_create_user("u")
    other = await service.create_item(user.id, event("先建的", ms(2026, 6, 18, 9, 0)))  # ids are not 1 by luck
    async with service.unit_of_work() as unit:
        in_unit = service.within(unit)  # every call of it runs in the unit
        service.user_read(unit, user.id, user.timezone)  # as a chat turn does after reading the user: no existence check
        trips.clear()
        item = await in_unit.create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0), reminders=(
            NewReminder(remind_at=ms(2026, 6, 18, 14, 0), offset_minutes=60),)))
        assert len(trips) == 1
    stored = await service.get_item(user.id, item.id)
    assert item.id != other.id and stored.reminders == item.reminders
    assert [(r.item_id, r.remind_at) for r in stored.reminders] == [(item.id, ms(2026, 6, 18, 14, 0))]


async def test_items_with_one_reminder_each_created_at_once_keep_their_own(service: ScheduleService) -> None:
    """LAST_INSERT_ID() / last_insert_rowid() are per connection: concurrent creates never swap reminders."""
    users = [await service.get_or_create_user(f"u{i}") for i in range(8)]
    made = await asyncio.gather(*(service.create_item(u.id, event(f"会{i}", ms(2026, 6, 18, 10 + i, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 9 + i, 30), offset_minutes=30),))) for i, u in enumerate(users)))
    for i, (u, item) in enumerate(zip(users, made, strict=True)):
        stored = await service.get_item(u.id, item.id)
        assert stored.title == f"会{i}"
        assert [(r.item_id, r.remind_at) for r in stored.reminders] == [(item.id, ms(2026, 6, 18, 9 + i, 30))]


async def test_an_item_with_several_reminders_links_each_to_it(service: ScheduleService) -> None:
    user = await service.get_or_create_user("u")
    item = await service.create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 14, 0), offset_minutes=60),
        NewReminder(remind_at=ms(2026, 6, 18, 14, 45), offset_minutes=15))))
    stored = await service.get_item(user.id, item.id)
    assert sorted(r.remind_at for r in stored.reminders) == [ms(2026, 6, 18, 14, 0), ms(2026, 6, 18, 14, 45)]
    assert {r.item_id for r in stored.reminders} == {item.id} and stored.reminders == item.reminders


async def test_a_chat_message_reads_and_closes_items_in_one_trip_each(service: ScheduleService,
                                                                     trips: list[str]) -> None:
    """Listing (items and their reminders), reading one item and closing one each go to the database once;
    a digest subscribed after the turn read its user does not read the user again."""
    user = await service.get_or_create_user("u")
    first = await service.create_item(user.id, event("会议", ms(2026, 6, 18, 15, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 14, 0)), NewReminder(remind_at=ms(2026, 6, 18, 14, 45)))))
    second = await service.create_item(user.id, event("评审", ms(2026, 6, 18, 16, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 15, 30)),)))
    async with service.unit_of_work() as unit:
        in_unit = service.within(unit)  # every call of it runs in the unit
        service.user_read(unit, user.id, user.timezone)
        trips.clear()
        listed = await in_unit.list_items(user.id, start_ms=ms(2026, 6, 18, 0, 0), end_ms=ms(2026, 6, 19, 0, 0))
        assert len(trips) == 1
        assert [(i.title, len(i.reminders)) for i in listed] == [("会议", 2), ("评审", 1)]
        trips.clear()
        got = await in_unit.get_item(user.id, second.id)
        assert len(trips) == 1 and got.reminders == second.reminders
        trips.clear()
        closed = await in_unit.complete_item(user.id, first.id)
        assert len(trips) == 1
        assert closed.status == "completed" and [r.status for r in closed.reminders] == ["cancelled", "cancelled"]
        trips.clear()
        digest = await in_unit.subscribe_digest(user.id, local_time="07:00")
        assert len(trips) == 1 and digest.timezone == "Asia/Shanghai"
    stored = await service.get_item(user.id, first.id)
    assert stored == closed  # what the one trip returned is what was committed
    assert (await service.get_item(user.id, second.id)).status == "active"


async def test_closing_another_users_item_in_one_trip_touches_nothing(service: ScheduleService) -> None:
    """The one-trip close sends its updates before it knows whether the item is the user's: the guards in
    the updates themselves must keep the owner's item and its reminders as they were."""
    alice = await service.get_or_create_user("alice")
    bob = await service.get_or_create_user("bob")
    item = await service.create_item(alice.id, event("alice 的会", ms(2026, 6, 18, 15, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 14, 0)),)))
    for close in ("complete_item", "cancel_item", "delete_item"):
        async with service.unit_of_work() as unit:
            in_unit = service.within(unit)  # every call of it runs in the unit
            with pytest.raises(NotFound):
                await getattr(in_unit, close)(bob.id, item.id)
    stored = await service.get_item(alice.id, item.id)
    assert stored.status == "active" and stored.updated_at == item.updated_at
    assert [r.status for r in stored.reminders] == ["pending"]
    await service.delete_item(alice.id, item.id)
    with pytest.raises(NotFound):  # a deleted item cannot be closed again, even by its owner
        await service.complete_item(alice.id, item.id)


async def test_restore_recent_takes_back_the_last_cancel_with_its_future_reminders(
        service: ScheduleService, clock: FrozenClock) -> None:
    user = await service.get_or_create_user("u")
    meeting = await service.create_item(user.id, event("开会", ms(2026, 6, 19, 9, 0), reminders=(
        NewReminder(remind_at=ms(2026, 6, 19, 8, 0)),)))
    bank = await service.create_item(user.id, event("去银行", ms(2026, 6, 18, 10, 30), reminders=(
        NewReminder(remind_at=ms(2026, 6, 18, 10, 1)),)))
    clock.advance(timedelta(minutes=1))
    await service.cancel_item(user.id, meeting.id)
    await service.cancel_item(user.id, bank.id)  # the same instant: one message's cancels
    clock.advance(timedelta(minutes=1))  # 10:02: 去银行's 10:01 reminder is past
    back, series = await service.restore_recent(user.id, since_ms=to_ms(clock.now()) - 600_000)
    assert series == 0
    assert [(i.title, i.status) for i in back] == [("去银行", "active"), ("开会", "active")]
    reminders = {r.item_id: r.status for i in back for r in i.reminders}
    assert reminders == {meeting.id: "pending", bank.id: "cancelled"}  # a reminder whose time passed stays off
    assert await service.restore_recent(user.id, since_ms=to_ms(clock.now()) - 600_000) == ([], 0)  # once


async def test_restore_recent_leaves_older_or_other_changes_alone(service: ScheduleService, clock: FrozenClock) -> None:
    user = await service.get_or_create_user("u")
    first = await service.create_item(user.id, event("开会", ms(2026, 6, 19, 9, 0)))
    await service.complete_item(user.id, first.id)
    clock.advance(timedelta(minutes=11))
    assert await service.restore_recent(user.id, since_ms=to_ms(clock.now()) - 600_000) == ([], 0)  # too old
    await service.create_item(user.id, event("体检", ms(2026, 6, 20, 9, 0)))  # the latest change is a create
    assert await service.restore_recent(user.id, since_ms=to_ms(clock.now()) - 600_000) == ([], 0)
    assert (await service.get_item(user.id, first.id)).status == "completed"
