"""Page-test world: the real app on a fresh database (both backends), a user with a week of items, a client.

The fixtures live here rather than in a conftest.py (other test folders import their conftest by name);
test modules import `app_fixture` and `world_fixture`, which pytest registers as `app` and `world`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pages.links import PageLinks
from bot.settings import load_settings
from bot.web.app import create_app
from schedule import outbox
from schedule.clock import to_ms
from schedule.domain import Item, NewItem, NewReminder, Recurrence, User
from schedule.model import ReminderRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
BASE = "https://pages.example"


def ms(*args: int) -> int:
    return to_ms(datetime(*args, tzinfo=SH))  # type: ignore[misc]


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@dataclass
class World:
    app: FastAPI
    client: httpx.AsyncClient
    service: ScheduleService
    links: PageLinks
    clock: FrozenClock
    user: User
    items: dict[str, Item]


async def seed(service: ScheduleService, openid: str = "alice") -> tuple[User, dict[str, Item]]:
    user = await service.get_or_create_user(openid)
    tz = "Asia/Shanghai"
    made = {
        "meeting": NewItem(kind="event", title="项目会议", timezone=tz, start_at=ms(2026, 6, 18, 15, 0),
                           end_at=ms(2026, 6, 18, 16, 0),
                           reminders=(NewReminder(remind_at=ms(2026, 6, 18, 14, 0), offset_minutes=60),)),
        "papers": NewItem(kind="task", title="带材料", timezone=tz, due_at=ms(2026, 6, 19, 9, 0),
                          reminders=(NewReminder(remind_at=ms(2026, 6, 19, 9, 0)),)),
        "report": NewItem(kind="task", title="交周报", timezone=tz, due_at=ms(2026, 6, 18, 18, 0)),
        "late": NewItem(kind="task", title="报销单", timezone=tz, due_at=ms(2026, 6, 15, 18, 0)),
        "passport": NewItem(kind="event", title="取护照", timezone=tz, start_at=ms(2026, 6, 20, 10, 0)),
    }
    return user, {key: await service.create_item(user.id, new) for key, new in made.items()}


async def extras(service: ScheduleService, sessions: async_sessionmaker[AsyncSession], user_id: int) -> None:
    """What tends to break a layout: a long unbroken title, a weekly series, an all-day item, in-app notices."""
    tz = "Asia/Shanghai"
    await service.create_item(user_id, NewItem(
        kind="event", title="和供应商确认合同细节" + "https://example.com/a-very-long-unbroken-link-" * 3, timezone=tz,
        start_at=ms(2026, 6, 19, 14, 0), end_at=ms(2026, 6, 19, 15, 30), location="望京SOHO T3 12层"))
    await service.create_item(user_id, NewItem(kind="event", title="周会", timezone=tz, start_at=ms(2026, 6, 22, 9, 30),
                                               recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO")))
    await service.create_item(user_id, NewItem(kind="event", title="端午假期", timezone=tz, all_day=True,
                                               start_at=ms(2026, 6, 19)))
    standup = await service.create_item(user_id, NewItem(
        kind="event", title="晨会", timezone=tz, start_at=ms(2026, 6, 18, 9, 0),
        reminders=(NewReminder(remind_at=ms(2026, 6, 18, 8, 45), offset_minutes=15),)))
    async with sessions.begin() as session:
        await session.execute(update(ReminderRow).where(ReminderRow.item_id == standup.id).values(
            status="sent", sent_at=ms(2026, 6, 18, 8, 45)))
        await outbox.enqueue(session, user_id=user_id, idempotency_key="t:expired", kind="notice", channel="inapp",
                             now_ms=ms(2026, 6, 18, 9, 0),
                             payload={"text": "⏰ 提醒：6月17日（周三） 20:00 给妈妈打电话", "expired": True})
        await outbox.enqueue(session, user_id=user_id, idempotency_key="t:undelivered", kind="reminder",
                             channel="inapp", now_ms=ms(2026, 6, 18, 9, 30),
                             payload={"text": "⏰ 提醒：6月18日（周四） 09:30 交水费"})


@pytest.fixture(name="app")
async def app_fixture(database_url: str, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    settings = load_settings(DATABASE_URL=database_url, PUBLIC_BASE_URL=BASE, H5_WECHAT_MP_ENABLED=False)
    application = create_app(settings, clock=clock, run_worker=False)
    async with LifespanManager(application):
        yield application


@pytest.fixture(name="world")
async def world_fixture(app: FastAPI, clock: FrozenClock) -> AsyncIterator[World]:
    service: ScheduleService = app.state.service
    user, items = await seed(service)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        yield World(app=app, client=client, service=service, links=app.state.page_links, clock=clock, user=user,
                    items=items)
