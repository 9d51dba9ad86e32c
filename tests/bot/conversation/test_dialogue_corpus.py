"""The public dialogue corpus (issue 25, SPEC §3 rules 16–23): multi-turn conversations in
`dialogues/<category>.yaml`, each run through the real webhook (create_app, signed /wechat posts) on a fresh
user at its own frozen clock, with the built-in responder as the agent (no LLM).

After each line the user's rows are checked: `items` is the complete list of active items (order-insensitive,
each a partial description: title/title_has, kind, start/due/end "YYYY-MM-DD HH:MM" local, date for all-day,
location, note_has, rrule_has, workdays, reminders = pending reminder times, skipped = skipped occurrence dates),
`titles` the set of their titles, `digests` the complete list of active digest subscriptions (time, kind, weekdays_only); `reply_has` /
`reply_lacks` are loose checks on the reply (an entry that is a list means any one of them). A turn may
instead `wait` ("15m", "2h", "1d") or `deliver: true` (run the delivery worker now). One test per category
and backend; it prints `category: passed/total`, every failure, and a summary of all categories at the end.
Quick run: .venv/bin/python -m pytest tests/bot/conversation/test_dialogue_corpus.py -k sqlite -q -s
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from conftest import SH, Bot
from sqlalchemy import select

from bot.agent.builtin import BuiltinResponder
from schedule.model import DigestSubscriptionRow, ReminderRow, ScheduleItemRow, UserRow

CORPUS = Path(__file__).parent / "dialogues"
CATEGORIES = sorted(p.stem for p in CORPUS.glob("*.yaml"))
SCORES: dict[str, str] = {}
WEEKDAYS_RRULE = "BYDAY=MO,TU,WE,TH,FR"
Row = dict[str, Any]


class _Summary:
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not SCORES:
            return
        terminalreporter.section("dialogue corpus")
        for key, line in sorted(SCORES.items()):
            terminalreporter.write_line(f"{key}: {line}")


@pytest.fixture(scope="module", autouse=True)
def _summary(request: pytest.FixtureRequest) -> None:
    if not request.config.pluginmanager.has_plugin("dialogue-summary"):
        request.config.pluginmanager.register(_Summary(), "dialogue-summary")


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


async def _run(bot: Bot, dialogue: Row) -> str | None:
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
        problem = _reply_problem(turn, reply)
        if problem:
            return f"{where}\n    {problem}"
        problem = await _rows_problem(bot, openid, turn)
        if problem:
            return f"{where}\n    {problem}"
    return None


async def _guarded(bot: Bot, dialogue: Row) -> str | None:
    try:
        return await _run(bot, dialogue)
    except Exception as error:  # one broken dialogue must not hide the others
        return f"raised {error!r}"


TURN_KEYS = {"say", "wait", "deliver", "reply_has", "reply_lacks", "items", "titles", "digests"}
ITEM_KEYS = {"title", "title_has", "kind", "start", "due", "end", "date", "location", "note_has", "rrule_has",
             "workdays", "reminders", "skipped"}
DIGEST_KEYS = {"time", "kind", "weekdays_only"}


def test_corpus_is_well_formed() -> None:
    """Unique names, a clock, and only the keys the runner knows (a typo would silently check nothing)."""
    names: list[str] = []
    for category in CATEGORIES:
        for dialogue in yaml.safe_load((CORPUS / f"{category}.yaml").read_text(encoding="utf-8")):
            names.append(dialogue["name"])
            assert set(dialogue) == {"name", "now", "turns"}, dialogue["name"]
            assert datetime.fromisoformat(dialogue["now"]).utcoffset() is not None, dialogue["name"]
            for turn in dialogue["turns"]:
                assert set(turn) <= TURN_KEYS, (dialogue["name"], turn)
                assert all(set(i) <= ITEM_KEYS for i in turn.get("items") or []), (dialogue["name"], turn)
                assert all(set(d) <= DIGEST_KEYS for d in turn.get("digests") or []), (dialogue["name"], turn)
    assert len(names) == len(set(names)) >= 170


@pytest.mark.timeout(900)
@pytest.mark.parametrize("category", CATEGORIES)
async def test_dialogue_category(bot: Bot, category: str, database_url: str) -> None:
    builtin = BuiltinResponder()

    async def answer(*args: Any, **kwargs: Any) -> str:
        bot.agent.asked.append(str(args[1] if len(args) > 1 else kwargs.get("text")))
        return str(await builtin.answer(*args, **kwargs))

    bot.agent.answer = answer  # type: ignore[method-assign]
    dialogues: list[Row] = yaml.safe_load((CORPUS / f"{category}.yaml").read_text(encoding="utf-8"))
    failures = [f"[{d['name']}] {problem}" for d in dialogues if (problem := await _guarded(bot, d)) is not None]
    backend = "sqlite" if database_url.startswith("sqlite") else "mariadb"
    score = f"{len(dialogues) - len(failures)}/{len(dialogues)}"
    SCORES[f"{backend} {category}"] = score
    print(f"\n{category} ({backend}): {score}")
    for failure in failures:
        print(failure)
    assert not failures, f"{category}: {score} dialogues pass\n" + "\n".join(failures)
