"""Corpus-driven checks with the real time engine: every phrasing maps to its action; negatives to none."""

from __future__ import annotations

import pytest
from intent_corpus import CORPUS, NEGATIVE
from intent_helpers import NOW, TZ, explain, needs_engine

from intent import Intent, parse

CASES = [(action, text) for action, texts in CORPUS.items() for text in texts]


@needs_engine
@pytest.mark.parametrize(("action", "text"), CASES)
def test_phrasing_maps_to_action(action: str, text: str) -> None:
    it = parse(text, now=NOW, tz=TZ)
    assert it.action == action, f"{text}: {explain(it)}"
    assert it.confidence > 0.5, f"{text}: {explain(it)}"


@needs_engine
@pytest.mark.parametrize("text", NEGATIVE)
def test_negative_corpus_is_none(text: str) -> None:
    it = parse(text, now=NOW, tz=TZ)
    assert it.action == "none", f"{text}: {explain(it)}"


@needs_engine
def test_traditional_characters_are_read() -> None:
    it = parse("明天下午三點開會", now=NOW, tz=TZ)
    assert it.action == "create", explain(it)
    assert it.rule.endswith("rule3.meeting"), explain(it)


@needs_engine
@pytest.mark.parametrize(("action", "text"), CASES)
def test_every_intent_round_trips_as_json(action: str, text: str) -> None:
    it = parse(text, now=NOW, tz=TZ)
    assert Intent.model_validate_json(it.model_dump_json()) == it, explain(it)
