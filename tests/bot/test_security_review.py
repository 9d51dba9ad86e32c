"""The security review of the web surface, through the real app: rules that never occur, the item
quota and pages of the item list, revocable links, masked paths, bounded dates, small forms, /healthz."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from bot.logging_setup import JsonFormatter, SecretFilter
from bot.settings import ConfigError, load_settings
from bot.web.app import create_app
from schedule.clock import to_ms
from schedule.errors import InvalidChange
from schedule.model import ScheduleItemRow
from schedule.testing import FrozenClock
from tests.bot.test_cli import free_port, run

SH = ZoneInfo("Asia/Shanghai")
REPO = Path(__file__).resolve().parents[2]
KEY = "f6idk_r-a8IbYqOksIS3d6bPx0X6VxUIkNX3uPXZgLdpT1Te"  # 48 random bytes of text, as MAKE_SECRET makes


def ms(*args: int) -> int:
    return to_ms(datetime(*args, tzinfo=SH))  # type: ignore[misc]


@pytest.fixture
async def app(database_url: str, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(load_settings(DATABASE_URL=database_url, SECRET_KEY=KEY), clock=clock,
                             run_worker=False)
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://schedbot") as c:
        yield c


async def token_for(app: FastAPI, name: str) -> dict[str, str]:
    _, token, _ = await app.state.service.issue_api_token(name)
    return {"Authorization": f"Bearer {token}"}


def yearly(rule: str, **extra: object) -> dict[str, object]:
    return {"kind": "task", "title": "交年费", "due_at": ms(2026, 6, 19, 9, 0), "recurrence": {"rrule": rule},
            **extra}


async def store_legacy_series(app: FastAPI, user_id: int, rule: str, count: int) -> None:
    """Rows as they could be stored before the check: written straight to the table."""
    stamp = ms(2026, 6, 1, 0, 0)
    async with app.state.sessions.begin() as session:
        session.add_all([ScheduleItemRow(
            user_id=user_id, kind="task", title=f"永不发生{i}", status="active", due_at=ms(2026, 6, 1, 9, 0),
            all_day=False, timezone="Asia/Shanghai", rrule=rule, source_channel="api", created_at=stamp,
            updated_at=stamp) for i in range(count)])


# ------------------------------------------------------------------ rules that never occur
@pytest.mark.parametrize("rule", ["FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31",
                                  "FREQ=DAILY;BYWEEKNO=1;BYMONTH=6"])
async def test_a_rule_that_never_occurs_is_refused_at_submission(app: FastAPI, client: httpx.AsyncClient,
                                                                 rule: str) -> None:
    auth = await token_for(app, "mallory")
    started = time.perf_counter()
    created = await client.post("/api/schedule/items", headers=auth, json=yearly(rule))
    assert created.status_code == 422, created.text
    assert "no occurrence" in created.text or "never meet" in created.text
    assert time.perf_counter() - started < 1.0
    patched_base = await client.post("/api/schedule/items", headers=auth, json=yearly("FREQ=YEARLY"))
    assert patched_base.status_code == 201
    patched = await client.patch(f"/api/schedule/items/{patched_base.json()['id']}", headers=auth,
                                 json={"recurrence": {"rrule": rule}})
    assert patched.status_code == 422
    listed = await client.get("/api/schedule/items", headers=auth)
    assert [i["recurrence"]["rrule"] for i in listed.json()["items"]] == ["FREQ=YEARLY"]


async def test_a_listing_with_five_stored_never_rules_answers_at_once(app: FastAPI, client: httpx.AsyncClient,
                                                                      clock: FrozenClock) -> None:
    auth = await token_for(app, "mallory")
    user = await app.state.service.get_or_create_user("mallory")
    await store_legacy_series(app, user.id, "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", 5)
    await store_legacy_series(app, user.id, "FREQ=DAILY;BYWEEKNO=1;BYMONTH=6", 5)
    await client.get("/api/schedule/items", headers=auth)  # a process's first look at a rule may scan (bounded)
    took = []
    for _ in range(3):  # the best of three: the machine running the tests is shared
        started = time.perf_counter()
        listed = await client.get("/api/schedule/items", headers=auth,
                                  params={"from": ms(2026, 6, 18, 0, 0), "to": ms(2026, 6, 25, 0, 0)})
        took.append(time.perf_counter() - started)
        assert listed.status_code == 200 and listed.json()["items"] == []
    assert min(took) < 0.1, took


async def test_the_item_quota_refuses_one_more_and_stores_nothing(database_url: str, clock: FrozenClock) -> None:
    from schedule.db import create_engine, session_factory
    from schedule.domain import ItemChanges, NewItem, NewReminder
    from schedule.migrate import upgrade
    from schedule.service import ScheduleService

    engine = create_engine(database_url)
    try:
        await upgrade(engine)
        service = ScheduleService(session_factory(engine), clock, max_active_items=3)
        user = await service.get_or_create_user("q")
        for n in range(3):
            await service.create_item(user.id, NewItem(kind="task", title=f"t{n}", timezone="Asia/Shanghai"))
        with pytest.raises(InvalidChange, match="too many active items"):
            await service.create_item(user.id, NewItem(kind="task", title="t3", timezone="Asia/Shanghai"))
        async with service.unit_of_work() as unit:  # a chat message: the error is caught and the unit commits the rest
            in_unit = service.within(unit)  # every call of it runs in the unit
            with pytest.raises(InvalidChange):
                await in_unit.create_item(user.id, NewItem(kind="task", title="t3", timezone="Asia/Shanghai",
                                                           reminders=(NewReminder(remind_at=ms(2026, 6, 19, 9, 0)),)))
            await in_unit.update_item(user.id, (await in_unit.list_items(
                user.id, include_undated_tasks=True))[0].id, ItemChanges(title="t0 改"))
        listed = await service.list_items(user.id, include_undated_tasks=True, include_reminders=True)
        assert sorted(i.title for i in listed) == ["t0 改", "t1", "t2"]
        async with engine.connect() as conn:  # nor the reminder that came with it
            assert (await conn.exec_driver_sql("SELECT COUNT(*) FROM schedule_reminders")).scalar() == 0
        await service.complete_item(user.id, listed[0].id)  # closing one makes room again
        await service.create_item(user.id, NewItem(kind="task", title="t4", timezone="Asia/Shanghai"))
    finally:
        await engine.dispose()


async def test_the_item_list_comes_in_pages(app: FastAPI, client: httpx.AsyncClient) -> None:
    auth = await token_for(app, "alice")
    ids = []
    for hour in range(9, 14):
        created = await client.post("/api/schedule/items", headers=auth, json={
            "kind": "event", "title": f"会{hour}", "start_at": ms(2026, 6, 19, hour, 0)})
        ids.append(created.json()["id"])
    seen, offset, pages = [], 0, 0
    while offset is not None:
        page = (await client.get("/api/schedule/items", headers=auth,
                                 params={"limit": 2, "offset": offset})).json()
        assert len(page["items"]) <= 2
        seen += [i["id"] for i in page["items"]]
        offset, pages = page["next_offset"], pages + 1
    assert seen == ids and pages == 3
    too_many = await client.get("/api/schedule/items", headers=auth, params={"limit": 100_000})
    assert too_many.status_code == 422


# ------------------------------------------------------------------ weak SECRET_KEY
@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["doctor"], ["worker"]])
def test_a_short_secret_key_stops_start_up_naming_the_variable(tmp_path: Path, command: list[str]) -> None:
    result = run(command, tmp_path, SECRET_KEY="schedbot2026")
    assert result.returncode == 2
    assert "SECRET_KEY" in result.stderr and "at least 32 bytes" in result.stderr
    assert "secrets.token_urlsafe(48)" in result.stderr


def test_a_long_secret_key_and_none_at_all_are_accepted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(SECRET_KEY=KEY[:32])
    assert KEY[:32] == settings.SECRET_KEY
    assert load_settings(SECRET_KEY="9f3a0c7e5b1d8246af3c9e0b7d5a1c8e").SECRET_KEY  # openssl rand -hex 16
    assert load_settings(SECRET_KEY="").SECRET_KEY == ""
    with pytest.raises(ConfigError, match="SECRET_KEY"):
        load_settings(SECRET_KEY="秘" * 10)  # 30 bytes of UTF-8


@pytest.mark.parametrize(("key", "why"), [
    ("a" * 32, "only 1 distinct characters"),
    ("ab" * 24, "only 2 distinct characters"),
    ("schedbot2026" * 3, "repeats a run of 12 characters"),
    ("0123456789abcdefghij" * 2, "repeats a run of 20 characters"),
    ("Passw0rd!Passw0rd!Passw0rd!Passw0rd!", "repeats a run of 9 characters"),
])
def test_a_long_but_guessable_secret_key_is_refused_naming_the_variable(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, key: str, why: str) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        load_settings(SECRET_KEY=key)
    assert f"SECRET_KEY: Value error, is guessable ({why})" in str(refused.value)
    assert "secrets.token_urlsafe(48)" in str(refused.value)


def test_a_guessable_secret_key_stops_start_up(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "bot.cli.main", "worker"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO), "SECRET_KEY": "a" * 32})
    assert result.returncode == 2
    assert "SECRET_KEY" in result.stderr and "guessable (only 1 distinct characters)" in result.stderr


def test_doctor_says_how_links_are_signed(tmp_path: Path) -> None:
    assert run(["migrate"], tmp_path).returncode == 0
    port = f"http://127.0.0.1:{free_port()}"
    strong = run(["doctor"], tmp_path, SECRET_KEY=KEY, PUBLIC_BASE_URL=port)
    assert "✔ configuration:" in strong.stdout and "SECRET_KEY set (48 bytes)" in strong.stdout
    unset = run(["doctor"], tmp_path, SECRET_KEY="", PUBLIC_BASE_URL=port)
    assert "SECRET_KEY unset (one is generated and kept in the database" in unset.stdout


# ------------------------------------------------------------------ tokens in logs, owner-triggered 500s
@pytest.mark.parametrize("query", [{"to": "9999-12-31"}, {"from": "0001-01-01"}, {"from": "2101-01-01"},
                                   {"from": "1999-12-31", "to": "2000-01-02"}, {"to": "0001-01-01"}])
async def test_page_dates_outside_2000_to_2100_are_a_400(app: FastAPI, client: httpx.AsyncClient,
                                                         query: dict[str, str]) -> None:
    user = await app.state.service.get_or_create_user("alice")
    url = await app.state.page_links.itinerary_url(user.id)
    response = await client.get(httpx.URL(url).path, params=query)
    assert response.status_code == 400 and "2000–2100" in response.text
    edge = await client.get(httpx.URL(url).path, params={"from": "2100-12-25", "to": "2100-12-31"})
    assert edge.status_code == 200


async def test_an_unhandled_error_logs_the_path_without_its_token(app: FastAPI,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    secret = "p.1.6a2b3c4d.0.SECRETSECRETSECRETSECRETSECRET"

    @app.get("/p/{token}/boom")
    async def boom(token: str) -> None:
        raise RuntimeError("boom")

    caplog.set_level(logging.ERROR, logger="schedbot")
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://schedbot") as client:
        response = await client.get(f"/p/{secret}/boom")
    assert response.status_code == 500
    lines = [r.getMessage() for r in caplog.records if "unhandled error" in r.getMessage()]
    assert lines == ["unhandled error on GET /p/…/boom"]


def test_every_log_line_masks_page_and_feed_tokens_tracebacks_included() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SecretFilter())
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("test.masking")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise ValueError("bad link https://bot.example.com/ics/c.1.abc.0.TOKENTOKEN.ics")
        except ValueError:
            logger.exception("failed on %s", "/p/p.1.abc.0.TOKENTOKEN?from=2026-06-01")
        handler.setFormatter(JsonFormatter())
        logger.warning("uvicorn-style line for GET /ics/c.1.abc.0.TOKENTOKEN.ics HTTP/1.1")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "TOKENTOKEN" not in text
    assert "failed on /p/…?from=2026-06-01" in text and "bad link https://bot.example.com/ics/…" in text
    assert "GET /ics/… HTTP/1.1" in text and "Traceback" in text


# ------------------------------------------------------------------ form floods before the token check
async def test_a_form_with_too_many_fields_is_a_4xx_and_logs_no_error(app: FastAPI, client: httpx.AsyncClient,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    flood = "&".join(f"f{i}=x" for i in range(21))
    headers = {"content-type": "application/x-www-form-urlencoded"}
    forged = await client.post("/p/x.y", content=flood, headers=headers)
    assert forged.status_code == 404 and "找不到这个行程页" in forged.text
    user = await app.state.service.get_or_create_user("alice")
    page = httpx.URL(await app.state.page_links.itinerary_url(user.id)).path
    owned = await client.post(page, content=flood, headers=headers)
    assert owned.status_code == 400
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


# ------------------------------------------------------------------ a public /healthz says little
async def test_public_healthz_says_degraded_without_the_wechat_error_or_the_ip(database_url: str,
                                                                                clock: FrozenClock) -> None:
    from bot.settings import Settings
    from bot.wechat.errors import WeChatError
    from fakes.wechat import FakeWeChatAPI

    async with FakeWeChatAPI() as api:
        api.script("stable_token", 40164)
        config = Settings(_env_file=None, WECHAT_API_BASE=api.base_url,  # type: ignore[call-arg]
                          WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret, WECHAT_TOKEN="t",
                          DATABASE_URL=database_url)
        app = create_app(config, clock=clock, run_worker=False)
        async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                           base_url="http://t") as http:
            assert (await http.get("/healthz")).json() == {"status": "ok", "database": "ok"}
            with pytest.raises(WeChatError):  # refused: 40164, this server's IP is not on the whitelist
                await app.state.wechat_client.access_token()
            assert app.state.wechat_client.misconfigured is not None
            answer = await http.get("/healthz")
    assert answer.status_code == 200 and answer.json() == {"status": "degraded", "database": "ok"}
    assert "127.0.0.1" not in answer.text and "40164" not in answer.text and "whitelist" not in answer.text


# ------------------------------------------------------------------ secrets on disk
def modes_of(directory: Path, prefix: str) -> dict[str, int]:
    import stat

    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in directory.iterdir() if p.name.startswith(prefix)}


async def test_the_sqlite_files_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    import os

    from schedule.db import create_engine
    from schedule.migrate import upgrade

    old_umask = os.umask(0o022)  # a usual login umask: files would be 0644
    try:
        fresh, existing = tmp_path / "fresh.db", tmp_path / "existing.db"
        existing.write_bytes(b"")
        existing.chmod(0o644)
        for path in (fresh, existing):
            engine = create_engine(f"sqlite+aiosqlite:///{path}")
            try:
                await upgrade(engine)
                async with engine.connect() as conn:  # a write while connected: -wal/-shm/-journal exist now
                    await conn.exec_driver_sql("CREATE TABLE probe (x INTEGER)")
                    await conn.commit()
                    modes = modes_of(tmp_path, path.name)
            finally:
                await engine.dispose()
            assert modes[path.name] == 0o600 and set(modes.values()) == {0o600}, modes
    finally:
        os.umask(old_umask)


# ------------------------------------------------------------------ headers of the API, front page, docs
async def test_api_answers_are_never_cached_and_the_front_page_and_docs_cannot_be_framed(
        app: FastAPI, client: httpx.AsyncClient) -> None:
    auth = await token_for(app, "alice")
    for response in (await client.get("/api/schedule/items", headers=auth),
                     await client.get("/api/schedule/items"),  # 401 too
                     await client.post("/api/schedule/items", headers=auth, json={"kind": "task", "title": "x"})):
        assert response.headers["cache-control"] == "no-store", response.status_code
    for path in ("/", "/docs", "/redoc"):
        response = await client.get(path)
        assert response.status_code == 200
        policy = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and response.headers["x-frame-options"] == "DENY", path
    page = await client.get(httpx.URL(await app.state.page_links.itinerary_url(
        (await app.state.service.get_or_create_user("alice")).id)).path)
    assert page.headers["cache-control"] == "private, no-store"  # the pages keep their own, stricter set
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
