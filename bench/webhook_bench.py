"""Webhook load bench: the real app under uvicorn (subprocess) fed signed plaintext messages at fixed rates.

    .venv/bin/python bench/webhook_bench.py [--seconds 30] [--backend sqlite|mariadb|both] [--rates 100,300]

Open-loop load (latency measured from each request's scheduled send time), ~10 % of requests are
WeChat-style retries of an earlier MsgId; reports p50/p99, errors, throughput and duplicate handler runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.testing import sign_request, text_message  # noqa: E402
from schedule.clock import SystemClock  # noqa: E402

TOKEN, APP_ID = "benchtoken", "wxbench0000000000"
MARIADB = os.environ.get("SCHEDBOT_BENCH_MARIADB_URL", "mysql+aiomysql://root@127.0.0.1:3306")
TEXTS = ["明天下午三点开会", "这周有什么安排", "周五前交材料", "每天早上7点给我发当天待办", "你好", "取消明天的会议"]


# --- server side (runs in the subprocess) --------------------------------------------------------

def build_app() -> Any:
    """App factory for uvicorn workers: create_app + the /wechat router, handler runs logged to a file."""
    from bot.app import create_app
    from bot.handler import IntentEchoHandler
    from bot.settings import Settings
    from bot.webhook import build_wechat_router
    from bot.wechat.messages import InboundMessage

    settings = Settings(_env_file=None, DATABASE_URL=os.environ["BENCH_DATABASE_URL"],  # type: ignore[call-arg]
                        WECHAT_APP_ID=APP_ID, WECHAT_APP_SECRET="s", WECHAT_TOKEN=TOKEN,
                        WECHAT_API_BASE="http://127.0.0.1:9", H5_REMINDER_WORKER_ENABLED=False,
                        DATABASE_AUTO_MIGRATE=False)  # migrated once by the bench, not by each worker
    if os.environ.get("BENCH_SWITCH_INTERVAL"):  # GIL hand-off to aiosqlite's threads under load
        sys.setswitchinterval(float(os.environ["BENCH_SWITCH_INTERVAL"]))
    clock = SystemClock()
    inner = IntentEchoHandler(clock)
    try:  # load the parser's dictionaries now, not on some worker's first measured request
        import intent

        intent.parse("明天下午三点开会", now=clock.now(), tz="Asia/Shanghai")
    except Exception:
        pass
    runs = os.open(os.environ["BENCH_RUNS_FILE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    async def handler(message: InboundMessage) -> str | None:
        os.write(runs, (message.dedupe_key + "\n").encode())  # one atomic append per handler run
        return await inner(message)

    app = create_app(settings, clock=clock, handler=handler)
    if not any(getattr(r, "path", "") == "/wechat" for r in app.routes):  # until create_app mounts it
        app.include_router(build_wechat_router(settings=settings, sessions=app.state.sessions, clock=clock,
                                               handler=handler, client=None, users=app.state.service))
    return app


def serve(port: int, workers: int) -> None:
    import uvicorn

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    uvicorn.run("webhook_bench:build_app", factory=True, host="127.0.0.1", port=port, workers=workers,
                log_level="warning", access_log=False)


# --- load side ------------------------------------------------------------------------------------

class RawHTTP:
    """A tiny keep-alive HTTP/1.1 client (asyncio streams): cheap enough not to steal the server's CPU."""

    def __init__(self, port: int, size: int) -> None:
        self.port, self.size = port, size
        self.idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
        self.opened = 0

    async def post(self, target: str, body: bytes) -> int:
        if self.idle.empty() and self.opened < self.size:
            self.opened += 1
            conn = await asyncio.open_connection("127.0.0.1", self.port)
        else:
            conn = await self.idle.get()
        reader, writer = conn
        writer.write(f"POST {target} HTTP/1.1\r\nHost: bench\r\nContent-Type: text/xml\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
        self.idle.put_nowait(conn)
        return status

    def close(self) -> None:
        while not self.idle.empty():
            self.idle.get_nowait()[1].close()


async def load(port: int, rate: int, seconds: float, prefix: str) -> dict[str, Any]:
    clock, rng = SystemClock(), random.Random(rate)
    total = int(rate * seconds)
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    sent_ids: list[str] = []
    client = RawHTTP(port, size=256)
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.2

    async def one(i: int) -> None:
        scheduled = start + i / rate
        await asyncio.sleep(max(0.0, scheduled - loop.time()))
        if sent_ids and rng.random() < 0.1:
            msg_id = rng.choice(sent_ids[-50:])  # a WeChat retry of a recent message
        else:
            msg_id = f"{prefix}{i}"
            sent_ids.append(msg_id)
        now_s = int(clock.now().timestamp())
        body = text_message(f"o-bench-{i % 200}", rng.choice(TEXTS), msg_id=msg_id, create_time=now_s)
        query = urlencode(sign_request(TOKEN, timestamp=now_s, nonce=uuid.uuid4().hex[:10]))
        try:
            status = await asyncio.wait_for(client.post(f"/wechat?{query}", body.encode()), 10)
            if status != 200:
                errors[f"http {status}"] += 1
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            errors[type(exc).__name__] += 1
        latencies.append(loop.time() - scheduled)

    await asyncio.gather(*(one(i) for i in range(total)))
    elapsed = loop.time() - start
    client.close()
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {"requests": total, "p50": pct(0.50), "p99": pct(0.99), "max": latencies[-1] * 1000,
            "errors": sum(errors.values()), "error_kinds": dict(errors), "throughput": total / elapsed}


async def _wait_ready(port: int) -> None:
    for _ in range(300):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
            if b" 200 " in (await reader.read(200)):
                writer.close()
                return
            writer.close()
        except OSError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError("bench server did not start")


async def _mariadb(sql: str) -> None:
    from sqlalchemy import text

    from schedule.db import create_engine

    admin = create_engine(MARIADB + "/")
    async with admin.begin() as conn:
        await conn.execute(text(sql))
    await admin.dispose()


async def run_backend(backend: str, rates: list[int], seconds: float, port: int, workers: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="schedbot-bench-"))
    db_name = f"schedbot_bench_{uuid.uuid4().hex[:8]}"
    if backend == "mariadb":
        await _mariadb(f"CREATE DATABASE `{db_name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    url = f"{MARIADB}/{db_name}" if backend == "mariadb" else f"sqlite+aiosqlite:///{tmp}/bench.db"
    from schedule.migrate import upgrade_url

    await asyncio.to_thread(upgrade_url, url)
    runs_file = tmp / "handler_runs.txt"
    env = {**os.environ, "BENCH_DATABASE_URL": url, "BENCH_RUNS_FILE": str(runs_file)}
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "--serve", "--port", str(port),
                                                "--workers", str(workers), env=env)
    try:
        await _wait_ready(port)
        await load(port, 100, 2, prefix=f"warm{backend}")  # loads the dictionaries, creates the 200 users
        for rate in rates:
            before = runs_file.read_text().splitlines() if runs_file.exists() else []
            result = await load(port, rate, seconds, prefix=f"{backend[0]}{rate}x")
            await asyncio.sleep(0.5)
            runs = runs_file.read_text().splitlines()[len(before):]
            result.update(handler_runs=len(runs), duplicates=len(runs) - len(set(runs)))
            print(_row({"backend": backend, "workers": workers, "rate": rate, **result}), flush=True)
            if result["error_kinds"]:
                print(f"  errors: {result['error_kinds']}", flush=True)
    finally:
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 15)
        if backend == "mariadb":
            await _mariadb(f"DROP DATABASE IF EXISTS `{db_name}`")


def _row(r: dict[str, Any]) -> str:
    return (f"| {r['backend']:7} | {r['workers']:7} | {r['rate']:4} | {r['requests']:6} | {r['p50']:7.1f} | "
            f"{r['p99']:7.1f} | {r['max']:7.1f} | {r['errors']:6} | {r['throughput']:7.1f} | "
            f"{r['handler_runs']:6} | {r['duplicates']:4} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--backend", choices=["sqlite", "mariadb", "both"], default="both")
    parser.add_argument("--rates", default="100,300")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.port, args.workers)
        return
    rates = [int(r) for r in args.rates.split(",")]
    backends = ["sqlite", "mariadb"] if args.backend == "both" else [args.backend]
    print(f"{os.cpu_count()} CPUs, {args.seconds:.0f} s per rate, ~10 % retried MsgIds, "
          "open-loop latency (from each request's scheduled send time) in ms")
    print("| backend | workers | rate | reqs   | p50 ms  | p99 ms  | max ms  | errors | req/s   | runs   | dups |")
    print("|---------|---------|------|--------|---------|---------|---------|--------|---------|--------|------|")
    for backend in backends:
        asyncio.run(run_backend(backend, rates, args.seconds, args.port, args.workers))


if __name__ == "__main__":
    main()
