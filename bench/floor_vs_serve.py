"""Floor vs schedbot: the webhook's CPU per message as a multiple of the least code doing the same I/O.

    .venv/bin/python bench/floor_vs_serve.py [--backend sqlite|mariadb|both] [--rates 100] [--mariadb-rates 100,300]
                                             [--seconds 20] [--rounds 2]

Runs A B A B on one uvicorn each time: the floor (bench/floor_server.py: signature, XML, `intent.parse_all`,
one transaction writing the dedupe row, the user's window, the item and its reminder, the passive reply) and
the app `schedbot serve` runs with the conversation handler (the same app bench/webhook_bench.py measures),
each on a fresh database, fed the same signed messages at the same open-loop rate: every message a create with
a reminder, each user saying each of its sentences once, no retries. Per run: server CPU ms per message (the
uvicorn process, /proc), p50/p99 ms from each request's scheduled send time, statements and commits per
message counted in the server process (bench/statements.py), reminders written per message (read from the
database: both did the work). The summary gives medians over rounds and schedbot's CPU as a multiple of the
floor's. MariaDB: SCHEDBOT_BENCH_MARIADB_URL (default mysql+aiomysql://root@127.0.0.1:3306), a database
bench_floor_<random> per run, dropped after it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import speed_line  # noqa: E402
from bench.webhook_bench import (  # noqa: E402
    TOKEN,
    _cpu_seconds,
    _mariadb,
    _rows,
    _wait_ready,
    fresh_database,
    load,
)
from fakes.wechat import FakeWeChatAPI  # noqa: E402

# Every sentence a create with a reminder (the floor writes what `intent.parse_all` made of it).
TEXTS = ["明天下午三点开会", "明天晚上七点和王总吃饭，提前1小时提醒我", "下周一上午九点面试", "明天上午9点提醒我交房租",
         "后天上午十点看牙医，提前半小时提醒我", "周五下午四点交报告，提前一小时提醒我"]
SERVERS = ("floor", "schedbot")
DRAIN_S = 120.0


class Creates:
    """Fresh messages in order: user n says TEXTS[0], TEXTS[1], … once each (no user repeats a sentence)."""

    def __init__(self, tag: str) -> None:
        self.tag, self.sent = tag, 0

    def next(self) -> tuple[str, str, str]:
        n, self.sent = self.sent, self.sent + 1
        return f"o{self.tag}{n // len(TEXTS)}", "create", TEXTS[n % len(TEXTS)]


def serve_app() -> Any:
    """uvicorn factory for the schedbot side: bench/webhook_bench.py's app (create_app with the conversation
    handler, as `schedbot serve` builds it), its statements counted."""
    from bench.statements import StatementCounter, counts_app
    from bench.webhook_bench import build_app

    counter = StatementCounter()
    counter.install()
    return counts_app(build_app(), counter)


async def _counts(port: int) -> dict[str, int]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /bench/counts HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
    raw = await reader.read()
    writer.close()
    return dict(json.loads(raw.split(b"\r\n\r\n", 1)[1]))


async def one_run(server: str, backend: str, rate: int, seconds: float, port: int, tag: str) -> dict[str, Any]:
    url, tmp, db_name = await fresh_database(backend, "floor")
    wechat = FakeWeChatAPI(app_id="wxbench0000000000", app_secret="s").start()
    factory = "bench.floor_server:build_app" if server == "floor" else "bench.floor_vs_serve:serve_app"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCH_DATABASE_URL": url, "BENCH_TOKEN": TOKEN,
           "BENCH_RUNS_FILE": str(tmp / "runs.txt"), "BENCH_LOAD": "schedule", "BENCH_WECHAT_API": wechat.base_url}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "uvicorn", "--factory", factory, "--host", "127.0.0.1", "--port", str(port),
        "--log-level", "warning", "--no-access-log", cwd=str(ROOT), env=env)
    traffic = Creates(tag)  # MsgIds are digits (wechatpy reads them as ints), unique within the fresh database
    try:
        await _wait_ready(port)
        await load(port, 25, 2, prefix="100000", traffic=traffic, retries=0)  # warm: users exist, code paths ran
        await asyncio.sleep(1)
        rows, counts, cpu = await _rows(url), await _counts(port), _cpu_seconds(proc.pid)
        result = await load(port, rate, seconds, prefix="200000", traffic=traffic, retries=0)
        n = max(1, result["requests"])
        # A server that fell behind (a busy machine) still works through what it was sent: CPU, statements and
        # commits are read once every message's reminder is written (or after DRAIN_S), so they are per message
        # handled, whatever the latency was.
        for _ in range(int(DRAIN_S * 2)):
            if (await _rows(url))["reminders"] - rows["reminders"] >= n:
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(0.5)
        cpu_ms = sum(after - before for after, before in zip(_cpu_seconds(proc.pid), cpu, strict=True)) * 1000 / n
        counts_after, rows_after = await _counts(port), await _rows(url)
        return {"server": server, "backend": backend, "rate": rate, "requests": result["requests"],
                "cpu_ms": cpu_ms, "p50": result["p50"], "p99": result["p99"], "errors": result["error_kinds"],
                "statements": (counts_after["statements"] - counts["statements"]) / n,
                "commits": (counts_after["commits"] - counts["commits"]) / n,
                "reminders": (rows_after["reminders"] - rows["reminders"]) / n}
    finally:
        wechat.stop()
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 15)
        if backend == "mariadb":
            await _mariadb(f"DROP DATABASE IF EXISTS `{db_name}`")
        shutil.rmtree(tmp, ignore_errors=True)


def _line(r: dict[str, Any]) -> str:
    return (f"| {r['backend']:7} | {r['rate']:4} | {r['server']:8} | {r['requests']:5} | {r['cpu_ms']:6.2f} | "
            f"{r['p50']:6.1f} | {r['p99']:7.1f} | {r['statements']:5.1f} | {r['commits']:4.2f} | "
            f"{r['reminders']:4.2f} | {sum(r['errors'].values()):4} |" + (f" {r['errors']}" if r['errors'] else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "mariadb", "both"], default="both")
    parser.add_argument("--rates", default="100", help="requests/s on SQLite, comma-separated")
    parser.add_argument("--mariadb-rates", default="100,300", help="requests/s on MariaDB, comma-separated")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=2, help="A B rounds (floor, schedbot) per backend and rate")
    parser.add_argument("--port", type=int, default=8775)
    args = parser.parse_args()
    backends = ["sqlite", "mariadb"] if args.backend == "both" else [args.backend]
    print(speed_line())
    print(f"{os.cpu_count()} CPUs; {args.seconds:.0f} s per run, A B A B (floor, schedbot), every message a create "
          "with a reminder; cpu: server ms per message; p50/p99 ms open-loop; stmts and commits per message")
    print("| backend | rate | server   | reqs  | cpu ms | p50 ms | p99 ms  | stmts | cmts | rem  | errs |")
    print("|---------|------|----------|-------|--------|--------|---------|-------|------|------|------|")
    runs: list[dict[str, Any]] = []
    for backend in backends:
        rates = args.rates if backend == "sqlite" else args.mariadb_rates
        for rate in (int(r) for r in rates.split(",")):
            for round_ in range(args.rounds):
                for server in SERVERS:
                    tag = f"{backend[0]}{rate}{server[0]}{round_}x"
                    r = asyncio.run(one_run(server, backend, rate, args.seconds, args.port, tag))
                    runs.append(r)
                    print(_line(r), flush=True)
    print("\nmedians over rounds; multiple = schedbot / floor")
    for backend in backends:
        rates = args.rates if backend == "sqlite" else args.mariadb_rates
        for rate in (int(r) for r in rates.split(",")):
            med = {s: {k: statistics.median(r[k] for r in runs if r["server"] == s and r["backend"] == backend
                                            and r["rate"] == rate)
                       for k in ("cpu_ms", "p50", "p99", "statements", "commits")} for s in SERVERS}
            f, s = med["floor"], med["schedbot"]
            print(f"{backend} {rate}/s: CPU {s['cpu_ms']:.2f} vs {f['cpu_ms']:.2f} ms/msg = "
                  f"{s['cpu_ms'] / f['cpu_ms']:.2f}x the floor; p50 {s['p50']:.1f} vs {f['p50']:.1f} ms, "
                  f"p99 {s['p99']:.1f} vs {f['p99']:.1f} ms; statements {s['statements']:.1f} vs "
                  f"{f['statements']:.1f}, commits {s['commits']:.2f} vs {f['commits']:.2f} per message", flush=True)


if __name__ == "__main__":
    main()
