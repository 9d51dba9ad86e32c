"""Delivery bench: `schedbot worker` processes push a burst of due reminders (or 07:00 digests) to the
fake WeChat API on loopback.

    .venv/bin/python bench/delivery_bench.py [--backend sqlite|mariadb|both] [--workers 1,2,4]
        [--reminders 2000] [--digests 10000] [--courses 0] [--latency 0.01]

Seeds users with an open customer-service window and N reminders (or digest subscriptions, or series several
times a day — half every 2 hours in a window, half twice-a-day courses with an end — whose first reminder
comes due, so each firing also plans the series' next dose) all due at one instant a few seconds ahead,
starts the workers (warmed on a small burst first, not measured: their start-up is no cost per message),
waits until every push is sent, then prints reminders/s (first due → last sent), worker CPU ms per delivered
message (from /proc, all worker processes), due→sent p50/p99/max, worker RSS peak, and the number of sends
the fake API saw.
BENCH_PROFILE_DIR=dir writes a cProfile of every worker there; BENCH_PYSPY=dir records each worker with
py-spy (`pip install py-spy`: a sampling profiler that sees through asyncio) as a speedscope file there.
"API calls" counts every request the fake API saw during the run, by endpoint, per delivered message
(token fetches and typing included): what the worker's POSTs per reminder are made of.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, insert, select, text  # noqa: E402

from bench.machine import speed_line  # noqa: E402
from fakes.wechat import FakeWeChatAPI  # noqa: E402
from schedule.db import create_engine  # noqa: E402
from schedule.migrate import upgrade  # noqa: E402
from schedule.model import (  # noqa: E402
    DigestSubscriptionRow,
    OutboundMessageRow,
    ReminderRow,
    ScheduleItemRow,
    UserRow,
)

MARIADB = os.environ.get("SCHEDBOT_BENCH_MARIADB_URL", "mysql+aiomysql://root@127.0.0.1:3306")
LEAD_S = 8.0  # the burst is seeded this far ahead of its due instant, once the workers are warm
# The workers first send a burst this small (imports, connections, compiled statements: a few seconds of CPU on
# a busy machine, once): CPU is measured only from just before the real burst is due, so none of it is counted.
WARM = 64
TICK = os.sysconf("SC_CLK_TCK")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def seed(url: str, kind: str, count: int, due_ms: int, *, per_user: int = 1, spread_ms: int = 0,
               first: int = 0) -> None:
    """Users with an open window (5 sends), `per_user` reminders each titled bench{i}, due over `spread_ms`.
    `first`: the first reminder's number (a later round on the same database; a multiple of `per_user`)."""
    engine = create_engine(url)
    try:
        await upgrade(engine)
        now = _now_ms()
        async with engine.begin() as conn:
            users = range(first // per_user, first // per_user + -(-count // per_user))
            for start in range(users.start, users.stop, 1000):
                await conn.execute(insert(UserRow), [
                    {"id": u + 1, "wechat_openid": f"oBench{u}", "timezone": "Asia/Shanghai", "subscribed": True,
                     "window_kind": "message", "window_opened_at": now, "window_sent_count": 0,
                     "last_user_message_at": now, "created_at": now}
                    for u in range(start, min(start + 1000, users.stop))])
            for start in range(first, first + count, 1000):
                n = range(start, min(start + 1000, first + count))
                if kind == "course":  # 每隔两小时… / 每天两次…吃两周: a series several a day, due at its first dose
                    wall = time.gmtime(due_ms // 1000 + 8 * 3600)  # Asia/Shanghai: the dose's local hour, minute
                    h, m = wall.tm_hour, wall.tm_min
                    window = ",".join(str(x) for x in sorted({h, (h + 2) % 24, (h + 4) % 24, (h + 6) % 24}))
                    rules = {0: f"FREQ=DAILY;BYHOUR={window};BYMINUTE={m}",
                             1: f"FREQ=DAILY;BYHOUR={','.join(map(str, sorted({h, (h + 12) % 24})))};BYMINUTE={m};"
                                "UNTIL=20991231T235959"}
                    await conn.execute(insert(ScheduleItemRow), [
                        {"id": i + 1, "user_id": i // per_user + 1, "kind": "task", "title": f"bench{i}",
                         "status": "active", "due_at": due_ms, "timezone": "Asia/Shanghai", "rrule": rules[i % 2],
                         "all_day": False, "source_channel": "wechat", "created_at": now, "updated_at": now}
                        for i in n])
                    await conn.execute(insert(ReminderRow), [
                        {"user_id": i // per_user + 1, "item_id": i + 1, "remind_at": due_ms, "offset_minutes": 0,
                         "channel": "wechat", "status": "pending", "attempts": 0, "next_attempt_at": due_ms,
                         "created_at": now, "updated_at": now} for i in n])
                elif kind == "reminder":
                    at = {i: due_ms + (i - first) * spread_ms // count for i in n}
                    await conn.execute(insert(ScheduleItemRow), [
                        {"id": i + 1, "user_id": i // per_user + 1, "kind": "event", "title": f"bench{i}",
                         "status": "active", "start_at": at[i] + 3_600_000, "timezone": "Asia/Shanghai",
                         "all_day": False, "source_channel": "api", "created_at": now, "updated_at": now} for i in n])
                    await conn.execute(insert(ReminderRow), [
                        {"user_id": i // per_user + 1, "item_id": i + 1, "remind_at": at[i], "offset_minutes": 60,
                         "channel": "wechat", "status": "pending", "attempts": 0, "next_attempt_at": at[i],
                         "created_at": now, "updated_at": now} for i in n])
                else:
                    await conn.execute(insert(DigestSubscriptionRow), [
                        {"user_id": i + 1, "kind": "todo_day", "local_time": "07:00", "timezone": "Asia/Shanghai",
                         "channel": "wechat", "status": "active", "next_run_at": due_ms, "created_at": now,
                         "updated_at": now} for i in n])
    finally:
        await engine.dispose()


async def progress(url: str) -> tuple[int, list[int]]:
    """(rows sent, their sent instants) — updated_at of a sent outbox row is its receipt commit."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            stamps = (await conn.scalars(select(OutboundMessageRow.updated_at)
                                         .where(OutboundMessageRow.status == "sent"))).all()
            total = await conn.scalar(select(func.count()).select_from(OutboundMessageRow)) or 0
        return int(total), list(stamps)
    finally:
        await engine.dispose()


async def admin_sql(statement: str) -> None:
    admin = create_engine(MARIADB + "/")
    try:
        async with admin.begin() as conn:
            await conn.execute(text(statement))
    finally:
        await admin.dispose()


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[int], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] / 1000 if values else float("nan")


def run(backend: str, workers: int, kind: str, count: int, latency: float) -> dict[str, object]:
    name = f"schedbot_bench_{uuid.uuid4().hex[:8]}"
    tmp = tempfile.mkdtemp(prefix="schedbot-bench-")
    url = f"sqlite+aiosqlite:///{tmp}/bench.db" if backend == "sqlite" else f"{MARIADB}/{name}"
    if backend == "mariadb":
        asyncio.run(admin_sql(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
    api = FakeWeChatAPI(app_id="wxbench", app_secret="benchsecret").start()
    for endpoint in ("message/custom/send", "message/template/send"):
        api.set_latency(endpoint, latency)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        asyncio.run(seed(url, kind, WARM, _now_ms() + 1000))  # a small burst first: see WARM
        env = {**os.environ, "DATABASE_URL": url, "DATABASE_AUTO_MIGRATE": "false", "WECHAT_APP_ID": "wxbench",
               "WECHAT_APP_SECRET": "benchsecret", "WECHAT_API_BASE": api.base_url, "H5_WECHAT_MP_ENABLED": "true"}
        profile = os.environ.get("BENCH_PROFILE_DIR")  # cProfile each worker (written on SIGTERM)
        command = os.environ.get("BENCH_WORKER", f"{sys.executable} -m bot.cli.main worker").split()  # or instrumented
        if os.environ.get("BENCH_COUNT"):  # statements counted in each worker, written at its exit
            command = [sys.executable, str(ROOT / "bench" / "counted_worker.py")]
            env["BENCH_COUNTS_FILE"] = f"{tmp}/counts{{}}.json"
        if profile:
            command = [sys.executable, "-m", "cProfile", "-o", f"{profile}/{backend}-{kind}-{{}}.prof", "-m",
                       "bot.cli.main", "worker"]
        procs = [subprocess.Popen([c.format(i) for c in command],
                                  env={**{k: v.format(i) for k, v in env.items()}, "PYTHONPATH": str(ROOT)}, cwd=tmp,
                                  stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/worker{i}.log", "wb"))  # noqa: SIM115
                 for i in range(workers)]
        warmed = time.monotonic() + 120
        while len(asyncio.run(progress(url))[1]) < WARM and time.monotonic() < warmed:
            time.sleep(0.2)
        due = _now_ms() + int(LEAD_S * 1000)
        asyncio.run(seed(url, kind, count, due, first=WARM))
        if _now_ms() > due - 500:
            print(f"  warning: seeding took longer than {LEAD_S} s; the burst was due before measuring began")
        time.sleep(max(0.0, (due - _now_ms()) / 1000 - 0.5))
        spies = _spy(procs, backend, kind)
        calls0 = len(api.calls)
        cpu0 = sum(cpu_s(p.pid) for p in procs)
        rss = 0.0
        deadline = time.monotonic() + 600
        stamps: list[int] = []
        while time.monotonic() < deadline:
            time.sleep(0.5)
            rss = max(rss, *(rss_mb(p.pid) for p in procs))
            stamps = [s for s in asyncio.run(progress(url))[1] if s >= due]  # the warm-up's were sent before
            if len(stamps) >= count:
                break
        cpu = sum(cpu_s(p.pid) for p in procs) - cpu0
        by_endpoint = Counter(c.endpoint for c in list(api.calls)[calls0:])  # a copy: the fake appends meanwhile
        for spy in spies:
            spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
            spy.wait(timeout=60)
        lat = sorted(s - due for s in stamps)
        span = (max(stamps) - due) / 1000 if stamps else float("nan")
        return {"backend": backend, "workers": workers, "kind": kind, "n": count, "sent": len(stamps),
                "per_s": len(stamps) / span if span else 0.0, "cpu_ms": cpu * 1000 / max(1, len(stamps)),
                "p50": pct(lat, 0.5), "p99": pct(lat, 0.99), "max": span, "rss": rss,
                "api_sends": len(api.calls_to("message/custom/send")),
                "per_msg": {e: n / max(1, len(stamps)) for e, n in sorted(by_endpoint.items())}}
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=15)
        _print_counts(tmp, len(procs), count + WARM)
        api.stop()
        if backend == "mariadb":
            asyncio.run(admin_sql(f"DROP DATABASE IF EXISTS `{name}`"))


def _print_counts(tmp: str, workers: int, messages: int) -> None:
    """BENCH_COUNT=1: the workers' statements and commits per message (start-up and warm-up included)."""
    files = [Path(f"{tmp}/counts{i}.json") for i in range(workers)]
    counts = [json.loads(f.read_text()) for f in files if f.exists()]
    if not counts:
        return
    shapes: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    for c in counts:
        for shape, (n, r) in c["shapes"].items():
            shapes[shape] += n
            rows[shape] += r
    print(f"  statements {sum(c['statements'] for c in counts) / messages:.3f}, commits "
          f"{sum(c['commits'] for c in counts) / messages:.3f} per message; by shape (per 1000 messages: "
          "statements, rows):", flush=True)
    for shape, n in shapes.most_common():
        print(f"    {n * 1000 / messages:7.1f} {rows[shape] * 1000 / messages:8.0f}  {shape}", flush=True)


def _spy(procs: list[subprocess.Popen[bytes]], backend: str, kind: str) -> list[subprocess.Popen[bytes]]:
    """py-spy recorders attached to the workers (BENCH_PYSPY=dir), started just before the burst is due."""
    folder = os.environ.get("BENCH_PYSPY")
    if not folder:
        return []
    binary = os.environ.get("BENCH_PYSPY_BIN", "py-spy")
    return [subprocess.Popen([binary, "record", "--pid", str(p.pid), "--rate", "100", "--nonblocking", "--format",
                              "speedscope", "-o", f"{folder}/{backend}-{kind}-{i}.json"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for i, p in enumerate(procs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="both", choices=("sqlite", "mariadb", "both"))
    parser.add_argument("--workers", default="1,2,4", help="worker process counts on MariaDB (SQLite: 1)")
    parser.add_argument("--reminders", type=int, default=2000)
    parser.add_argument("--digests", type=int, default=10000, help="0 skips the 07:00 digest burst")
    parser.add_argument("--courses", type=int, default=0,
                        help="series several a day (intervals and courses) whose dose is due at once; 0 skips")
    parser.add_argument("--latency", type=float, default=0.01, help="fake WeChat API seconds per send")
    args = parser.parse_args()
    backends = ("sqlite", "mariadb") if args.backend == "both" else (args.backend,)
    plan: list[tuple[str, int, str, int]] = []
    for backend in backends:
        counts = [1] if backend == "sqlite" else [int(w) for w in args.workers.split(",")]
        plan += [(backend, w, "reminder", args.reminders) for w in counts] if args.reminders else []
        if args.courses:
            plan.append((backend, 1 if backend == "sqlite" else max(counts), "course", args.courses))
        if args.digests:
            plan.append((backend, 1 if backend == "sqlite" else max(counts), "digest", args.digests))
    print(speed_line())
    print(f"fake WeChat latency {args.latency * 1000:.0f} ms per send; times in s from the due instant")
    print(f"{'backend':8} {'workers':>7} {'burst':>14} {'sent':>6} {'msg/s':>7} {'CPU ms/msg':>10} "
          f"{'p50':>6} {'p99':>6} {'max':>6} {'RSS MB':>6} {'API sends':>9}")
    for backend, workers, kind, count in plan:
        r = run(backend, workers, kind, count, args.latency)
        print(f"{r['backend']:8} {r['workers']:>7} {f'{count} {kind}s':>14} {r['sent']:>6} {r['per_s']:>7.0f} "
              f"{r['cpu_ms']:>10.2f} {r['p50']:>6.2f} {r['p99']:>6.2f} {r['max']:>6.2f} {r['rss']:>6.0f} "
              f"{r['api_sends']:>9}", flush=True)
        calls = r["per_msg"]
        assert isinstance(calls, dict)
        print("  API calls per message: " + ", ".join(f"{e} {n:.3f}" for e, n in calls.items()), flush=True)


if __name__ == "__main__":
    main()
