"""CPU per conversation step, in process: the webhook bench's script sent one message at a time through the
real ASGI app (signature, XML, claim, conversation, commit), timed with the process's CPU clock.

    .venv/bin/python bench/step_cost.py [--backend sqlite|mariadb|both] [--users 100] [--loops 3] [--profile FILE]
                                        [--gap-ms 10] [--sql]

The webhook bench sends every user's same step within the same third of a second, so the tail of its
latency follows the dearest step's CPU; this prints that cost per step (ms, median and p90 over the last
loop, the users' items grown as in the bench). `--profile FILE` writes a cProfile of the last loop.

`--gap-ms N` idles N ms before each message, as a server does between requests at 1000/N a second. On this
kind of machine (a shared VM) the same work costs 2–4× the CPU after a few ms of idling or spinning than
back to back (caches refilled after the host's other tenants ran: `intent.parse` of one sentence measured
130 µs back to back, 300 µs after 1 ms, 560–630 µs after 10 ms), so the webhook bench's CPU per request at
100/s matches `--gap-ms 10`, not the back-to-back figure.

`--sql` prints, for the first user of the last loop, every statement each step sent (counted as
`bench/statements.py` counts them), so a change that should drop one can be checked by eye.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import speed_line  # noqa: E402
from bench.webhook_bench import (  # noqa: E402
    APP_ID,
    SCRIPT,
    TOKEN,
    _conversation,
    _Later,
    _load_dictionaries,
    _mariadb,
    fresh_database,
)
from fakes.wechat import sign_request, text_message  # noqa: E402
from schedule.clock import SystemClock  # noqa: E402


async def _call(app: Any, query: str, body: bytes) -> tuple[int, bytes]:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/wechat", "raw_path": b"/wechat", "query_string": query.encode(),
             "root_path": "", "headers": [(b"host", b"bench"), (b"content-type", b"text/xml"),
                                          (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    sent = False
    status, answer = 0, b""

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(3600)
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, answer
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            answer += message.get("body", b"")

    await app(scope, receive, send)
    return status, answer


async def run(backend: str, users: int, loops: int, profile: str | None, gap_s: float = 0.0,
              show_sql: bool = False) -> None:
    from asgi_lifespan import LifespanManager

    from bot.settings import Settings
    from bot.web.app import create_app

    url, _tmp, db_name = await fresh_database(backend, "steps")
    settings = Settings(_env_file=None, DATABASE_URL=url, WECHAT_APP_ID=APP_ID, WECHAT_APP_SECRET="s",  # type: ignore[call-arg]
                        WECHAT_TOKEN=TOKEN, WECHAT_API_BASE="http://127.0.0.1:9", H5_REMINDER_WORKER_ENABLED=False,
                        DATABASE_AUTO_MIGRATE=False)
    clock = SystemClock()
    _load_dictionaries(clock)
    handler = _Later()  # the conversation handler needs the app's service: built right after the app
    app = create_app(settings, clock=clock, handler=handler)
    handler.inner = _conversation(app, settings, clock)
    costs: dict[str, list[float]] = {}
    trips: dict[str, int] = {}
    current = [""]
    # Round trips of the bare transactions (claim, chat unit, finish): every statement of a `Tx` reaches
    # the database through its `_send`, one call per trip (our own class; counted from outside here).
    from schedule.fastsql import Tx

    send = Tx._send  # noqa: SLF001 — the bench counts our own trips

    async def counted(self: Any, *args: Any) -> Any:
        trips[current[0]] = trips.get(current[0], 0) + 1
        return await send(self, *args)

    Tx._send = counted  # type: ignore[method-assign]  # noqa: SLF001
    shown: list[tuple[str, str]] = []  # (step, statement) of user 0's last loop, with --sql
    if show_sql:
        from bench.statements import StatementCounter

        class _Shown(StatementCounter):
            def seen(self, sql: str) -> None:
                if current[0].startswith("0:"):
                    shown.append((current[0][2:], " ".join(sql.split())))

        _Shown().install()
    n = 0
    try:
        async with LifespanManager(app):
            for loop in range(loops):
                last = loop == loops - 1
                prof = cProfile.Profile() if (profile and last) else None
                for step, text in SCRIPT:
                    for u in range(users):
                        n += 1
                        now_s = int(clock.now().timestamp())
                        body = text_message(f"o-steps-{u}", text, msg_id=f"s{n}", create_time=now_s).encode()
                        query = urlencode(sign_request(TOKEN, timestamp=now_s, nonce=f"n{n}"))
                        if gap_s:
                            await asyncio.sleep(gap_s)
                        if prof:
                            prof.enable()
                        current[0] = (f"{u}:{step}" if show_sql else step) if last else ""
                        t0 = time.process_time()
                        status, answer = await _call(app, f"{query}", body)
                        spent = time.process_time() - t0
                        if prof:
                            prof.disable()
                        if status != 200 or not answer.startswith(b"<xml>"):
                            print(f"  {step}: HTTP {status} {answer[:80]!r}")
                        if last:
                            costs.setdefault(step, []).append(spent * 1000)
                if prof:
                    prof.dump_stats(profile)  # type: ignore[arg-type]
    finally:
        if backend == "mariadb":
            await _mariadb(f"DROP DATABASE IF EXISTS `{db_name}`")
    if show_sql:
        trips = {}  # keyed by user here: the figures below would be wrong
        for step, sql in shown:
            print(f"  {step:9} {sql[:160]}")
    print(f"{backend}: CPU ms per message by step, last of {loops} loops over {users} users (median / p90)"
          + (f", {gap_s * 1000:g} ms idle before each" if gap_s else "")
          + (", and round trips to the database per message" if trips else ""))
    everything = [c for v in costs.values() for c in v]
    for step, values in costs.items():
        values.sort()
        trip = f"   {trips.get(step, 0) / len(values):4.1f} trips" if trips else ""
        print(f"  {step:9} {values[len(values) // 2]:6.2f} / {values[int(len(values) * 0.9)]:6.2f}{trip}")
    everything.sort()
    trip = f"   {sum(trips.get(step, 0) for step in costs) / len(everything):4.1f} trips" if trips else ""
    print(f"  {'all':9} {sum(everything) / len(everything):6.2f} mean{trip}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "mariadb", "both"], default="both")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--loops", type=int, default=3)
    parser.add_argument("--profile", help="write a cProfile of the last loop to this file")
    parser.add_argument("--gap-ms", type=float, default=0.0,
                        help="idle this long before each message (a server's caches between requests)")
    parser.add_argument("--sql", action="store_true", help="print the statements of each step (first user)")
    args = parser.parse_args()
    print(speed_line())
    for backend in ["sqlite", "mariadb"] if args.backend == "both" else [args.backend]:
        profile = f"{args.profile}.{backend}" if args.profile else None
        asyncio.run(run(backend, args.users, args.loops, profile, args.gap_ms / 1000, args.sql))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
