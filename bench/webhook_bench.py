"""Webhook load bench: the real app under uvicorn (subprocess) fed signed plaintext messages at fixed rates.

    .venv/bin/python bench/webhook_bench.py [--seconds 30] [--backend sqlite|mariadb|both] [--rates 100,300]
                                            [--load schedule|echo] [--users 100] [--workers 1]

`--load schedule` (default): the conversation handler, each user walking a script of real requests that
write rows (creates with reminders, a clarification and its answer, queries, a cancel picked from a
numbered list, a completion, a digest subscription, two requests in one message); p50/p99 per step and
the rows written are reported too. `--load echo`: the parse-only echo handler on a few fixed sentences.
Open-loop load (latency measured from each request's scheduled send time), ~10 % of requests are
WeChat-style retries of an earlier MsgId; reports p50/p99, errors, throughput and duplicate handler runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
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

from bench.machine import speed_line  # noqa: E402
from fakes.wechat import FakeWeChatAPI, sign_request, text_message  # noqa: E402
from schedule.clock import SystemClock  # noqa: E402

TOKEN, APP_ID = "benchtoken", "wxbench0000000000"
MARIADB = os.environ.get("SCHEDBOT_BENCH_MARIADB_URL", "mysql+aiomysql://root@127.0.0.1:3306")
TEXTS = ["明天下午三点开会", "这周有什么安排", "周五前交材料", "每天早上7点给我发当天待办", "你好", "取消明天的会议"]
# One user's conversation, in order (step, text); each user loops over it.
SCRIPT = [
    ("create", "明天下午三点开会"),  # event 15:00 + reminder 14:00
    ("create", "明天上午九点提醒我带材料"),  # task + reminder 09:00
    ("clarify", "我明天要去开会，帮我记录增加一个提醒"),  # a question, a dialog_states row
    ("answer", "下午四点，提前半小时"),  # merged with the question: event 16:00 + reminder 15:30
    ("query", "看看明天行程"),
    ("cancel", "把明天的会取消"),  # two or more meetings tomorrow: a numbered list
    ("pick", "1"),  # … the first one is cancelled
    ("create", "后天晚上7点和王总吃饭，提前1小时提醒我"),
    ("query", "这周有什么安排"),
    ("complete", "带材料那个完成了"),
    ("digest", "每天早上7点给我发当天待办"),
    ("two", "明天上午9点提醒我交房租，下午3点提醒我取快递"),
]
NOT_SAVED = "没有保存任何内容"  # the handler's apology when its unit of work failed


# --- server side (runs in the subprocess) --------------------------------------------------------

def build_app() -> Any:
    """App factory for uvicorn workers: create_app with the handler of BENCH_LOAD, its runs logged to a file."""
    from bot.settings import Settings
    from bot.web.app import create_app

    settings = Settings(_env_file=None, DATABASE_URL=os.environ["BENCH_DATABASE_URL"],  # type: ignore[call-arg]
                        WECHAT_APP_ID=APP_ID, WECHAT_APP_SECRET="s", WECHAT_TOKEN=TOKEN,
                        WECHAT_API_BASE=os.environ.get("BENCH_WECHAT_API", "http://127.0.0.1:9"),
                        H5_REMINDER_WORKER_ENABLED=False,
                        DATABASE_AUTO_MIGRATE=False)  # migrated once by the bench, not by each worker
    if os.environ.get("BENCH_SWITCH_INTERVAL"):  # GIL hand-off to aiosqlite's threads under load
        sys.setswitchinterval(float(os.environ["BENCH_SWITCH_INTERVAL"]))
    clock = SystemClock()
    _load_dictionaries(clock)
    runs = os.open(os.environ["BENCH_RUNS_FILE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    handler = _Later(runs)  # the conversation handler needs the app's service: built right after the app
    app = create_app(settings, clock=clock, handler=handler)
    if os.environ.get("BENCH_LOAD", "schedule") == "echo":
        handler.inner = _IntentEcho(clock)
    else:
        handler.inner = _conversation(app, settings, clock)
    return app


class _Later:
    """The app's handler, delegating to one built once the app is (it needs the app's service); with `runs`, each
    message's turn appends its dedupe key there (one atomic write per handler run)."""

    def __init__(self, runs: int | None = None) -> None:
        self.inner: Any = None
        self._runs = runs

    def opening(self, user_id: int) -> Any:
        return self.inner.opening(user_id)

    async def turn(self, message: Any, unit: Any) -> Any:
        if self._runs is not None:
            os.write(self._runs, (message.dedupe_key + "\n").encode())
        return await self.inner.turn(message, unit)

    async def finish(self, turn: Any) -> Any:
        return await self.inner.finish(turn)


