"""No secret reaches a log line or a row: WeChat's access_token and JS-SDK ticket, page, share and feed
link tokens, API (bearer) tokens — whichever logger wrote the line, third-party ones included — and the
suite-wide check (tests/secret_scan.py) that catches a line or a row that still holds one."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.logging_setup import configure_logging, log_handler, mask_secrets
from bot.pages import tokens
from fakes.wechat import FakeWeChatAPI
from schedule.model import DeliveryLogRow
from schedule.users import new_token
from tests.secret_scan import SecretWatch, leaks, stored_leaks

REPO = Path(__file__).resolve().parents[2]
KEY = tokens.derive(b"k" * 48, "page-token")
PAGE = tokens.sign(KEY, tokens.Claims("p", 7, 1_900_000_000_000, "0"))
SHARE = tokens.sign(KEY, tokens.Claims("s", 7, 1_900_000_000_000, "AbC_dEf-123"))
FEED = tokens.sign(KEY, tokens.Claims("c", 7, 1_900_000_000_000, "0-2"))
API = new_token()


@pytest.fixture
def fake() -> Iterator[FakeWeChatAPI]:
    with FakeWeChatAPI() as api:
        yield api


@pytest.mark.parametrize(("line", "secret"), [
    ("HTTP Request: GET http://api/cgi-bin/menu/get?access_token=FAKE_TOKEN_3 \"HTTP/1.1 200 OK\"", "FAKE_TOKEN_3"),
    ("GET /cgi-bin/ticket/getticket?type=jsapi&access_token=ab-C_9 200", "ab-C_9"),
    ("jsapi_ticket=FAKE_TICKET_2&noncestr=x&timestamp=1", "FAKE_TICKET_2"),
    ("answer {\"ticket\": \"FAKE_TICKET_4\", \"expires_in\": 7200}", "FAKE_TICKET_4"),
    ("token {'access_token': 'FAKE_TOKEN_5'}", "FAKE_TOKEN_5"),
    (f"GET /p/{PAGE}?from=2026-06-01 200", PAGE),
    (f"shared {SHARE} revoked", SHARE),
    (f"subscribe webcal://bot.example.com/ics/{FEED}.ics", FEED),
    (f"Authorization: Bearer {API}", API),
    (f"user 7 token {API} issued", API),
], ids=["httpx-url", "url-any-order", "jsapi-ticket", "json-ticket", "repr-token", "page", "bare-share", "feed",
        "bearer", "api-token"])
def test_every_secret_shape_is_masked(line: str, secret: str) -> None:
    masked = mask_secrets(line)
    assert secret not in masked and "…" in masked
    assert leaks(line) and not leaks(masked)  # the suite's detector sees the raw line and passes the masked one


def test_lines_without_secrets_are_left_alone() -> None:
    for line in ("ticket/getticket: the access token was refused twice", "SECRET_KEY is not set: generated one",
                 "GET /api/schedule/items?limit=5 200", "no subscribe button on the page: jsapi_ticket unavailable"):
        assert mask_secrets(line) == line


@pytest.mark.parametrize("log_format", ["text", "json"])
async def test_a_third_party_loggers_request_line_is_masked_by_the_process_handler(
        fake: FakeWeChatAPI, log_format: str) -> None:
    """httpx logs every request URL at INFO; the handler every process logs through masks it on the way."""
    stream = io.StringIO()
    handler = log_handler(stream, log_format)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        async with httpx.AsyncClient(base_url=fake.base_url) as http:  # the pages' web OAuth client, say
            await http.get("/cgi-bin/get_api_domain_ip", params={"access_token": "FAKE_TOKEN_77"})
        logging.getLogger("aiohttp.client").warning("failed: %s", f"{fake.base_url}/cgi-bin/x?access_token=tok")
    finally:
        root.removeHandler(handler)
    lines = stream.getvalue()
    assert fake.calls[-1].access_token == "FAKE_TOKEN_77" and "FAKE_TOKEN_77" not in lines
    assert "get_api_domain_ip?access_token=…" in lines and "x?access_token=…" in lines
    assert not leaks(lines)


def test_configure_logging_masks_every_loggers_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """What `schedbot serve`, `worker` and `chat` call first (bot/cli/commands.py; serve's worker processes in
    bot/cli/serve.py): records of any logger, third-party ones included, reach stderr masked."""
    root, access = logging.getLogger(), logging.getLogger("uvicorn.access")
    handlers, level, access_disabled = root.handlers[:], root.level, access.disabled
    try:
        configure_logging("text")
        logging.getLogger("httpx").info("HTTP Request: GET http://api/cgi-bin/ticket/getticket?access_token=%s"
                                        "&type=jsapi", "FAKE_TOKEN_99")
        logging.getLogger("uvicorn.error").warning("Invalid HTTP request: GET /ics/%s.ics", FEED)
        logging.getLogger("aiohttp.client").error("bad answer from url='http://api/x?access_token=abc'")
    finally:
        root.handlers[:], root.level, access.disabled = handlers, level, access_disabled
    lines = capsys.readouterr().err
    assert "getticket?access_token=…&type=jsapi" in lines and "GET /ics/…" in lines and "x?access_token=…'" in lines
    assert not leaks(lines)


def test_wechat_menu_show_prints_no_token(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    """The command line logs through the same handler (serve, worker and chat too: bot/cli/commands.py)."""
    fake.menu = {"button": [{"type": "click", "name": "今日", "key": "TODAY"}]}
    env = {**os.environ, "PYTHONPATH": str(REPO), "WECHAT_APP_ID": fake.app_id,
           "WECHAT_APP_SECRET": fake.app_secret, "WECHAT_TOKEN": "tok", "WECHAT_API_BASE": fake.base_url}
    shown = subprocess.run([sys.executable, "-m", "bot.cli.main", "wechat", "menu", "--show"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "今日" in shown.stdout
    token = fake.calls[-1].access_token
    assert token and token not in shown.stdout + shown.stderr
    fake.script("menu/get", 40001, 40001)  # refused: the client logs its one refresh, and says why it failed
    refused = subprocess.run([sys.executable, "-m", "bot.cli.main", "wechat", "menu", "--show"], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "errcode 40001" in refused.stdout
    assert "refreshing the access token once" in refused.stderr
    tokens = {c.access_token for c in fake.calls if c.access_token}
    assert not any(t in refused.stdout + refused.stderr for t in tokens)
    assert not leaks(shown.stdout + shown.stderr + refused.stdout + refused.stderr)


def test_the_suite_watch_catches_a_line_the_filter_cannot_mask() -> None:
    """A token logged bare (no access_token=, no link shape around it) passes the filter: the watch flags it."""
    watch = SecretWatch()
    logger = logging.getLogger("test.secret_watch")
    logger.addHandler(watch)
    logger.propagate = False  # the session's own watch must not see this planted leak
    try:
        logger.info("refreshed, now %s", "FAKE_TOKEN_41")
        logger.info("GET /cgi-bin/menu/get?access_token=%s", "abc")  # masked: not a leak
        logger.debug("feed %s", f"https://bot.example.com/ics/{FEED}.ics")  # masked
    finally:
        logger.removeHandler(watch)
        logger.propagate = True
    assert len(watch.found) == 1 and "FAKE_TOKEN_41" in watch.found[0]


async def test_the_suite_check_reads_tokens_in_the_delivery_log(engine: AsyncEngine,
                                                                sessions: async_sessionmaker[AsyncSession]) -> None:
    async with sessions.begin() as session:
        session.add(DeliveryLogRow(channel="wechat", status="failed", error_code="transport", created_at=1,
                                   error_message="custom/send: ClientResponseError (HTTP 400)"))
    assert await stored_leaks(engine) == []
    async with sessions.begin() as session:
        planted = DeliveryLogRow(channel="wechat", status="failed", error_code="transport", created_at=2,
                                 error_message="400, url='http://api/cgi-bin/x?access_token=FAKE_TOKEN_8'")
        session.add(planted)
    [found] = await stored_leaks(engine)
    assert "access_token=FAKE_TOKEN_8" in found
    async with sessions.begin() as session:
        await session.delete(await session.get(DeliveryLogRow, planted.id))  # the fixture's own check passes
