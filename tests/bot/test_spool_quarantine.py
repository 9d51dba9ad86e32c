"""A spool file that cannot be read — torn by a crash mid-write, or planted — is moved aside as `*.bad` with
one ERROR line (names and counts, no user text), and the replay goes on with its other records and the
other files, instead of stopping every replay until a restart."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager
from sqlalchemy import select
from webhook_helpers import EchoHandler, replay_spool_and_deliver, settings

from bot.web.app import create_app
from bot.wechat.spool import Spool
from fakes.wechat import FakeWeChatAPI
from schedule.model import OutboundMessageRow
from schedule.testing import FrozenClock

SECRET_WORDS = "明天下午三点和张医生复诊"  # a user's words: never in a log line


def spool_files(directory: Path) -> list[str]:
    return sorted(entry.name for entry in os.scandir(directory))


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.wechat.spool" and r.levelno >= logging.ERROR]


async def test_torn_and_planted_files_are_moved_aside_and_the_rest_is_replayed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    planted = tmp_path / "spool-planted.jsonl"
    planted.write_bytes(b"\xff\xfe not json at all\n" + json.dumps({"n": 0}).encode() + b"\n[1, 2]\n")
    os.utime(planted, (1, 1))  # the oldest: replayed first, and it must not stop the others
    (tmp_path / "spool-dir").mkdir()  # not even a file
    os.utime(tmp_path / "spool-dir", (2, 2))
    crashed = Spool(tmp_path)
    for n in (1, 2):
        await crashed.append({"n": n, "text": SECRET_WORDS})
    [torn] = [tmp_path / name for name in spool_files(tmp_path) if name.endswith(".jsonl") and "planted" not in name]
    with torn.open("ab") as f:  # the process died in the middle of its third append
        f.write(json.dumps({"n": 3, "text": SECRET_WORDS}, ensure_ascii=False).encode()[:25])
    crashed.close()
    os.utime(torn, (3, 3))
    other = Spool(tmp_path)
    await other.append({"n": 4})
    other.close()  # its file is the newest: replayed last

    seen: list[int] = []

    async def handle(record: dict[str, object]) -> None:
        seen.append(int(str(record["n"])))

    replayer = Spool(tmp_path)
    caplog.set_level(logging.INFO)
    assert await replayer.replay(handle) == 4
    assert seen == [0, 1, 2, 4]  # in order, file by file; the torn record and the planted junk skipped
    assert spool_files(tmp_path) == sorted(["spool-planted.jsonl.bad", "spool-dir.bad", f"{torn.name}.bad"])
    said = errors(caplog)
    assert len(said) == 3 and all("moved aside" in line for line in said), said
    assert not any(SECRET_WORDS[:4] in r.getMessage() for r in caplog.records)
    assert not replayer.pending()
    assert await replayer.replay(handle) == 0 and len(errors(caplog)) == 3  # said once
    replayer.close()


async def test_a_record_the_webhook_did_not_write_is_skipped_and_the_messages_are_answered(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    directory = tmp_path / "spool"
    earlier = Spool(directory)
    await earlier.append({"fields": "not fields"})
    await earlier.append({"fields": {"MsgType": "text"}, "received_ms": 1})  # no sender
    await earlier.append({"fields": {"ToUserName": "gh_1", "FromUserName": "o-a", "CreateTime": "1",
                                     "MsgType": "text", "Content": "第一条", "MsgId": "9001"}, "received_ms": "soon"})
    earlier.close()
    later = Spool(directory)
    await later.append({"fields": {"ToUserName": "gh_1", "FromUserName": "o-a", "CreateTime": "2",
                                   "MsgType": "text", "Content": "第二条", "MsgId": "9002"}, "received_ms": 2000})
    later.close()
    clock, handler = FrozenClock(), EchoHandler()
    async with FakeWeChatAPI() as api:
        config = settings(WECHAT_API_BASE=api.base_url, WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret,
                          DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/bot.db", SPOOL_DIR=str(directory))
        app = create_app(config, clock=clock, handler=handler, run_worker=False)
        caplog.set_level(logging.INFO)
        async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                           base_url="http://t"):
            await replay_spool_and_deliver(app)
            async with app.state.sessions() as session:
                answers = [str(row.payload["text"]) for row in await session.scalars(select(OutboundMessageRow))]
    assert [m.content for m in handler.seen] == ["第二条"]
    assert answers == ["答：第二条"]  # queued in-app: this user's window was never opened
    assert len(errors(caplog)) == 1
    assert [name for name in spool_files(directory) if name.startswith("spool-")] == \
        [name for name in spool_files(directory) if name.endswith(".bad")]
    assert len(spool_files(directory)) == 1
