"""A bounded cost per request, through the real app on both backends: a page of the API's list is cut before
the series are expanded (and is right far into a century), a request's expansion stops at its budget with the
earliest entries and says so (the API and the page), and the API's recurrence checks: more than 24 a day
refused, RFC 5545's `UNTIL=…Z` accepted, lunar and working-day series that never fire refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from bot.pages.itinerary import MAX_ENTRIES
from bot.settings import load_settings
from bot.web.app import create_app
from schedule.clock import to_ms
from schedule.domain import NewItem, Recurrence
from schedule.errors import InvalidChange
from schedule.occurrence import MAX_PER_REQUEST
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
DAY = 86_400_000
CENTURY = {"from": 946_684_800_000, "to": 4_102_444_799_999}  # 2000-01-01Z to the end of 2099


def ms(*args: int) -> int:
    return to_ms(datetime(*args, tzinfo=SH))  # type: ignore[misc]


@pytest.fixture
async def app(database_url: str, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(load_settings(DATABASE_URL=database_url, SECRET_KEY="Zq8vN3xL0pR7tY2wK5mB9cD4fH6jS1gA-expansion"), clock=clock,
                             run_worker=False)
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://schedbot") as c:
        yield c


async def daily_series(app: FastAPI, name: str, count: int) -> tuple[int, dict[str, str], list[tuple[int, int]]]:
    """`count` daily series from 2026-06-18, one a minute apart: (user id, auth header, (first instant, id))."""
    user, token, _ = await app.state.service.issue_api_token(name)
    made = []
    for i in range(count):
        first = ms(2026, 6, 18, 9) + i * 60_000
        item = await app.state.service.create_item(user.id, NewItem(
            kind="task", title=f"喝水{i}", timezone="Asia/Shanghai", due_at=first,
            recurrence=Recurrence(rrule="FREQ=DAILY")))
        made.append((first, item.id))
    return user.id, {"Authorization": f"Bearer {token}"}, made


def expected(made: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """Every occurrence in [start, end) by arithmetic (Shanghai has no DST), in the API's order."""
    return sorted((first + n * DAY, item_id) for first, item_id in made
                  for n in range(max(0, (start - first + DAY - 1) // DAY), (end - first) // DAY + 1)
                  if start <= first + n * DAY < end)


def entries(answer: httpx.Response) -> list[tuple[int, int]]:
    assert answer.status_code == 200, answer.text
    return [(i["due_at"], i["id"]) for i in answer.json()["items"]]


async def test_a_page_of_the_list_is_cut_before_expansion_and_is_right_deep_into_the_century(
        app: FastAPI, client: httpx.AsyncClient) -> None:
    _, auth, made = await daily_series(app, "page", 3)
    every = expected(made, CENTURY["from"], CENTURY["to"])
    first = await client.get("/api/schedule/items", headers=auth, params={**CENTURY, "limit": 5})
    assert entries(first) == every[:5] and first.json()["next_offset"] == 5
    assert first.json()["truncated"] is False
    deep = await client.get("/api/schedule/items", headers=auth, params={**CENTURY, "limit": 7, "offset": 3000})
    assert entries(deep) == every[3000:3007]


async def test_an_expansion_over_budget_keeps_the_earliest_entries_and_says_so(
        app: FastAPI, client: httpx.AsyncClient) -> None:
    days = 92
    count = MAX_PER_REQUEST // days + 3
    _, auth, made = await daily_series(app, "budget", count)
    start = ms(2026, 6, 18)
    every = expected(made, start, start + days * DAY)
    assert len(every) > MAX_PER_REQUEST
    got: list[tuple[int, int]] = []
    offset: int | None = 0
    truncated = False
    while offset is not None:
        answer = await client.get("/api/schedule/items", headers=auth,
                                  params={"from": start, "to": start + days * DAY, "limit": 1000, "offset": offset})
        got += entries(answer)
        offset, truncated = answer.json()["next_offset"], answer.json()["truncated"]
    assert truncated is True
    assert 0 < len(got) < len(every) and got == every[:len(got)]


async def test_a_page_over_its_entry_cap_lists_the_earliest_and_says_so(app: FastAPI,
                                                                        client: httpx.AsyncClient) -> None:
    days = 92
    user_id, _, made = await daily_series(app, "crowded", MAX_ENTRIES // days + 2)
    start = ms(2026, 6, 18)
    url = await app.state.page_links.itinerary_url(user_id, start_ms=start, end_ms=start + days * DAY,
                                                   tz="Asia/Shanghai")
    parts = urlsplit(url)
    page = await client.get(f"{parts.path}?{parts.query}")
    assert page.status_code == 200
    assert f"只列出了最早的 {MAX_ENTRIES} 项" in page.text
    assert page.text.count('<li class="entry') == MAX_ENTRIES
    last_listed = datetime.fromtimestamp(expected(made, start, start + days * DAY)[MAX_ENTRIES - 1][0] / 1000, SH)
    assert f'id="d-{last_listed.date().isoformat()}"' in page.text


async def test_a_rule_firing_more_than_24_times_a_day_is_refused(app: FastAPI, client: httpx.AsyncClient) -> None:
    _, token, _ = await app.state.service.issue_api_token("minutes")
    auth = {"Authorization": f"Bearer {token}"}
    minutes = "FREQ=DAILY;BYHOUR=" + ",".join(map(str, range(24))) + ";BYMINUTE=" + ",".join(map(str, range(60)))
    body = {"kind": "task", "title": "喝水", "due_at": ms(2026, 6, 18, 9)}
    refused = await client.post("/api/schedule/items", headers=auth, json={**body, "recurrence": {"rrule": minutes}})
    assert refused.status_code == 422 and "1440 times a day" in refused.text
    hourly = "FREQ=DAILY;BYHOUR=" + ",".join(map(str, range(24)))
    assert (await client.post("/api/schedule/items", headers=auth,
                              json={**body, "recurrence": {"rrule": hourly}})).status_code == 201
    user = await app.state.service.get_or_create_user("minutes")
    for rule in (minutes, "FREQ=MINUTELY;INTERVAL=10", "FREQ=HOURLY;BYMINUTE=0,30", "FREQ=SECONDLY"):
        with pytest.raises(InvalidChange, match="times a day"):  # the chat and the agent's path: the service
            await app.state.service.create_item(user.id, NewItem(kind="task", title="喝水", timezone="Asia/Shanghai",
                                                                 due_at=ms(2026, 6, 18, 9),
                                                                 recurrence=Recurrence(rrule=rule)))
    for rule in ("FREQ=HOURLY", "FREQ=MINUTELY;INTERVAL=30;BYHOUR=9,10,11"):  # at most 24 a day
        await app.state.service.create_item(user.id, NewItem(kind="task", title="喝水", timezone="Asia/Shanghai",
                                                             due_at=ms(2026, 6, 18, 9), recurrence=Recurrence(rule)))


async def test_a_utc_until_is_accepted_and_ends_the_series_at_that_instant(app: FastAPI,
                                                                           client: httpx.AsyncClient) -> None:
    _, token, _ = await app.state.service.issue_api_token("until")
    auth = {"Authorization": f"Bearer {token}"}
    created = await client.post("/api/schedule/items", headers=auth, json={
        "kind": "task", "title": "吃药", "due_at": ms(2026, 6, 18, 9),
        "recurrence": {"rrule": "FREQ=DAILY;UNTIL=20260620T020000Z"}})  # 10:00 on 20 June in Shanghai
    assert created.status_code == 201, created.text
    assert created.json()["recurrence"]["rrule"] == "FREQ=DAILY;UNTIL=20260620T100000"
    week = {"from": ms(2026, 6, 18), "to": ms(2026, 6, 25)}
    listed = await client.get("/api/schedule/items", headers=auth, params=week)
    assert [d for d, _ in entries(listed)] == [ms(2026, 6, day, 9) for day in (18, 19, 20)]
    patched = await client.patch(f"/api/schedule/items/{created.json()['id']}", headers=auth,
                                 json={"recurrence": {"rrule": "FREQ=DAILY;UNTIL=20260619T020000Z"}})
    assert patched.status_code == 200, patched.text
    listed = await client.get("/api/schedule/items", headers=auth, params=week)
    assert [d for d, _ in entries(listed)] == [ms(2026, 6, day, 9) for day in (18, 19)]


@pytest.mark.parametrize(("recurrence", "year"), [
    ({"lunar": {"month": 12, "day": 30, "leap": True}}, 2026),
    ({"rrule": "FREQ=WEEKLY;BYDAY=SA,SU", "workdays": "cn"}, 2030),  # no 调休 data: weekends never worked
])
async def test_lunar_and_working_day_series_that_never_fire_are_refused(
        app: FastAPI, client: httpx.AsyncClient, recurrence: dict[str, object], year: int) -> None:
    _, token, _ = await app.state.service.issue_api_token("never")
    auth = {"Authorization": f"Bearer {token}"}
    body = {"kind": "task", "title": "从不", "due_at": ms(year, 6, 18, 9)}
    refused = await client.post("/api/schedule/items", headers=auth, json={**body, "recurrence": recurrence})
    assert refused.status_code == 422 and "no occurrence" in refused.text
    fine = {"lunar": {"month": 8, "day": 15}} if "lunar" in recurrence else {"workdays": "cn"}
    created = await client.post("/api/schedule/items", headers=auth, json={**body, "recurrence": fine})
    assert created.status_code == 201, created.text
    patched = await client.patch(f"/api/schedule/items/{created.json()['id']}", headers=auth,
                                 json={"recurrence": recurrence})
    assert patched.status_code == 422
    listed = await client.get("/api/schedule/items", headers=auth,
                              params={"from": ms(year, 6, 1), "to": ms(year, 6, 1) + 400 * DAY})
    ids = {item_id for _, item_id in entries(listed)}
    assert ids == {created.json()["id"]}  # the series kept its rule that fires
