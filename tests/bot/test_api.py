"""REST API over the real app: auth, validation (422, never 500), ownership (404), the item lifecycle."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.settings import load_settings
from bot.web.app import create_app
from schedule.clock import to_ms
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")


def ms(*args: int) -> int:
    return to_ms(datetime(*args, tzinfo=SH))  # type: ignore[misc]


@pytest.fixture
async def app(database_url: str, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(load_settings(DATABASE_URL=database_url), clock=clock)
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://schedbot") as c:
        yield c


async def token_for(app: FastAPI, name: str) -> dict[str, str]:
    _, token, _ = await app.state.service.issue_api_token(name)
    return {"Authorization": f"Bearer {token}"}


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"},
                                     {"Authorization": "Bearer " + "x" * 5000}])
async def test_missing_or_wrong_token_is_401(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    response = await client.get("/api/schedule/items", headers=headers)
    assert response.status_code == 401


async def test_item_lifecycle(app: FastAPI, client: httpx.AsyncClient) -> None:
    auth = await token_for(app, "alice")
    created = await client.post("/api/schedule/items", headers=auth, json={
        "kind": "event", "title": "会议", "start_at": ms(2026, 6, 18, 15, 0), "timezone": "Asia/Shanghai",
        "source_text": "今天下午三点有个会", "reminder": {"offset_minutes": 60}})
    assert created.status_code == 201, created.text
    item = created.json()
    assert item["reminders"][0]["remind_at"] == ms(2026, 6, 18, 14, 0)
    listed = await client.get("/api/schedule/items", headers=auth, params={
        "from": ms(2026, 6, 18, 0, 0), "to": ms(2026, 6, 19, 0, 0), "include_reminders": 1})
    assert [i["id"] for i in listed.json()["items"]] == [item["id"]]
    assert listed.json()["items"][0]["reminders"][0]["offset_minutes"] == 60
    moved = await client.patch(f"/api/schedule/items/{item['id']}", headers=auth,
                               json={"start_at": ms(2026, 6, 18, 16, 0)})
    assert moved.status_code == 200
    assert moved.json()["reminders"][0]["remind_at"] == ms(2026, 6, 18, 15, 0)
    reminder_id = moved.json()["reminders"][0]["id"]
    cancelled_reminder = await client.post(f"/api/schedule/reminders/{reminder_id}/cancel", headers=auth)
    assert cancelled_reminder.json()["status"] == "cancelled"
    done = await client.post(f"/api/schedule/items/{item['id']}/complete", headers=auth)
    assert done.json()["status"] == "completed"
    task = await client.post("/api/schedule/items", headers=auth, json={
        "kind": "task", "title": "带材料", "due_at": ms(2026, 6, 19, 9, 0),
        "reminder": {"remind_at": ms(2026, 6, 19, 9, 0)}})
    cancelled = await client.post(f"/api/schedule/items/{task.json()['id']}/cancel", headers=auth)
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["reminders"][0]["status"] == "cancelled"


async def test_other_users_ids_are_404(app: FastAPI, client: httpx.AsyncClient) -> None:
    alice, bob = await token_for(app, "alice"), await token_for(app, "bob")
    item = (await client.post("/api/schedule/items", headers=alice, json={
        "kind": "event", "title": "私事", "start_at": ms(2026, 6, 18, 15, 0),
        "reminder": {"remind_at": ms(2026, 6, 18, 14, 0)}})).json()
    rid = item["reminders"][0]["id"]
    for method, path, body in [
        ("GET", f"/api/schedule/items/{item['id']}", None),
        ("PATCH", f"/api/schedule/items/{item['id']}", {"title": "改掉"}),
        ("POST", f"/api/schedule/items/{item['id']}/complete", None),
        ("POST", f"/api/schedule/items/{item['id']}/cancel", None),
        ("DELETE", f"/api/schedule/items/{item['id']}", None),
        ("POST", f"/api/schedule/reminders/{rid}/cancel", None),
        ("GET", "/api/schedule/items/999999", None),
    ]:
        response = await client.request(method, path, headers=bob, json=body)
        assert response.status_code == 404, (method, path, response.text)
    assert (await client.get("/api/schedule/items", headers=bob)).json()["items"] == []
    mine = await client.get(f"/api/schedule/items/{item['id']}", headers=alice)
    assert mine.json()["title"] == "私事" and mine.json()["status"] == "active"


BAD_BODIES = [
    ("not json", b"{kind: event"),
    ("wrong type", {"kind": "event", "title": "x", "start_at": "tomorrow"}),
    ("unknown kind", {"kind": "meeting", "title": "x", "start_at": 1}),
    ("huge title", {"kind": "task", "title": "长" * 10_000}),
    ("empty title", {"kind": "task", "title": "   "}),
    ("negative timestamp", {"kind": "event", "title": "x", "start_at": -5}),
    ("far future", {"kind": "event", "title": "x", "start_at": 10**15}),
    ("enormous int", {"kind": "event", "title": "x", "start_at": 10**40}),
    ("float instant", {"kind": "event", "title": "x", "start_at": 1.5}),
    ("event without start", {"kind": "event", "title": "x"}),
    ("end before start", {"kind": "event", "title": "x", "start_at": 2_000_000_000_000, "end_at": 1_000_000_000_000}),
    ("bad timezone", {"kind": "task", "title": "x", "timezone": "Mars/Olympus"}),
    ("path timezone", {"kind": "task", "title": "x", "timezone": "../../etc/passwd"}),
    ("extra field", {"kind": "task", "title": "x", "owner": 1}),
    ("reminder without time", {"kind": "task", "title": "x", "reminder": {}}),
    ("array body", [1, 2, 3]),
    ("null", None),
]


@pytest.mark.parametrize(("name", "body"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
async def test_bad_create_bodies_are_422(app: FastAPI, client: httpx.AsyncClient, name: str, body: object) -> None:
    auth = await token_for(app, "alice")
    if isinstance(body, bytes):
        response = await client.post("/api/schedule/items", headers={**auth, "content-type": "application/json"},
                                     content=body)
    else:
        response = await client.post("/api/schedule/items", headers=auth, json=body)
    assert response.status_code == 422, (name, response.status_code, response.text)
    assert "detail" in response.json()


@pytest.mark.parametrize("query", ["from=-1", "to=99999999999999999999", "from=abc", "from=200&to=100", "kind=x"])
async def test_bad_list_queries_are_422(app: FastAPI, client: httpx.AsyncClient, query: str) -> None:
    response = await client.get(f"/api/schedule/items?{query}", headers=await token_for(app, "alice"))
    assert response.status_code == 422


@pytest.mark.parametrize("item_id", ["0", "-1", "abc", "99999999999999999999999"])
async def test_bad_ids_are_422(app: FastAPI, client: httpx.AsyncClient, item_id: str) -> None:
    response = await client.post(f"/api/schedule/items/{item_id}/complete", headers=await token_for(app, "alice"))
    assert response.status_code == 422


async def test_oversized_body_is_413(app: FastAPI, client: httpx.AsyncClient) -> None:
    response = await client.post("/api/schedule/items", headers=await token_for(app, "alice"),
                                 content=b"{" + b" " * 70_000 + b"}")
    assert response.status_code == 413


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["kind", "title", "start_at", "end_at", "due_at", "all_day", "timezone", "reminder",
                         "remind_at", "offset_minutes", "channel", "source_text"]) | st.text(max_size=5),
        children, max_size=8),
    max_leaves=20))
async def test_arbitrary_json_never_500(app: FastAPI, client: httpx.AsyncClient, payload: object) -> None:
    auth = await token_for(app, "fuzz")
    response = await client.post("/api/schedule/items", headers=auth, json=payload)
    assert response.status_code in (201, 422), response.text
    patched = await client.patch("/api/schedule/items/1", headers=auth, json=payload)
    assert patched.status_code in (200, 404, 422), patched.text
