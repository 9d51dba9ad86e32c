"""`schedbot doctor` and `schedbot worker` on a server whose FOR UPDATE SKIP LOCKED is not real (TiDB):
doctor fails its claiming check, the worker refuses to start, each with one line saying why. A TiDB-like
server is stood for on MariaDB by a child process whose probe reads the locked row without locking it and
whose server version says TiDB; everything else is the real command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bot.test_cli import free_port, run
from tests.bot.test_cli_failures import one_clear_line

pytestmark = [pytest.mark.mariadb, pytest.mark.parametrize("database_url", ["mariadb"], indirect=True)]

LIKE_TIDB = ("import sys\n"
             "from schedule import locking\n"
             "locking.SERVER_VERSION = \"SELECT '8.0.11-TiDB-v7.5.1'\"\n"
             "locking.SKIP_LOCKED_READ = 'SELECT version_num FROM alembic_version'  # accepted, takes no lock\n"
             "from bot.cli.main import main\n"
             "sys.exit(main(sys.argv[1:]))\n")
WHY = ("FOR UPDATE SKIP LOCKED is not real on this server (8.0.11-TiDB-v7.5.1: TiDB accepts the syntax and takes "
       "no lock) — several workers would claim and send the same reminder; use MariaDB ≥ 10.6 or MySQL ≥ 8.0")


def like_tidb(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LIKE_TIDB, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})


def test_doctor_fails_and_the_worker_refuses_a_skip_locked_that_takes_no_lock(tmp_path: Path,
                                                                              database_url: str) -> None:
    env = {"DATABASE_URL": database_url, "PUBLIC_BASE_URL": f"http://127.0.0.1:{free_port()}"}
    assert run(["migrate"], tmp_path, **env).returncode == 0
    doctor = like_tidb(["doctor"], tmp_path, **env)
    assert doctor.returncode == 1, doctor.stdout
    lines = doctor.stdout.splitlines()
    assert f"✘ claiming: DATABASE_URL={database_url}: {WHY}" in lines
    assert any(line.startswith("✔ database:") for line in lines)
    assert lines[-1] == "2 problem(s)"  # claiming and the unreachable public URL
    worker = like_tidb(["worker"], tmp_path, **env)
    assert worker.returncode == 2, worker.stderr
    assert one_clear_line(worker.stderr) == f"schedbot: DATABASE_URL={database_url}: {WHY}"


def test_doctor_passes_and_the_worker_runs_on_mariadb(tmp_path: Path, database_url: str) -> None:
    env = {"DATABASE_URL": database_url, "PUBLIC_BASE_URL": f"http://127.0.0.1:{free_port()}"}
    assert run(["migrate"], tmp_path, **env).returncode == 0
    doctor = run(["doctor"], tmp_path, **env)
    assert "✔ claiming: FOR UPDATE SKIP LOCKED skips locked rows: several workers may share this database" \
        in doctor.stdout.splitlines(), doctor.stdout
    worker = subprocess.Popen([sys.executable, "-m", "bot.cli.main", "worker"], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env={**os.environ, **env})
    seen: list[str] = []
    try:
        assert worker.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("delivery worker running" in line for line in seen):
            line = worker.stdout.readline()
            if not line:
                break  # it exited
            seen.append(line)
        assert worker.poll() is None, "".join(seen)
    finally:
        worker.send_signal(signal.SIGTERM)
        output = "".join(seen) + worker.communicate(timeout=30)[0]
    assert worker.returncode == 0, output
    assert "delivery worker running" in output and "Traceback" not in output