class _IntentEcho:
    """The `echo` load's handler: answers with the action `intent.parse` understood; no schedule writes."""

    def __init__(self, clock: SystemClock) -> None:
        from zoneinfo import ZoneInfo

        self._clock, self._tz = clock, ZoneInfo("Asia/Shanghai")

    def opening(self, user_id: int) -> None:
        return None

    async def turn(self, message: Any, unit: Any) -> Any:
        from bot.wechat.handler import Turn

        return Turn.answered(message, await self.answer(message))

    async def finish(self, turn: Any) -> Any:
        from bot.wechat.handler import APOLOGY

        return APOLOGY

    async def answer(self, message: Any) -> str | None:
        import intent
        from bot.wechat.handler import CAPABILITIES

        text = (message.content or "").strip()
        if not text:
            return CAPABILITIES
        parsed = intent.parse(text, now=self._clock.now().astimezone(self._tz), tz=self._tz)
        question = getattr(parsed, "question", None)
        if question:
            return str(question)
        action = str(getattr(parsed, "action", "none"))
        return CAPABILITIES if action == "none" else f"我理解为：{action}。"


def _conversation(app: Any, settings: Any, clock: SystemClock) -> Any:
    """The conversation handler as create_app builds its default (same service, agent and page links)."""
    from bot.conversation import ConversationHandler

    links = app.state.page_links if settings.H5_SCHEDULE_ENABLED else None
    return ConversationHandler(app.state.service, clock, agent=app.state.agent, links=links,
                               meeting_offset_minutes=settings.H5_REMINDER_DEFAULT_MEETING_OFFSET_MINUTES,
                               dialog_ttl_minutes=settings.H5_DIALOG_TTL_MINUTES)


def _load_dictionaries(clock: SystemClock) -> None:
    """Load the parser's and jieba's dictionaries now, not on some worker's first measured request."""
    import intent
    from intent import target

    intent.parse("明天下午三点开会", now=clock.now(), tz="Asia/Shanghai")
    target.warm_up()


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

    async def post(self, target: str, body: bytes) -> tuple[int, bytes]:
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
        answer = await reader.readexactly(length)
        self.idle.put_nowait(conn)
        return status, answer

    def close(self) -> None:
        while not self.idle.empty():
            self.idle.get_nowait()[1].close()


