"""Real `schedbot worker` processes on MariaDB against the fake WeChat API: several workers send each
reminder exactly once, and `kill -9`s of random workers lose nothing and push nothing off the
customer-service rung (duplicates only for rows replayed after `unknown`, at most the 64 sends a killed
worker may hold without a committed receipt: "a crash replays little")."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from bench.delivery_bench import seed
from fakes.wechat import FakeWeChatAPI
from schedule.db import create_engine
from schedule.model import OutboundMessageRow, ReminderRow

ROOT = Path(__file__).resolve().parents[2]
MAX_UNRECEIPTED = 64  # a crash replays little: sends a worker may hold that went out without a committed receipt
TITLE = re.compile(r"bench\d+")
pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(300)]


def start_worker(database_url: str, api: FakeWeChatAPI, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": database_url, "DATABASE_AUTO_MIGRATE": "false",
           "WECHAT_APP_ID": api.app_id, "WECHAT_APP_SECRET": api.app_secret, "WECHAT_API_BASE": api.base_url,
           "H5_WECHAT_MP_ENABLED": "true"}
    with log.open("ab") as err:
        return subprocess.Popen([sys.executable, "-m", "bot.cli.main", "worker"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)


async def outcome(database_url: str) -> tuple[Counter[str], Counter[str], set[int]]:
    """(reminder statuses, outbox (status, channel) pairs, outbox row ids that went through unknown)."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as conn:
            reminders = Counter((await conn.scalars(select(ReminderRow.status))).all())
            rows = (await conn.execute(select(OutboundMessageRow.id, OutboundMessageRow.status,
                                              OutboundMessageRow.channel, OutboundMessageRow.failure_class,
                                              OutboundMessageRow.reminder_id))).all()
    finally:
        await engine.dispose()
    return (reminders, Counter(f"{r.status}/{r.channel}" for r in rows),
            {r.reminder_id for r in rows if r.failure_class == "unknown"})


async def lateness_s(database_url: str) -> list[float]:
    """Every sent reminder's due→sent delay in seconds, sorted (printed, not asserted: machines are noisy)."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as conn:
            rows = (await conn.execute(select(ReminderRow.remind_at, ReminderRow.sent_at)
                                       .where(ReminderRow.sent_at.is_not(None)))).all()
    finally:
        await engine.dispose()
    return sorted((r.sent_at - r.remind_at) / 1000 for r in rows)


def sent_titles(api: FakeWeChatAPI) -> Counter[str]:
    titles: Counter[str] = Counter()
    for call in api.calls_to("message/custom/send"):
        if call.answer.get("errcode") == 0:
            titles.update(TITLE.findall(str(call.body.get("text", {}).get("content", ""))))
    return titles


async def wait_until_sent(database_url: str, count: int, timeout_s: float) -> Counter[str]:
    deadline = time.monotonic() + timeout_s
    while True:
        reminders, _, _ = await outcome(database_url)
        if reminders["sent"] >= count or time.monotonic() > deadline:
            return reminders
        await asyncio.sleep(0.5)


async def test_four_worker_processes_send_each_reminder_exactly_once(database_url: str, tmp_path: Path) -> None:
    if not database_url.startswith("mysql"):
        pytest.skip("several worker processes share one MariaDB (SQLite runs one worker)")
    count = 2000
    async with FakeWeChatAPI(app_id="wxbench", app_secret="benchsecret") as api:
        api.set_latency("message/custom/send", 0.01)
        await seed(database_url, "reminder", count, time.time_ns() // 1_000_000 + 3000)
        workers = [start_worker(database_url, api, tmp_path / f"w{n}.log") for n in range(4)]
        try:
            reminders = await wait_until_sent(database_url, count, 240)
        finally:
            for w in workers:
                w.send_signal(signal.SIGTERM)
            for w in workers:
                w.wait(timeout=20)
        titles = sent_titles(api)
    assert reminders == Counter({"sent": count})
    assert titles == Counter({f"bench{i}": 1 for i in range(count)})


async def test_kill_9_chaos_loses_nothing_and_replays_little(database_url: str, tmp_path: Path) -> None:
    """Rounds of 6,000 reminders (1,500 users × 4) due at once, the load of the crash-replay measurement, with a
    kill -9 every 0.3–0.7 s of a worker that has run ≥ 1 s, until ≥ 50 kills and the last round is sent."""
    if not database_url.startswith("mysql"):
        pytest.skip("several worker processes share one MariaDB (SQLite runs one worker)")
    per_round, count, kills, rand = 6000, 0, 0, random.Random(10)
    async with FakeWeChatAPI(app_id="wxbench", app_secret="benchsecret") as api:
        api.set_latency("message/custom/send", 0.01)
        workers: list[tuple[subprocess.Popen[bytes], float]] = []
        try:
            while kills < 50:
                await seed(database_url, "reminder", per_round, time.time_ns() // 1_000_000 + 1000, per_user=4,
                           first=count)
                count += per_round
                if not workers:
                    workers = [(start_worker(database_url, api, tmp_path / f"w{n}.log"), time.monotonic())
                               for n in range(4)]
                deadline = time.monotonic() + 180
                while (await outcome(database_url))[0]["sent"] < count and time.monotonic() < deadline:
                    await asyncio.sleep(rand.uniform(0.3, 0.7))
                    ripe = [n for n, (_, started) in enumerate(workers) if time.monotonic() - started >= 1.0]
                    if ripe and kills < 50:
                        n = rand.choice(ripe)
                        workers[n][0].kill()  # SIGKILL: no cleanup at all
                        workers[n][0].wait()
                        kills += 1
                        workers[n] = (start_worker(database_url, api, tmp_path / f"w{n}.log"), time.monotonic())
        finally:
            for w, _ in workers:
                w.send_signal(signal.SIGTERM)
            for w, _ in workers:
                w.wait(timeout=20)
        titles = sent_titles(api)
    reminders, rows, replayed = await outcome(database_url)
    lost = count - reminders["sent"]
    extra = sum(c - 1 for c in titles.values() if c > 1)
    duplicates = {t for t, c in titles.items() if c > 1}
    late = await lateness_s(database_url)
    print(f"\nchaos: {count} reminders, {kills} kills, {lost} lost, {extra} extra sends "
          f"({extra / kills:.1f} per kill, bound {MAX_UNRECEIPTED}), {len(duplicates)} reminders sent more than once, {len(replayed)} rows replayed; "
          f"due→sent p50 {late[len(late) // 2]:.2f} s, p99 {late[int(len(late) * 0.99)]:.2f} s, max {late[-1]:.2f} s")
    assert lost == 0
    assert reminders == Counter({"sent": count})
    assert rows == Counter({"sent/wechat": count})  # 0 pushed off the customer-service rung by the window
    assert set(titles) == {f"bench{i}" for i in range(count)}
    assert {int(t.removeprefix("bench")) + 1 for t in duplicates} <= replayed  # only rows that went through unknown
    # A kill replays at most the sends it held without a committed receipt.
    assert extra / kills <= MAX_UNRECEIPTED
