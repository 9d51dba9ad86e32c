"""`schedbot timex` and `schedbot parse`: one JSON line out per input line, streamed, never crashing."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any, TextIO
from zoneinfo import ZoneInfo

from schedule.clock import SystemClock

DEFAULT_TZ = "Asia/Shanghai"


class UsageError(ValueError):
    """A bad --now or --tz: one line on stderr and exit status 2, like argparse's own errors."""


def _zone(tz: str | None) -> ZoneInfo:
    name = tz or DEFAULT_TZ
    try:
        return ZoneInfo(name)
    except Exception:  # ZoneInfoNotFoundError, ValueError for paths, …
        raise UsageError(f"--tz {name!r} is not an IANA timezone (e.g. Asia/Shanghai)") from None


def _reference(now: str | None, tz: ZoneInfo) -> datetime:
    if now is None:
        return SystemClock().now().astimezone(tz)
    try:
        ref = datetime.fromisoformat(now.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--now {now!r} is not ISO 8601 (e.g. 2026-06-18T10:00:00+08:00)") from None
    if ref.tzinfo is None:
        raise UsageError(f"--now {now!r} has no UTC offset (e.g. 2026-06-18T10:00:00+08:00)")
    return ref.astimezone(tz)


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


def run(command: str, *, now: str | None, tz: str | None, stdin: TextIO, stdout: TextIO,
        stderr: TextIO | None = None) -> int:
    """Stream stdin lines to JSON lines; a bad --now/--tz prints one line and returns 2 (no traceback)."""
    try:
        zone = _zone(tz)
        ref = _reference(now, zone)
    except UsageError as exc:
        print(f"schedbot {command}: error: {exc}", file=stderr or sys.stderr)
        return 2
    handle = _timex if command == "timex" else _parse
    for raw in iter(stdin.readline, ""):
        line = raw[:-2] if raw.endswith("\r\n") else raw[:-1] if raw.endswith("\n") else raw
        stdout.write(json.dumps(handle(line, ref, zone), ensure_ascii=False) + "\n")
        stdout.flush()
    return 0
