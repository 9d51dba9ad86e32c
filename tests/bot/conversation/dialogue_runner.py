"""Runs a corpus dialogue (`dialogues/<category>.yaml`) through a `Bot` and says what went wrong first, if anything.

Shared by the dialogue corpus and the invariance suite. `replies=False` checks only the rows (the invariance
suite: the same meaning in other words must give the same rows; replies may echo the other words)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from conftest import SH, Bot
from sqlalchemy import select

from schedule.model import DigestSubscriptionRow, ReminderRow, ScheduleItemRow, UserRow

WEEKDAYS_RRULE = "BYDAY=MO,TU,WE,TH,FR"
Row = dict[str, Any]


def _local(ms: int | None, tz: str) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M")


def _wait(text: str) -> timedelta:
    amount, unit = re.fullmatch(r"(\d+)([smhd])", str(text)).groups()  # type: ignore[union-attr]
    return timedelta(**{{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[unit]: int(amount)})


async def _items(bot: Bot, user_id: int) -> list[Row]:
    async with bot.sessions() as session:
        rows = (await session.scalars(select(ScheduleItemRow).where(
            ScheduleItemRow.user_id == user_id, ScheduleItemRow.status == "active"))).all()
        reminders = (await session.scalars(select(ReminderRow).where(
            ReminderRow.user_id == user_id, ReminderRow.status == "pending"))).all()
    return [{"title": r.title, "kind": r.kind, "start": _local(r.start_at, r.timezone),
             "due": _local(r.due_at, r.timezone), "end": _local(r.end_at, r.timezone),
             "date": r.local_date if r.all_day else None, "location": r.location, "note": r.description or "",
             "rrule": r.rrule or "", "workdays": r.workdays, "skipped": sorted((r.metadata_json or {}).get("skipped") or []),
             "reminders": sorted(_local(m.remind_at, r.timezone) for m in reminders if m.item_id == r.id)}
            for r in rows]


def _fits(want: Row, row: Row) -> bool:
    for key, value in want.items():
        if key == "title_has":
            ok = str(value) in row["title"]
        elif key == "note_has":
            ok = str(value) in row["note"]
        elif key == "rrule_has":
            ok = str(value) in row["rrule"]
        elif key in ("reminders", "skipped"):
            ok = sorted(value) == row[key]
        else:
            ok = row[key] == value
        if not ok:
            return False
    return True


def _matches(wanted: list[Row], rows: list[Row]) -> bool:
    """Each wanted description fits a different row, and no row is left over."""
    if len(wanted) != len(rows):
        return False
    if not wanted:
        return True
    return any(_fits(wanted[0], row) and _matches(wanted[1:], rows[:i] + rows[i + 1:]) for i, row in enumerate(rows))


async def _digests(bot: Bot, user_id: int) -> list[Row]:
    async with bot.sessions() as session:
        rows = (await session.scalars(select(DigestSubscriptionRow).where(
            DigestSubscriptionRow.user_id == user_id, DigestSubscriptionRow.status == "active"))).all()
    return [{"time": d.local_time, "kind": d.kind,
             "weekdays_only": d.workdays == "cn" or WEEKDAYS_RRULE in (d.rrule or "")} for d in rows]


def _reply_problem(turn: Row, reply: str) -> str | None:
    for want in turn.get("reply_has", []):
        options = want if isinstance(want, list) else [want]
        if not any(str(o) in reply for o in options):
            return f"reply lacks {options}"
    for unwanted in turn.get("reply_lacks", []):
        if str(unwanted) in reply:
            return f"reply has {unwanted!r}"
    return None


async def _rows_problem(bot: Bot, openid: str, turn: Row) -> str | None:
    async with bot.sessions() as session:
        user_id = await session.scalar(select(UserRow.id).where(UserRow.wechat_openid == openid))
    items = await _items(bot, user_id) if user_id is not None and ("items" in turn or "titles" in turn) else []
    if "titles" in turn and sorted({row["title"] for row in items}) != sorted(turn["titles"]):
        return f"expected titles: {sorted(turn['titles'])}\n    actual titles:   {sorted({r['title'] for r in items})}"
    digests = await _digests(bot, user_id) if user_id is not None and "digests" in turn else []
    for key, actual in (("items", items), ("digests", digests)):
        if key in turn and not _matches(turn[key] or [], actual):
            shown = [{k: v for k, v in row.items() if v not in (None, "", [])} for row in actual]
            return f"expected {key}: {turn[key]}\n    actual {key}:   {shown}"
    return None


async def _run(bot: Bot, dialogue: Row, *, replies: bool = True) -> str | None:
    """None when every line of the dialogue did the right thing, else what went wrong first."""
    openid = "o-" + dialogue["name"]
    chat = bot.chat(openid)
    bot.clock.set(datetime.fromisoformat(dialogue["now"]))
    for number, turn in enumerate(dialogue["turns"], 1):
        if "wait" in turn:
            bot.clock.advance(_wait(turn["wait"]))
        if turn.get("deliver"):
            await bot.deliver(2)
        if "say" not in turn:
            continue
        reply = await chat.say(turn["say"])
        said_at = bot.clock.now().astimezone(SH)
        where = f"turn {number} {turn['say']!r} at {said_at:%a %m-%d %H:%M}\n    reply: {reply!r}"
        problem = _reply_problem(turn, reply) if replies else None
        if problem:
            return f"{where}\n    {problem}"
        problem = await _rows_problem(bot, openid, turn)
        if problem:
            return f"{where}\n    {problem}"
    return None


async def run_dialogue(bot: Bot, dialogue: Row, *, replies: bool = True) -> str | None:
    """None when every line of the dialogue did the right thing, else what went wrong first (never raises)."""
    try:
        return await _run(bot, dialogue, replies=replies)
    except Exception as error:  # one broken dialogue must not hide the others
        return f"raised {error!r}"


