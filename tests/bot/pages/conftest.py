"""The real app on a fresh database (both backends), a user with a week of items, and an HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from page_world import BASE, World, seed

from bot.app import create_app
from bot.settings import load_settings
from schedule.service import ScheduleService
from schedule.testing import FrozenClock


@pytest.fixture
async def app(database_url: str, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    settings = load_settings(DATABASE_URL=database_url, PUBLIC_BASE_URL=BASE, H5_WECHAT_MP_ENABLED=False)
    application = create_app(settings, clock=clock, run_worker=False)
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def world(app: FastAPI, clock: FrozenClock) -> AsyncIterator[World]:
    service: ScheduleService = app.state.service
    user, items = await seed(service)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        yield World(app=app, client=client, service=service, links=app.state.page_links, clock=clock, user=user,
                    items=items)
