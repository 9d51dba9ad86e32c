"""`schedbot timex` and `schedbot parse`: one JSON line out per input line, streamed, never crashing."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any, TextIO
from zoneinfo import ZoneInfo

from schedule.clock import SystemClock

DEFAULT_TZ = "Asia/Shanghai"


def _reference(now: str | None, tz: ZoneInfo) -> datetime:
    if now is None:
        return SystemClock().now().astimezone(tz)
    ref = datetime.fromisoformat(now.replace("Z", "+00:00"))
    return ref.replace(tzinfo=tz) if ref.tzinfo is None else ref.astimezone(tz)


def _timex(line: str, ref: datetime, tz: ZoneInfo) -> dict[str, Any]:
    try:
        from intent.timex import extract, to_timex_json

        times = [to_timex_json(m) for m in extract(line, now=ref, tz=tz)]
    except Exception as exc:  # one bad line must not stop the stream
        print(f"timex error on {line!r}: {exc!r}", file=sys.stderr)
        times = []
    return {"text": line, "times": times}


def _parse(line: str, ref: datetime, tz: ZoneInfo) -> dict[str, Any]:
    try:
        from intent import parse, to_json

        intent: Any = to_json(parse(line, now=ref, tz=tz))
    except Exception as exc:
        print(f"parse error on {line!r}: {exc!r}", file=sys.stderr)
        intent = {"action": "none", "confidence": 0.0}
    return {"text": line, "intent": intent}


def run(command: str, *, now: str | None, tz: str | None, stdin: TextIO, stdout: TextIO) -> int:
    zone = ZoneInfo(tz or DEFAULT_TZ)
    ref = _reference(now, zone)
    handle = _timex if command == "timex" else _parse
    for raw in iter(stdin.readline, ""):
        line = raw[:-2] if raw.endswith("\r\n") else raw[:-1] if raw.endswith("\n") else raw
        stdout.write(json.dumps(handle(line, ref, zone), ensure_ascii=False) + "\n")
        stdout.flush()
    return 0