class Traffic:
    """Fresh messages in order: (openid, step, text). Schedule users walk SCRIPT; echo users send random TEXTS."""

    def __init__(self, mode: str, users: int) -> None:
        self.mode, self.users, self.sent = mode, users, 0
        self.rng = random.Random(7)

    def next(self) -> tuple[str, str, str]:
        n, self.sent = self.sent, self.sent + 1
        if self.mode == "echo":
            return f"o-bench-{n % 200}", "echo", self.rng.choice(TEXTS)
        step, text = SCRIPT[(n // self.users) % len(SCRIPT)]  # a user's next line comes users/rate s later
        return f"o-sched-{n % self.users}", step, text


async def load(port: int, rate: int, seconds: float, prefix: str, traffic: Traffic,
               retries: float = 0.1) -> dict[str, Any]:
    clock, rng = SystemClock(), random.Random(rate)
    total = int(rate * seconds)
    latencies: list[float] = []
    by_step: dict[str, list[float]] = {}
    errors: Counter[str] = Counter()
    sent: list[tuple[str, str, str]] = []  # (msg_id, step, body) of fresh messages
    client = RawHTTP(port, size=256)
    # This process's own full collections (its ~140,000 imported objects: 133 ms measured) would stall every
    # request in flight and be counted as the server's latency; freeze the heap so they skip it.
    gc.collect()
    gc.freeze()
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.2

    async def one(i: int) -> None:
        scheduled = start + i / rate
        await asyncio.sleep(max(0.0, scheduled - loop.time()))
        now_s = int(clock.now().timestamp())
        if sent and rng.random() < retries:
            msg_id, _, body = rng.choice(sent[-50:])  # a WeChat retry of a recent message: the same body
            step = "retry"
        else:
            msg_id = f"{prefix}{i}"
            openid, step, text = traffic.next()
            body = text_message(openid, text, msg_id=msg_id, create_time=now_s)
            sent.append((msg_id, step, body))
        query = urlencode(sign_request(TOKEN, timestamp=now_s, nonce=uuid.uuid4().hex[:10]))
        try:
            status, answer = await asyncio.wait_for(client.post(f"/wechat?{query}", body.encode()), 10)
            if status != 200:
                errors[f"http {status}"] += 1
            elif NOT_SAVED.encode() in answer:
                errors["not saved"] += 1
            elif answer in (b"success", b"") and step != "retry":
                errors["deferred to the outbox"] += 1
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            errors[type(exc).__name__] += 1
        latency = loop.time() - scheduled
        latencies.append(latency)
        by_step.setdefault(step, []).append(latency)

    await asyncio.gather(*(one(i) for i in range(total)))
    elapsed = loop.time() - start
    client.close()
    hard = sum(n for kind, n in errors.items() if kind != "deferred to the outbox")
    return {"requests": total, "p50": _pct(latencies, 0.50), "p99": _pct(latencies, 0.99),
            "max": max(latencies) * 1000, "errors": hard, "error_kinds": dict(errors), "throughput": total / elapsed,
            "steps": {step: (len(v), _pct(v, 0.50), _pct(v, 0.99)) for step, v in by_step.items()}}


async def _webhook_histogram(port: int) -> dict[float, float]:
    """The app's own `schedbot_webhook_seconds` buckets (le → count) from GET /metrics."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
    text = (await reader.read()).decode()
    writer.close()
    buckets = {}
    for line in text.splitlines():
        if line.startswith('schedbot_webhook_seconds_bucket{le="'):
            le, count = line[len('schedbot_webhook_seconds_bucket{le="'):].split('"} ')
            buckets[float(le)] = float(count)
    return buckets


def _app_p99(before: dict[float, float], after: dict[float, float]) -> float:
    """Upper bound (ms) of the bucket holding the app-side p99 of the requests between two scrapes."""
    total = after.get(float("inf"), 0.0) - before.get(float("inf"), 0.0)
    for le in sorted(after):
        if after[le] - before.get(le, 0.0) >= 0.99 * total:
            return le * 1000
    return float("inf")


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


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


ROW_COUNTS = {
    "items": "SELECT COUNT(*) FROM schedule_items",
    "cancelled": "SELECT COUNT(*) FROM schedule_items WHERE status = 'cancelled'",
    "completed": "SELECT COUNT(*) FROM schedule_items WHERE status = 'completed'",
    "reminders": "SELECT COUNT(*) FROM schedule_reminders",
    "dialogs": "SELECT COUNT(*) FROM dialog_states",
    "digests": "SELECT COUNT(*) FROM digest_subscriptions",
    "outbox": "SELECT COUNT(*) FROM outbound_messages",
}


def _steal_ticks() -> tuple[int, int]:
    """(steal, total) jiffies of the whole machine (/proc/stat): time the hypervisor gave to others."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU of the server and its worker processes (Linux /proc): robust on a busy machine."""
    parents: dict[int, int] = {}
    times: dict[int, tuple[float, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) / tick, int(fields[12]) / tick)
    family, grown = {pid}, True
    while grown:  # the uvicorn supervisor, its workers, and theirs
        grown = False
        for child, parent in parents.items():
            if parent in family and child not in family:
                family.add(child)
                grown = True
    return (sum(times.get(p, (0.0, 0.0))[0] for p in family), sum(times.get(p, (0.0, 0.0))[1] for p in family))


async def _rows(url: str) -> dict[str, int]:
    """Row counts read straight from the bench database: what the load really stored."""
    from sqlalchemy import text

    from schedule.db import create_engine

    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            return {name: int((await conn.execute(text(sql))).scalar_one()) for name, sql in ROW_COUNTS.items()}
    finally:
        await engine.dispose()


async def fresh_database(backend: str, prefix: str) -> tuple[str, Path, str]:
    """A new, migrated bench database: (its URL, a scratch folder, the MariaDB database's name to drop)."""
    from schedule.migrate import upgrade_url

    tmp = Path(tempfile.mkdtemp(prefix=f"schedbot-{prefix}-"))
    db_name = f"schedbot_{prefix}_{uuid.uuid4().hex[:8]}"
    if backend == "mariadb":
        await _mariadb(f"CREATE DATABASE `{db_name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    url = f"{MARIADB}/{db_name}" if backend == "mariadb" else f"sqlite+aiosqlite:///{tmp}/{prefix}.db"
    await asyncio.to_thread(upgrade_url, url)
    return url, tmp, db_name


async def run_backend(backend: str, rates: list[int], seconds: float, port: int, workers: int, mode: str,
                      users: int) -> None:
    url, tmp, db_name = await fresh_database(backend, "bench")
    runs_file = tmp / "handler_runs.txt"
    wechat = FakeWeChatAPI(app_id=APP_ID, app_secret="s").start()  # slow answers send Typing over real HTTP
    env = {**os.environ, "BENCH_DATABASE_URL": url, "BENCH_RUNS_FILE": str(runs_file), "BENCH_LOAD": mode,
           "BENCH_WECHAT_API": wechat.base_url}
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "--serve", "--port", str(port),
                                                "--workers", str(workers), env=env)
    traffic = Traffic(mode, users)
    try:
        await _wait_ready(port)
        # Loads the dictionaries and creates the users (schedule: each user's first line, a create).
        if mode == "schedule":
            await load(port, 25, users / 25, prefix=f"warm{backend}", traffic=traffic, retries=0)
        else:
            await load(port, 100, 2, prefix=f"warm{backend}", traffic=traffic)
        await asyncio.sleep(1)  # let a warm-up backlog drain before measuring
        for run, rate in enumerate(rates):
            before = runs_file.read_text().splitlines() if runs_file.exists() else []
            rows_before = await _rows(url) if mode == "schedule" else {}
            cpu_before, histogram_before = _cpu_seconds(proc.pid), await _webhook_histogram(port)
            steal_before = _steal_ticks()
            result = await load(port, rate, seconds, prefix=f"{backend[0]}{run}r{rate}x", traffic=traffic)
            await asyncio.sleep(0.5)
            runs = runs_file.read_text().splitlines()[len(before):]
            user, system = ((after - before) * 1000 / max(1, result["requests"])
                            for after, before in zip(_cpu_seconds(proc.pid), cpu_before, strict=True))
            cpu_ms = user + system
            app_p99 = _app_p99(histogram_before, await _webhook_histogram(port)) if workers == 1 else float("nan")
            steal, total = (after - before for after, before in zip(_steal_ticks(), steal_before, strict=True))
            result.update(handler_runs=len(runs), duplicates=len(runs) - len(set(runs)), cpu_ms=cpu_ms,
                          app_p99=app_p99, steal=100 * steal / max(1, total))
            print(_row({"backend": backend, "workers": workers, "rate": rate, **result}), flush=True)
            print(f"  cpu ms per request: {user:.2f} user + {system:.2f} system", flush=True)
            if result["error_kinds"]:
                print(f"  errors and slow answers: {result['error_kinds']}", flush=True)
            if mode == "schedule":
                steps = ", ".join(f"{step} {p50:.0f}/{p99:.0f}" for step, (_, p50, p99) in
                                  sorted(result["steps"].items(), key=lambda kv: -kv[1][0]))
                print(f"  p50/p99 ms by step: {steps}", flush=True)
                rows = await _rows(url)
                print("  rows written: " + ", ".join(f"{k} {rows[k] - rows_before[k]:+d}" for k in rows), flush=True)
    finally:
        wechat.stop()
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 15)
        if backend == "mariadb":
            await _mariadb(f"DROP DATABASE IF EXISTS `{db_name}`")


def _row(r: dict[str, Any]) -> str:
    return (f"| {r['backend']:7} | {r['workers']:7} | {r['rate']:4} | {r['requests']:6} | {r['p50']:7.1f} | "
            f"{r['p99']:7.1f} | {r['max']:7.1f} | {r['errors']:6} | {r['throughput']:7.1f} | "
            f"{r['handler_runs']:6} | {r['duplicates']:4} | {r['cpu_ms']:7.1f} | {r['app_p99']:9.0f} | "
            f"{r['steal']:6.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--backend", choices=["sqlite", "mariadb", "both"], default="both")
    parser.add_argument("--rates", help="requests/s, comma-separated (default: 100,300)")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--load", choices=["schedule", "echo"], default="schedule",
                        help="schedule: the conversation handler on a script that writes rows; echo: parse only")
    parser.add_argument("--users", type=int, default=100,
                        help="schedule users; each sends its next line users/rate seconds after the last")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.port, args.workers)
        return
    rates = [int(r) for r in (args.rates or "100,300").split(",")]
    backends = ["sqlite", "mariadb"] if args.backend == "both" else [args.backend]
    who = f"{args.users} users walking a {len(SCRIPT)}-line script" if args.load == "schedule" else "6 sentences"
    print(speed_line())
    print(f"{os.cpu_count()} CPUs, --load {args.load} ({who}), {args.seconds:.0f} s per rate, ~10 % retried "
          "MsgIds, open-loop latency (from each request's scheduled send time) in ms")
    print("server CPU per request in ms (the app's processes only; the database's and the load's are not in it);")
    print("app p99: the bucket bound of the app's own p99 (schedbot_webhook_seconds, request in → answer out;"
          " one worker only)")
    print("steal %: CPU time the hypervisor gave to other machines during the rate (/proc/stat); a row with"
          " more than a few % measured a contended machine")
    print("| backend | workers | rate | reqs   | p50 ms  | p99 ms  | max ms  | errors | req/s   | runs   | dups | "
          "cpu ms  | app p99 ≤ | steal% |")
    print("|---------|---------|------|--------|---------|---------|---------|--------|---------|--------|------|"
          "---------|-----------|--------|")
    for backend in backends:
        asyncio.run(run_backend(backend, rates, args.seconds, args.port, args.workers, args.load, args.users))


if __name__ == "__main__":
    main()
