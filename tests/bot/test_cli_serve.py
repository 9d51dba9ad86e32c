"""`schedbot serve` for production: several processes on MariaDB, proxy headers, JSON access lines."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.bot.test_cli import SCHEDBOT, free_port, run


def wait_healthy(base: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            pytest.fail("schedbot serve did not come up")
        time.sleep(0.1)


def test_several_workers_on_sqlite_are_refused(tmp_path: Path) -> None:
    result = run(["serve", "--workers", "2", "--port", str(free_port())], tmp_path)
    assert result.returncode == 2
    assert "--workers 2 needs MariaDB/MySQL" in result.stderr and "DATABASE_URL" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "schedbot.db").exists()  # refused before touching anything


@pytest.mark.mariadb
@pytest.mark.parametrize("database_url", ["mariadb"], indirect=True)
def test_two_workers_behind_a_proxy_log_json_lines(tmp_path: Path, database_url: str) -> None:
    import os

    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "LOG_FORMAT": "json", "H5_REMINDER_WORKER_ENABLED": "0"}
    server = subprocess.Popen([SCHEDBOT, "serve", "--port", str(port), "--workers", "2", "--proxy-headers"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, server)
        answer = httpx.get(f"{base}/healthz", timeout=5,
                           headers={"X-Forwarded-For": "203.0.113.9", "X-Request-ID": "req-abc.1"})
        assert answer.headers["x-request-id"] == "req-abc.1"
        fresh = httpx.get(f"{base}/p/secret-page-token", timeout=5)
        assert len(fresh.headers["x-request-id"]) == 16
    finally:
        server.send_signal(signal.SIGTERM)
        output = server.communicate(timeout=60)[0]
    assert server.returncode == 0, output
    assert "Traceback" not in output
    records = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert sum("Started server process" in r["msg"] for r in records) == 2
    access = [r for r in records if r["logger"] == "schedbot.request"]
    forwarded = next(r for r in access if r.get("request_id") == "req-abc.1")
    assert forwarded["client"] == "203.0.113.9" and forwarded["status"] == 200 and forwarded["path"] == "/healthz"
    page = next(r for r in access if r["path"].startswith("/p/"))
    assert page["path"] == "/p/…" and "secret-page-token" not in output


def test_single_process_text_logs_carry_the_request_id(tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen([SCHEDBOT, "serve", "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, server)
        httpx.get(f"{base}/healthz", timeout=5, headers={"X-Forwarded-For": "203.0.113.9", "X-Request-ID": "rid-7"})
        bad = httpx.get(f"{base}/healthz", timeout=5, headers={"X-Request-ID": "has spaces\tand tabs"})
        assert bad.headers["x-request-id"] != "has spaces\tand tabs"
    finally:
        server.send_signal(signal.SIGTERM)
        output = server.communicate(timeout=30)[0]
    # uvicorn re-raises the SIGTERM it handled once shut down: systemd counts that as a clean stop
    assert server.returncode in (0, -signal.SIGTERM) and "Traceback" not in output
    assert "Application shutdown complete" in output
    line = next(line for line in output.splitlines() if "[rid-7]" in line)
    assert "127.0.0.1 GET /healthz 200" in line  # without --proxy-headers the forwarded address is ignored


def test_sigterm_lets_an_in_flight_request_finish(tmp_path: Path) -> None:
    import threading

    token = run(["user", "token", "bob"], tmp_path).stdout.strip().splitlines()[-1]
    port = free_port()
    server = subprocess.Popen([SCHEDBOT, "serve", "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    started, release = threading.Event(), threading.Event()
    answers: list[httpx.Response] = []

    def body():  # type: ignore[no-untyped-def]
        yield b'{"kind": "task", '
        started.set()
        release.wait(30)  # the rest of the body only after the server was told to stop
        yield '"title": "关机前"}'.encode()

    def send() -> None:
        answers.append(httpx.post(f"{base}/api/schedule/items", content=body(), timeout=30,
                                  headers={"Authorization": f"Bearer {token}", "content-type": "application/json"}))

    try:
        wait_healthy(base, server)
        sender = threading.Thread(target=send)
        sender.start()
        assert started.wait(10)
        # A barrier, not a sleep: the server answers a later request only after its event loop has read
        # the earlier connection's headers, so the stop below finds that request in flight (not idle).
        assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
        server.send_signal(signal.SIGTERM)
        assert server.stdout is not None
        for line in server.stdout:
            if "Shutting down" in line:
                break
        release.set()
        sender.join(30)
    finally:
        release.set()
        server.send_signal(signal.SIGTERM)
        output = server.communicate(timeout=60)[0]
    assert [a.status_code for a in answers] == [201], output
    assert answers[0].json()["title"] == "关机前"
    assert "Application shutdown complete" in output and "Traceback" not in output
