"""The public dialogue corpus (focus, corrections, same twice, several requests …): multi-turn conversations in
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

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Bot
from dialogue_runner import Row, run_dialogue

from bot.agent.builtin import BuiltinResponder

# SCHEDBOT_DIALOGUES=<dir> runs another set of dialogue files (e.g. a held-out set) instead of the corpus.
CORPUS = Path(os.environ.get("SCHEDBOT_DIALOGUES") or Path(__file__).parent / "dialogues")
CATEGORIES = sorted(p.stem for p in CORPUS.glob("*.yaml"))
SCORES: dict[str, str] = {}


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
    failures = [f"[{d['name']}] {problem}" for d in dialogues if (problem := await run_dialogue(bot, d)) is not None]
    backend = "sqlite" if database_url.startswith("sqlite") else "mariadb"
    score = f"{len(dialogues) - len(failures)}/{len(dialogues)}"
    SCORES[f"{backend} {category}"] = score
    print(f"\n{category} ({backend}): {score}")
    for failure in failures:
        print(failure)
    assert not failures, f"{category}: {score} dialogues pass\n" + "\n".join(failures)
