"""Database down (docs/delivery.md#spool): a real MariaDB server, started for this test on a port of its own,
is stopped for 60 s while 20 users send 5 messages a second (WeChat retrying some). Every message is
answered (passively, or by custom message once the spool is replayed), none is lost, none handled twice."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager
from sqlalchemy import select
from webhook_helpers import EchoHandler, content_of, replay_spool_and_deliver, settings, signed

from bot.web.app import create_app
from bot.wechat.endpoint import SPOOLED
from bot.wechat.spool import Spool
from fakes.wechat import FakeWeChatAPI, text_message
from schedule.model import OutboundMessageRow
from schedule.testing import FrozenClock
from tests.bot.test_cli import free_port

pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(420)]
OUTAGE_S = 60.0
RATE = 5  # messages a second, from 20 users


class MariaDBServer:
    """A private mariadbd on a free port with a throwaway data directory: stop() and start() at will."""

    def __init__(self, root: Path) -> None:
        self.root, self.port = root, free_port()
        self.process: subprocess.Popen[bytes] | None = None
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={root / 'data'}", "--user=root",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True, timeout=120)

    @property
    def url(self) -> str:
        return f"mysql+aiomysql://root@127.0.0.1:{self.port}/schedbot"

    def start(self) -> None:
        with (self.root / "server.log").open("ab") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                ["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={self.root / 'data'}", "--user=root",
                 f"--port={self.port}", "--bind-address=127.0.0.1", f"--socket={self.root / 'sock'}",
                 f"--pid-file={self.root / 'pid'}", "--innodb-buffer-pool-size=32M", "--skip-name-resolve"],
                stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 60
        while subprocess.run(["mysqladmin", "-uroot", "-h127.0.0.1", f"-P{self.port}", "--connect-timeout=1",
                              "ping"], capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "the test's MariaDB did not start"
            time.sleep(0.2)

    def stop(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)  # the server goes away; connections are refused
        self.process.wait(timeout=60)
        self.process = None


@pytest.fixture
def server(tmp_path: Path) -> Iterator[MariaDBServer]:
    if shutil.which("mariadb-install-db") is None or not os.path.exists("/usr/sbin/mariadbd"):
        if os.environ.get("CI") == "true":
            pytest.fail("mariadbd and mariadb-install-db are needed for the outage test")
        pytest.skip("no MariaDB server binaries here")
    db = MariaDBServer(tmp_path / "mariadb")
    db.start()
    subprocess.run(["mysql", "-uroot", "-h127.0.0.1", f"-P{db.port}", "-e", "CREATE DATABASE schedbot CHARACTER SET utf8mb4"], check=True)
    try:
        yield db
    finally:
        if db.process is not None:
            db.stop()



@pytest.fixture
async def api() -> AsyncIterator[FakeWeChatAPI]:
    async with FakeWeChatAPI() as fake:
        yield fake


async def test_a_60_s_database_outage_loses_nothing_and_handles_nothing_twice(
        server: MariaDBServer, api: FakeWeChatAPI, tmp_path: Path) -> None:
    clock, handler = FrozenClock(), EchoHandler()
    config = settings(WECHAT_API_BASE=api.base_url, WECHAT_APP_ID=api.app_id, WECHAT_APP_SECRET=api.app_secret,
                      DATABASE_URL=server.url, SPOOL_DIR=str(tmp_path / "spool"))
    app = create_app(config, clock=clock, handler=handler, run_worker=False, reply_budget_s=3.0)
    sent: list[str] = []
    passive: Counter[str] = Counter()
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                       base_url="http://t", timeout=10) as client:
        async def say(n: int, *, retry: bool = False) -> None:
            openid, content = f"o-user{n % 20}", f"第{n}条"
            body = text_message(openid, content, msg_id=700_000 + n, create_time=1 + n)
            started = time.monotonic()
            for _ in range(2 if retry else 1):  # WeChat's retry of the same message
                r = await client.post("/wechat", params=signed(clock), content=body)
                assert r.status_code == 200 and time.monotonic() - started < 5  # WeChat still waits
            if r.text != "success":  # the user sees the answer to the try WeChat waited for
                passive[content_of(r.text)] += 1
            sent.append(content)

        async def talk(seconds: float, first: int) -> int:
            n = first
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                await asyncio.gather(*(say(n + k, retry=(n + k) % 7 == 0) for k in range(RATE)))
                n += RATE
                await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - (deadline - seconds)) % 1.0))
            return n

        n = await talk(3, 0)
        server.stop()
        n = await talk(OUTAGE_S, n)
        server.start()
        n = await talk(3, n)
        await replay_spool_and_deliver(app)
        async with app.state.sessions() as session:  # past a user's 5 custom messages: with their next reply
            waiting = Counter(str(r.payload["text"]) for r in (await session.scalars(
                select(OutboundMessageRow).where(OutboundMessageRow.channel == "inapp",
                                                 OutboundMessageRow.status == "pending"))).all())
    pushed = Counter(str(c.body["text"]["content"]) for c in api.calls_to("message/custom/send")
                     if c.answer.get("errcode") == 0)
    answered = passive + pushed + waiting
    handled = Counter(m.content for m in handler.seen)
    spooled = passive[SPOOLED]
    print(f"\noutage: {len(sent)} messages, {spooled} answered {SPOOLED!r} while the database was down, "
          f"{sum(pushed.values())} answers pushed after the replay, {sum(waiting.values())} in the in-app queue "
          f"(each user's window holds 5 custom messages)")
    assert spooled >= OUTAGE_S * RATE * 0.8  # the outage really was one
    assert handled == Counter(dict.fromkeys(sent, 1))  # every message handled, none twice
    assert {content: answered[f"答：{content}"] for content in sent} == dict.fromkeys(sent, 1)  # answered once
    assert not Spool(tmp_path / "spool").pending()


async def test_a_spool_left_by_a_dead_process_is_adopted_and_replayed_in_order(tmp_path: Path) -> None:
    dead, alive = Spool(tmp_path), Spool(tmp_path)
    for n in range(3):
        await dead.append({"n": n})
    seen: list[int] = []

    async def handle(record: dict[str, object]) -> None:
        seen.append(int(str(record["n"])))

    assert await alive.replay(handle) == 0  # the first process still holds its file
    dead.close()  # it died
    assert await alive.replay(handle) == 3 and seen == [0, 1, 2]
    assert not alive.pending()


async def test_a_failed_replay_keeps_the_spool(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    for n in range(3):
        await spool.append({"n": n})
    calls: list[int] = []

    async def down(record: dict[str, object]) -> None:
        calls.append(int(str(record["n"])))
        if len(calls) == 2:
            raise ConnectionRefusedError("database down again")

    with pytest.raises(ConnectionRefusedError):
        await spool.replay(down)
    await spool.append({"n": 3})  # arrives meanwhile: a file of its own

    async def up(record: dict[str, object]) -> None:
        calls.append(int(str(record["n"])))

    assert await spool.replay(up) == 4
    assert calls == [0, 1, 0, 1, 2, 3]  # started over (dedupe drops what was handled), then the newer file
    assert not spool.pending()
    spool.close()
