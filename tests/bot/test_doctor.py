"""`schedbot doctor` end to end: one ✔/✘/– line per check, non-zero exit on any failure."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.cli import doctor
from bot.settings import load_settings
from fakes.wechat import FakeWeChatAPI
from schedule.clock import SystemClock
from schedule.testing import FrozenClock
from tests.bot.test_cli import free_port, run


class _Site(BaseHTTPRequestHandler):
    """A stand-in for the public site (/healthz) and an OpenAI-compatible endpoint."""

    key = "sk-test"

    def do_GET(self) -> None:
        self._answer(200 if self.path == "/healthz" else 404, {"status": "ok", "database": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if self.headers.get("authorization") != f"Bearer {self.key}":
            self._answer(401, {"error": {"message": "invalid api key"}})
        elif self.path != "/v1/chat/completions" or body.get("model") != "tiny":
            self._answer(404, {"error": {"message": "model not found"}})
        else:
            self._answer(200, {"id": "c1", "object": "chat.completion", "model": "tiny", "choices": [
                {"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "p"}}]})

    def _answer(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeWeChatAPI]:
    with FakeWeChatAPI() as api:
        yield api


def configured(fake: FakeWeChatAPI, site: str, **extra: str) -> dict[str, str]:
    return {"WECHAT_APP_ID": fake.app_id, "WECHAT_APP_SECRET": fake.app_secret, "WECHAT_TOKEN": "tok",
            "WECHAT_API_BASE": fake.base_url, "AGENT_BASE_URL": f"{site}/v1", "AGENT_API_KEY": "sk-test",
            "AGENT_MODEL": "tiny", "PUBLIC_BASE_URL": site, **extra}


def test_everything_configured_passes(tmp_path: Path, fake: FakeWeChatAPI, site: str) -> None:
    assert run(["migrate"], tmp_path).returncode == 0
    result = run(["doctor"], tmp_path, **configured(fake, site))
    assert result.returncode == 0, result.stdout
    marks = {line.split(":", 1)[0] for line in result.stdout.splitlines()[:-1]}
    assert marks == {"✔ configuration", "✔ database", "✔ claiming", "✔ deliveries", "✔ wechat", "✔ clock",
                     "✔ agent", "✔ public URL"}
    assert "✔ claiming: SQLite: one worker process, claims serialised by BEGIN IMMEDIATE" in result.stdout
    assert "access token for wxtestappid issued; plaintext mode" in result.stdout
    assert result.stdout.splitlines()[-1] == "all checks passed"


def test_nothing_configured_skips_wechat_and_agent_and_fails_on_the_public_url(tmp_path: Path) -> None:
    result = run(["doctor"], tmp_path, PUBLIC_BASE_URL=f"http://127.0.0.1:{free_port()}")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("– wechat: not configured (set WECHAT_APP_ID") for line in lines)
    assert any(line.startswith("– agent: AGENT_BASE_URL not set") for line in lines)
    assert any(line.startswith("✘ public URL:") and "ConnectError" in line for line in lines)
    assert any(line.startswith("✘ database:") and "run `schedbot migrate`" in line for line in lines)
    assert lines[-1] == "2 problem(s)"


def test_wrong_secret_whitelist_and_agent_key_are_named(tmp_path: Path, fake: FakeWeChatAPI, site: str) -> None:
    assert run(["migrate"], tmp_path).returncode == 0
    wrong = run(["doctor"], tmp_path, **configured(fake, site, WECHAT_APP_SECRET="nope", AGENT_API_KEY="sk-bad"))
    assert wrong.returncode == 1
    assert "✘ wechat: stable_token: errcode 40125" in wrong.stdout and "WECHAT_APP_SECRET is wrong" in wrong.stdout
    assert "✘ agent:" in wrong.stdout and "HTTP 401 — check AGENT_API_KEY" in wrong.stdout
    fake.script("stable_token", 40164)
    blocked = run(["doctor"], tmp_path, **configured(fake, site))
    assert blocked.returncode == 1 and "add 127.0.0.1 to the IP whitelist" in blocked.stdout
    model = run(["doctor"], tmp_path, **configured(fake, site, AGENT_MODEL="huge"))
    assert model.returncode == 1 and "check AGENT_MODEL='huge'" in model.stdout


async def test_clock_skew_against_the_wechat_date_header_fails(fake: FakeWeChatAPI) -> None:
    settings = load_settings(WECHAT_API_BASE=fake.base_url)
    behind = await doctor.clock_check(settings, FrozenClock(datetime(2020, 1, 1, tzinfo=UTC)))
    assert behind.mark == doctor.FAIL and "timedatectl set-ntp true" in behind.detail
    assert behind.detail.startswith("-")  # our clock is behind the API's
    on_time = await doctor.clock_check(settings, SystemClock())
    assert on_time.mark == doctor.PASS and on_time.detail.endswith(f"s from {fake.base_url}")
    nobody = await doctor.clock_check(load_settings(WECHAT_API_BASE="http://127.0.0.1:9"), SystemClock())
    assert nobody.mark == doctor.SKIP and "WeChatTransportError" in nobody.detail


def test_a_configuration_incident_a_worker_met_is_reported(tmp_path: Path, fake: FakeWeChatAPI, site: str) -> None:
    """A worker process met 40164 and paused the custom-message channel for every worker (pauses are shared)."""
    assert run(["migrate"], tmp_path).returncode == 0
    with sqlite3.connect(tmp_path / "schedbot.db") as db:
        db.execute("INSERT INTO channel_pauses (channel, paused_until, daily, code, updated_at) "
                   "VALUES ('wechat', 4102444800000, 0, '40164', 0)")  # until 2100
    result = run(["doctor"], tmp_path, **configured(fake, site))
    assert result.returncode == 1
    [line] = [x for x in result.stdout.splitlines() if x.startswith("✘ deliveries:")]
    assert "errcode 40164" in line and "IP白名单" in line and "without spending attempts" in line
