"""REST API rough edges a new user hits: epoch seconds, past reminders, control characters, chunked bodies,
recurrence, null in PATCH, missing content-type, offline docs, the front page."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from bot.settings import load_settings
from bot.web.app import create_app
from schedule.clock import to_ms
from schedule.testing import FrozenClock

SH = ZoneInfo("Asia/Shanghai")
ITEMS = "/api/schedule/items"


def ms(*args: int) -> int:
    return to_ms(datetime(*args, tzinfo=SH))  # type: ignore[misc]


@pytest.fixture
async def app(database_url: str, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(load_settings(DATABASE_URL=database_url, H5_REMINDER_CATCHUP_HOURS=12), clock=clock,
                              run_worker=False)
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://schedbot") as c:
        _, token, _ = await app.state.service.issue_api_token("alice")
        c.headers["Authorization"] = f"Bearer {token}"
        yield c


async def test_epoch_seconds_are_refused_with_a_clear_message(client: httpx.AsyncClient) -> None:
    seconds = ms(2026, 6, 19, 9, 0) // 1000
    created = await client.post(ITEMS, json={"kind": "task", "title": "交报告", "due_at": seconds})
    assert created.status_code == 422
    assert "epoch milliseconds expected" in created.text and created.json()["detail"][0]["loc"][-1] == "due_at"
    listed = await client.get(ITEMS, params={"from": seconds})
    assert listed.status_code == 422 and "epoch milliseconds expected" in listed.text
    reminder = await client.post(ITEMS, json={"kind": "task", "title": "x", "due_at": ms(2026, 6, 19, 9, 0),
                                              "reminder": {"remind_at": seconds}})
    assert reminder.status_code == 422 and "epoch milliseconds expected" in reminder.text
    ok = await client.post(ITEMS, json={"kind": "task", "title": "交报告", "due_at": seconds * 1000})
    assert ok.status_code == 201


async def test_the_answer_says_what_happens_to_a_reminder_in_the_past(client: httpx.AsyncClient,
                                                                     clock: FrozenClock) -> None:
    now = to_ms(clock.now())
    cases = {"scheduled": now + 3_600_000, "now": now - 3_600_000, "expired": now - 13 * 3_600_000}
    for expected, remind_at in cases.items():
        created = await client.post(ITEMS, json={"kind": "task", "title": "提醒", "due_at": now + 7_200_000,
                                                 "reminder": {"remind_at": remind_at}})
        assert created.status_code == 201
        reminder = created.json()["reminders"][0]
        assert (reminder["status"], reminder["delivery"]) == ("pending", expected)
    item_id = created.json()["id"]
    clock.advance(timedelta(hours=20))
    assert (await client.get(f"{ITEMS}/{item_id}")).json()["reminders"][0]["delivery"] == "expired"
    listed = (await client.get(ITEMS, params={"include_reminders": 1})).json()["items"]
    assert sorted(r["delivery"] for i in listed for r in i["reminders"]) == ["expired"] * 3


@pytest.mark.parametrize("title", ["买\x00牛奶", "买\u200b牛奶", "买\x1b[31m牛奶", "买\r\n牛奶"])
async def test_control_characters_in_titles_are_blanked_like_the_chat_path(client: httpx.AsyncClient,
                                                                           title: str) -> None:
    created = await client.post(ITEMS, json={"kind": "task", "title": title, "description": "第一行\n第二行\x00",
                                             "location": "超\x07市"})
    assert created.status_code == 201
    body = created.json()
    assert re.fullmatch(r"买 (\[31m)?牛奶", body["title"]) and body["location"] == "超 市"
    assert body["description"] == "第一行\n第二行"
    only_control = await client.post(ITEMS, json={"kind": "task", "title": "\x00\x01"})
    assert only_control.status_code == 422
    patched = await client.patch(f"{ITEMS}/{body['id']}", json={"title": "改\x00名"})
    assert patched.json()["title"] == "改 名"


async def test_null_in_a_patch_is_refused_except_end_at(client: httpx.AsyncClient) -> None:
    event = (await client.post(ITEMS, json={"kind": "event", "title": "会", "start_at": ms(2026, 6, 19, 15, 0),
                                            "end_at": ms(2026, 6, 19, 16, 0)})).json()
    refused = await client.patch(f"{ITEMS}/{event['id']}", json={"title": None, "location": None})
    assert refused.status_code == 422
    assert "location, title cannot be null" in refused.text
    assert (await client.get(f"{ITEMS}/{event['id']}")).json()["title"] == "会"
    cleared = await client.patch(f"{ITEMS}/{event['id']}", json={"end_at": None})
    assert cleared.status_code == 200 and cleared.json()["end_at"] is None


async def test_json_without_content_type_is_read_and_other_types_are_named(client: httpx.AsyncClient) -> None:
    body = json.dumps({"kind": "task", "title": "无头"}).encode()
    bare = await client.post(ITEMS, content=body, headers={"content-type": ""})
    assert bare.status_code == 201, bare.text
    assert bare.json()["title"] == "无头"
    text = await client.post(ITEMS, content=body, headers={"content-type": "text/plain"})
    assert text.status_code == 415 and text.json()["detail"] == "send JSON with content-type application/json"
    form = await client.post(ITEMS, data={"kind": "task", "title": "表单"})
    assert form.status_code == 415


async def test_recurrence_is_accepted_and_validated(client: httpx.AsyncClient) -> None:
    weekly = await client.post(ITEMS, json={"kind": "event", "title": "周会", "start_at": ms(2026, 6, 22, 10, 0),
                                            "recurrence": {"rrule": "freq=weekly;byday=MO"}})
    assert weekly.status_code == 201, weekly.text
    assert weekly.json()["rrule"] == "FREQ=WEEKLY;BYDAY=MO"
    assert weekly.json()["recurrence"] == {"rrule": "FREQ=WEEKLY;BYDAY=MO", "workdays": None, "lunar": None}
    listed = (await client.get(ITEMS, params={"from": ms(2026, 6, 29, 0, 0), "to": ms(2026, 6, 30, 0, 0)})).json()
    assert [i["title"] for i in listed["items"]] == ["周会"]  # the next Monday's occurrence
    lunar = await client.post(ITEMS, json={"kind": "event", "title": "妈妈生日", "start_at": ms(2026, 6, 19, 9, 0),
                                           "all_day": True, "recurrence": {"lunar": {"month": 8, "day": 15}}})
    assert lunar.status_code == 201 and lunar.json()["recurrence"]["lunar"] == {"month": 8, "day": 15, "leap": False}
    workdays = await client.post(ITEMS, json={"kind": "task", "title": "打卡", "due_at": ms(2026, 6, 19, 9, 0),
                                              "recurrence": {"rrule": "FREQ=DAILY", "workdays": "cn"}})
    assert workdays.status_code == 201


@pytest.mark.parametrize(("recurrence", "named"), [
    ({"rrule": "FREQ=WEEKLY;BYDAY=XX"}, "rrule part 'BYDAY=XX' is invalid"),
    ({"rrule": "FREQ=WEEKLY;BYDAY=MO;FOO=1"}, "rrule part 'FOO=1': unknown or unsupported key FOO"),
    ({"rrule": "BYDAY=MO"}, "rrule needs FREQ=DAILY|WEEKLY|MONTHLY|YEARLY (got no FREQ)"),
    ({"rrule": "FREQ=SECONDLY"}, "got FREQ=SECONDLY"),
    ({"rrule": "FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z"}, "COUNT and UNTIL cannot both be given"),
    ({"rrule": "FREQ=DAILY;INTERVAL=abc"}, "rrule part 'INTERVAL=ABC' is invalid"),
    ({"rrule": "FREQ=DAILY;BYMONTHDAY"}, "rrule part 'BYMONTHDAY' is not KEY=VALUE"),
    ({}, "recurrence needs rrule, workdays or lunar"),
    ({"lunar": {"month": 13, "day": 1}}, "less than or equal to 12"),
    ({"workdays": "us"}, "'cn'"),
])
async def test_a_bad_recurrence_is_422_naming_the_part(client: httpx.AsyncClient, recurrence: dict[str, object],
                                                        named: str) -> None:
    response = await client.post(ITEMS, json={"kind": "event", "title": "周会", "start_at": ms(2026, 6, 22, 10, 0),
                                              "recurrence": recurrence})
    assert response.status_code == 422
    assert named in response.text


async def test_recurrence_needs_a_first_occurrence(client: httpx.AsyncClient) -> None:
    response = await client.post(ITEMS, json={"kind": "task", "title": "x", "recurrence": {"rrule": "FREQ=DAILY"}})
    assert response.status_code == 422 and "recurrence needs the item's start_at or due_at" in response.text


async def test_docs_reference_no_external_host_and_the_front_page_links_them(app: FastAPI) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://schedbot") as c:
        docs = await c.get("/docs")
        assert docs.status_code == 200
        urls = re.findall(r"""(?:src|href|url)\s*[:=]\s*['"]([^'"]+)['"]""", docs.text)
        assert urls and all(u.startswith("/") for u in urls), urls
        assert "validator.swagger.io" not in docs.text and "cdn.jsdelivr" not in docs.text
        for asset in re.findall(r"""(?:src|href)=['"](/[^'"]+)['"]""", docs.text):
            assert (await c.get(asset)).status_code == 200, asset
        redoc = await c.get("/redoc")
        assert "fonts.googleapis" not in redoc.text and "cdn.jsdelivr" not in redoc.text
        front = await c.get("/")
        assert front.status_code == 200 and front.headers["content-type"].startswith("text/html")
        assert 'href="/docs"' in front.text and 'href="/healthz"' in front.text and "schedbot" in front.text


# --- over real loopback HTTP: a chunked body has no content-length ------------------------------------

@pytest.fixture
def served(tmp_path: object) -> Iterator[str]:
    import subprocess

    from tests.bot.test_cli import SCHEDBOT, free_port
    from tests.bot.test_cli_serve import wait_healthy

    port = free_port()
    server = subprocess.Popen([SCHEDBOT, "serve", "--port", str(port)], cwd=str(tmp_path), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, server)
        yield base
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_a_chunked_body_over_64_kb_is_413_like_a_sized_one(served: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"kind": "task", "title": "'
        for _ in range(70):
            yield b"x" * 1024
        yield b'"}'

    chunked = httpx.post(f"{served}{ITEMS}", content=chunks(), timeout=10,
                         headers={"content-type": "application/json", "Authorization": "Bearer sb_nope"})
    assert chunked.status_code == 413 and chunked.json() == {"detail": "request body too large"}
    sized = httpx.post(f"{served}{ITEMS}", content=b"x" * 70_000, timeout=10)
    assert sized.status_code == 413


async def test_recurrence_can_be_changed_and_removed_with_patch(client: httpx.AsyncClient) -> None:
    item = (await client.post(ITEMS, json={"kind": "event", "title": "周会", "start_at": ms(2026, 6, 22, 10, 0),
                                           "recurrence": {"rrule": "FREQ=WEEKLY;BYDAY=MO"}})).json()
    url = f"{ITEMS}/{item['id']}"
    daily = await client.patch(url, json={"recurrence": {"rrule": "FREQ=DAILY"}})
    assert daily.status_code == 200 and daily.json()["recurrence"]["rrule"] == "FREQ=DAILY"
    tuesday = (await client.get(ITEMS, params={"from": ms(2026, 6, 23, 0, 0), "to": ms(2026, 6, 24, 0, 0)})).json()
    assert [i["title"] for i in tuesday["items"]] == ["周会"]  # daily now: Tuesday has one too
    bad = await client.patch(url, json={"recurrence": {"rrule": "FREQ=WEEKLY;BYDAY=XX"}})
    assert bad.status_code == 422 and "BYDAY=XX" in bad.text
    once = await client.patch(url, json={"recurrence": None})
    assert once.status_code == 200 and once.json()["recurrence"] is None
    later = (await client.get(ITEMS, params={"from": ms(2026, 6, 23, 0, 0), "to": ms(2026, 7, 1, 0, 0)})).json()
    assert later["items"] == []
    untouched = await client.patch(url, json={"title": "周会（改）"})
    assert untouched.json()["recurrence"] is None and untouched.json()["title"] == "周会（改）"
