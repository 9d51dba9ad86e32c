"""Table helpers for the real-typing cases: expectations are local wall-clock strings."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from intent import Intent, to_json

SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")


def ref(stamp: str, tz: ZoneInfo = SHANGHAI) -> datetime:
    """'2026-06-18 10:00' in `tz`."""
    return datetime.fromisoformat(stamp).replace(tzinfo=tz)


def _local(value: datetime | None, tz: ZoneInfo) -> str | None:
    return None if value is None else value.astimezone(tz).strftime("%Y-%m-%d %H:%M")


def mismatches(it: Intent, want: dict[str, Any], tz: ZoneInfo) -> list[str]:
    """Fields of `it` that differ from `want` (keys: action kind title title_has at remind range target
    target_date rrule no_reminder asks time digest_kind)."""
    got: dict[str, Any] = {"action": it.action, "asks": list(it.needs_clarification)}
    v: Any = it
    if it.action == "create":
        got |= {"kind": v.kind, "title": v.title, "title_has": v.title, "at": _local(v.start_at or v.due_at, tz),
                "remind": _local(v.reminder.remind_at, tz) if v.reminder else None,
                "no_reminder": v.explicit_no_reminder, "all_day": v.all_day,
                "rrule": v.recurrence.rrule if v.recurrence else None}
    elif it.action == "query":
        got |= {"range": (_local(v.range_start, tz), _local(v.range_end, tz)), "kind": v.filter_kind}
    elif it.action in ("update", "cancel", "complete"):
        got |= {"target": v.target_text, "target_date": v.target_date.isoformat() if v.target_date else None}
        if it.action == "update" and v.changes is not None:
            got["at"] = _local(v.changes.start_at or v.changes.due_at, tz)
    elif it.action == "snooze":
        got |= {"remind": _local(v.reminder.remind_at, tz) if v.reminder else None}
    elif it.action == "subscribe_digest":
        got |= {"time": v.time, "rrule": v.recurrence.rrule if v.recurrence else None, "digest_kind": v.digest_kind}
    bad = []
    for key, expected in want.items():
        actual = got.get(key, "<absent>")
        ok = expected in actual if key in ("title_has", "target") and isinstance(actual, str) else actual == expected
        if not ok:
            bad.append(f"{key}: want {expected!r}, got {actual!r}")
    return bad


def explain(it: Intent) -> str:
    return f"rule={it.rule!r} intent={to_json(it)}"
