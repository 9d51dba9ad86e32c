"""Structured logs: one line per delivery attempt (never the text), JSON lines with the structured fields."""

from __future__ import annotations

import json
import logging
import os

import pytest

from bot.logging_setup import JsonFormatter, LoggedChannel, fresh_request_id, loggable_path
from schedule.channel import DeliveryFailure, Outgoing
from schedule.testing import RecordingChannel

SECRET_TEXT = "明天九点去医院复查"


def outgoing(outbox_id: int) -> Outgoing:
    return Outgoing(outbox_id=outbox_id, user_id=7, openid="oUser", kind="reminder", idempotency_key=f"k{outbox_id}",
                    payload={"text": SECRET_TEXT})


async def test_failed_attempts_logged_at_info_sent_ones_at_debug_never_the_text(
        caplog: pytest.LogCaptureFixture) -> None:
    inner = RecordingChannel("wechat", needs_window=True,
                             failures=[DeliveryFailure("window", "45015 closed", code="45015")])
    channel = LoggedChannel(inner)
    assert channel.name == "wechat" and channel.needs_window is True
    caplog.set_level(logging.INFO, logger="schedbot.delivery")
    with pytest.raises(DeliveryFailure):
        await channel.send(outgoing(1))
    receipt = await channel.send(outgoing(2))
    assert receipt.parts == {0: "wechat-1"}
    caplog.set_level(logging.DEBUG, logger="schedbot.delivery")
    await channel.send(outgoing(3))
    records = [r for r in caplog.records if r.name == "schedbot.delivery"]
    assert [(r.outbox_id, r.outcome, r.levelno) for r in records] == [  # type: ignore[attr-defined]
        (1, "failed", logging.INFO), (3, "sent", logging.DEBUG)]
    assert records[0].failure == "window" and records[0].code == "45015"  # type: ignore[attr-defined]
    formatted = [JsonFormatter().format(r) for r in records]
    assert all(SECRET_TEXT not in line and "oUser" not in line for line in formatted)
    first = json.loads(formatted[0])
    assert {k: first[k] for k in ("channel", "outbox_id", "user_id", "kind", "outcome", "failure", "code")} == {
        "channel": "wechat", "outbox_id": 1, "user_id": 7, "kind": "reminder", "outcome": "failed",
        "failure": "window", "code": "45015"}


def test_secret_link_paths_are_masked() -> None:
    assert loggable_path("/p/abc.def-123") == "/p/…"
    assert loggable_path("/ics/abc123.ics") == "/ics/…"
    assert loggable_path("/api/schedule/items/5") == "/api/schedule/items/5"
    assert len(loggable_path("/x" * 500)) == 200


def test_fresh_request_ids_are_unique_hex_and_a_forked_child_draws_its_own_prefix() -> None:
    ids = [fresh_request_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    assert len({i[:8] for i in ids}) == 1  # one process, one prefix

    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        os.write(write, fresh_request_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    child_id = os.read(read, 64).decode()
    os.close(read)
    assert len(child_id) == 16 and child_id[:8] != ids[0][:8]
