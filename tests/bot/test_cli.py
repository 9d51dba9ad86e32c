"""The `schedbot` command line end to end: migrate, user token, serve over real loopback HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

SCHEDBOT = str(Path(sys.executable).parent / "schedbot")


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCHEDBOT, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_user_token_prints_a_fresh_token_on_its_last_line(tmp_path: Path) -> None:
    first = run(["user", "token", "oAlice123"], tmp_path)
    second = run(["user", "token", "oAlice123"], tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    token_1, token_2 = first.stdout.strip().splitlines()[-1], second.stdout.strip().splitlines()[-1]
    assert token_1.startswith("sb_") and token_2.startswith("sb_") and token_1 != token_2
    assert "the previous token labelled 'default' stops working now" in second.stderr
    assert (tmp_path / "schedbot.db").exists()
    assert token_1 not in (tmp_path / "schedbot.db").read_bytes().decode("latin-1")  # only the hash is stored


def test_named_tokens_list_and_revoke(tmp_path: Path) -> None:
    laptop = run(["user", "token", "oBob", "--label", "laptop"], tmp_path)
    phone = run(["user", "token", "oBob", "--label", "phone"], tmp_path)
    assert laptop.returncode == phone.returncode == 0 and "stops working" not in phone.stderr
    listed = run(["user", "tokens", "oBob"], tmp_path)
    assert [line.split("\t")[0] for line in listed.stdout.strip().splitlines()] == ["laptop", "phone"]
    assert "never used" in listed.stdout
    revoked = run(["user", "token", "oBob", "--revoke", "laptop"], tmp_path)
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    again = run(["user", "token", "oBob", "--revoke", "laptop"], tmp_path)
    assert again.returncode == 1 and "no token labelled 'laptop'" in again.stderr
    bad = run(["user", "token", "oBob", "--label", "my laptop!"], tmp_path)
    assert bad.returncode == 2 and "--label" in bad.stderr and "Traceback" not in bad.stderr
    assert [line.split("\t")[0] for line in run(["user", "tokens", "oBob"], tmp_path).stdout.splitlines()] == ["phone"]


def test_user_forget(tmp_path: Path) -> None:
    token = run(["user", "token", "oCarol"], tmp_path).stdout.strip().splitlines()[-1]
    forgotten = run(["user", "forget", "oCarol"], tmp_path)
    assert forgotten.returncode == 0 and "forgotten" in forgotten.stdout
    assert token.startswith("sb_") and run(["user", "tokens", "oCarol"], tmp_path).stdout == ""
    unknown = run(["user", "forget", "oNobody"], tmp_path)
    assert unknown.returncode == 1 and "no user 'oNobody'" in unknown.stderr


def test_bad_configuration_stops_with_the_variable_name(tmp_path: Path) -> None:
    result = run(["migrate"], tmp_path, H5_DEFAULT_TIMEZONE="Nowhere/Land")
    assert result.returncode == 2
    assert "H5_DEFAULT_TIMEZONE" in result.stderr and "Traceback" not in result.stderr


def test_serve_answers_healthz_and_the_api_over_loopback(tmp_path: Path) -> None:
    token = run(["user", "token", "api-user"], tmp_path).stdout.strip().splitlines()[-1]
    port = free_port()
    server = subprocess.Popen([SCHEDBOT, "serve", "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"{base}/healthz", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("schedbot serve did not come up")
                time.sleep(0.1)
        assert health.json() == {"status": "ok", "database": "ok"}
        auth = {"Authorization": f"Bearer {token}"}
        created = httpx.post(f"{base}/api/schedule/items", headers=auth, timeout=5,
                             json={"kind": "task", "title": "带材料", "due_at": 1_781_830_800_000})
        assert created.status_code == 201
        listed = httpx.get(f"{base}/api/schedule/items", headers=auth, timeout=5).json()["items"]
        assert [i["title"] for i in listed] == ["带材料"]
        assert httpx.get(f"{base}/api/schedule/items", timeout=5).status_code == 401
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0]
    assert "Traceback" not in output


def test_worker_runs_until_sigterm(tmp_path: Path) -> None:
    import signal

    worker = subprocess.Popen([SCHEDBOT, "worker"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "schedbot.db").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # a few poll ticks on an empty database
        assert worker.poll() is None, worker.communicate()[0]
    finally:
        worker.send_signal(signal.SIGTERM)
        output = worker.communicate(timeout=30)[0]
    assert worker.returncode == 0, output
    assert "delivery worker running" in output
    assert "delivery worker stopped" in output
    assert "Traceback" not in output

