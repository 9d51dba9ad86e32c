"""The active-item quota holds however the items come: creates at once (each in its own transaction, on
their own connections) never go over it, and reopening a closed item (the page's 撤销, the chat's 撤销) counts
as creating does. Both backends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
import pytest
from asgi_lifespan import LifespanManager
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.settings import load_settings
from bot.web.app import create_app
from schedule.clock import to_ms
from schedule.domain import NewItem, NewReminder
from schedule.errors import QuotaExceeded
from schedule.service import ScheduleService
from schedule.testing import FrozenClock
from schedule.testing import active_items as active

TZ = "Asia/Shanghai"
QUOTA = 5


def task(title: str) -> NewItem:
    return NewItem(kind="task", title=title, timezone=TZ)


async def test_creates_at_once_never_go_over_the_quota(sessions: async_sessionmaker[AsyncSession],
                                                       clock: FrozenClock) -> None:
    service = ScheduleService(sessions, clock, max_active_items=QUOTA)
    user = await service.get_or_create_user("quota")
    due = to_ms(datetime(2026, 6, 19, 1, 0, tzinfo=UTC))
    for burst in range(3):
        outcomes = await asyncio.gather(*(
            service.create_item(user.id, NewItem(kind="task", title=f"t{burst}-{n}", timezone=TZ, due_at=due,
                                                 reminders=(NewReminder(remind_at=due - n * 60_000),)))
            for n in range(12)), return_exceptions=True)
        unexpected = [o for o in outcomes if isinstance(o, BaseException) and not isinstance(o, QuotaExceeded)]
        assert unexpected == []
        assert await active(sessions, user.id) == QUOTA, burst  # never more, and the room was used
        made = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(made) == (QUOTA if burst == 0 else 1)
        await service.complete_item(user.id, made[0].id)  # room for one more in the next burst


async def test_reopening_at_the_quota_is_refused_and_changes_nothing(
        sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    service = ScheduleService(sessions, clock, max_active_items=QUOTA)
    user = await service.get_or_create_user("quota")
    made = [await service.create_item(user.id, task(f"t{n}")) for n in range(QUOTA)]
    await service.cancel_item(user.id, made[0].id)
    await service.create_item(user.id, task("the one that took its place"))
    with pytest.raises(QuotaExceeded, match=f"at most {QUOTA}"):
        await service.reopen_item(user.id, made[0].id)
    assert (await service.get_item(user.id, made[0].id)).status == "cancelled"
    await service.complete_item(user.id, made[1].id)  # room again: the reopen goes through
    assert (await service.reopen_item(user.id, made[0].id)).status == "active"
    assert await active(sessions, user.id) == QUOTA


async def test_undoing_the_last_cancel_over_the_quota_restores_none_of_it(
        sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> None:
    """Two items cancelled at once, two others created in the same millisecond (the latest change is still
    that cancel): bringing both back would make QUOTA + 2."""
    service = ScheduleService(sessions, clock, max_active_items=QUOTA)
    user = await service.get_or_create_user("quota")
    made = [await service.create_item(user.id, task(f"t{n}")) for n in range(QUOTA)]
    since = to_ms(clock.now())
    async with service.unit_of_work() as unit:  # one cancel of two items, as "全部" does
        in_unit = service.within(unit)  # every call of it runs in the unit
        for item in made[:2]:
            await in_unit.cancel_item(user.id, item.id)
    await service.create_item(user.id, task("new 1"))
    await service.create_item(user.id, task("new 2"))
    with pytest.raises(QuotaExceeded):
        await service.restore_recent(user.id, since_ms=since)
    assert [(await service.get_item(user.id, i.id)).status for i in made[:2]] == ["cancelled", "cancelled"]
    await service.complete_item(user.id, made[2].id)
    clock.advance(seconds=1)
    await service.complete_item(user.id, made[3].id)  # the latest change now: its undo has room
    restored, _ = await service.restore_recent(user.id, since_ms=since)
    assert [i.id for i in restored] == [made[3].id]



async def test_the_operator_sets_the_quota_and_the_api_says_when_it_is_reached(database_url: str,
                                                                                 clock: FrozenClock) -> None:
    settings = load_settings(DATABASE_URL=database_url, H5_MAX_ACTIVE_ITEMS=2)
    app = create_app(settings, clock=clock, run_worker=False)
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                       base_url="http://t") as client:
        _user, token, _ = await app.state.service.issue_api_token("o-api")
        auth = {"Authorization": f"Bearer {token}"}
        made = [await client.post("/api/schedule/items", headers=auth, json={"kind": "task", "title": f"t{n}"})
                for n in range(3)]
        assert [r.status_code for r in made] == [201, 201, 422]
        assert made[2].json()["detail"] == "too many active items (at most 2): complete or cancel some first"
