"""`schedbot parse|timex` with a bad --tz or --now prints one line and exits 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.intent import run

ROOT = Path(__file__).resolve().parents[2]
GOOD_NOW = "2026-06-18T10:00:00+08:00"

BAD: list[tuple[str | None, str | None, str]] = [
    (GOOD_NOW, "Mars/Olympus", "--tz"),
    (GOOD_NOW, "../../etc/passwd", "--tz"),
    (GOOD_NOW, "Asia/Shang hai", "--tz"),
    ("2026-06-18T10:00:00", "Asia/Shanghai", "no UTC offset"),
    ("2026-06-18 10:00", "Asia/Shanghai", "no UTC offset"),
    ("tomorrow", "Asia/Shanghai", "not ISO 8601"),
    ("2026-13-45T99:00:00+08:00", "Asia/Shanghai", "not ISO 8601"),
    ("", "Asia/Shanghai", "not ISO 8601"),
]


@pytest.mark.parametrize("command", ["parse", "timex"])
@pytest.mark.parametrize(("now", "tz", "says"), BAD)
def test_bad_reference_is_one_line_and_status_2(command: str, now: str | None, tz: str | None, says: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    rc = run(command, now=now, tz=tz, stdin=io.StringIO("明天下午三点开会\n"), stdout=out, stderr=err)
    assert rc == 2
    assert out.getvalue() == ""
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and says in lines[0] and lines[0].startswith(f"schedbot {command}: error:"), lines


def test_z_suffix_and_offsets_are_accepted() -> None:
    out = io.StringIO()
    assert run("parse", now="2026-06-18T02:00:00Z", tz="Asia/Shanghai", stdin=io.StringIO("明天下午三点开会\n"),
               stdout=out) == 0
    assert json.loads(out.getvalue())["intent"]["start_at"] == "2026-06-19T15:00:00+08:00"


@pytest.mark.parametrize("args", [["--tz", "Nowhere/Land"], ["--now", "2026-06-18T10:00:00"]])
def test_subprocess_exits_2_without_traceback(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "bot.cli.main", "parse", *args], input="明天\n", capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
