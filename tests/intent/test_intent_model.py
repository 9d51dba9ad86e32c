"""The contract JSON (docs/conversation.md#intent-contract) and the discriminated union round trip."""

from __future__ import annotations

import json

from intent_helpers import at

from intent import Intent, to_json
from intent.model import CONTRACT_FIELDS, CreateIntent, NoneIntent, QueryIntent, Reminder


def test_every_contract_field_present_and_instants_carry_offset() -> None:
    it = CreateIntent(kind="event", title="会议", start_at=at(2026, 6, 18, 15),
                      reminder=Reminder(remind_at=at(2026, 6, 18, 14), offset_minutes=60))
    out = to_json(it)
    assert set(CONTRACT_FIELDS) <= set(out)
    assert out["start_at"] == "2026-06-18T15:00:00+08:00"
    assert out["reminder"] == {"remind_at": "2026-06-18T14:00:00+08:00", "offset_minutes": 60}
    assert out["range_start"] is None
    json.dumps(out, ensure_ascii=False)


def test_validate_json_dispatches_on_action() -> None:
    for it in (CreateIntent(title="x"), QueryIntent(range_start=at(2026, 6, 18)), NoneIntent(confidence=0.1)):
        again = Intent.model_validate_json(it.model_dump_json())
        assert type(again) is type(it)
        assert again == it
    assert isinstance(Intent.model_validate({"action": "query"}), QueryIntent)
