"""`schedbot timex` as a subprocess: one JSON line per input line, streamed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_timex_command_streams_json_lines() -> None:
    lines = ["明天下午三点开会", "你好", "每周一上午十点例会"]
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "timex", "--now", "2026-06-18T10:00:00+08:00", "--tz", "Asia/Shanghai"],
        input="".join(f"{t}\n" for t in lines), capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
    )
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["text"] for o in out] == lines
    assert out[0]["times"][0] == {"span": "明天下午三点", "type": "point", "rule": "day_relative+period+clock_hms",
                                  "start": "2026-06-19T15:00:00+08:00", "grain": "minute"}
    assert out[1]["times"] == []
    assert out[2]["times"][0]["type"] == "set"
    assert out[2]["times"][0]["rrule"] == "FREQ=WEEKLY;BYDAY=MO"


def test_run_keeps_each_line_text_and_order() -> None:
    import io

    from bot.cli.intent import run

    out = io.StringIO()
    rc = run("timex", now="2026-06-18T10:00:00+08:00", tz="Asia/Shanghai",
             stdin=io.StringIO("明天\r\n\n  下午三点  \n最后一行没有换行"), stdout=out)
    got = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rc == 0
    assert [o["text"] for o in got] == ["明天", "", "  下午三点  ", "最后一行没有换行"]
    assert got[2]["times"][0]["start"] == "2026-06-18T15:00:00+08:00"
