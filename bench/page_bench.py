"""Itinerary page and calendar feed benchmark, measured through the app (database read, expansion, render, gzip).

A user with 1,000 items (20 daily series, one-off events and tasks over half a year back and ahead, most
with a reminder, the past tasks undone) served by `create_app` on a fresh database; the default private
page (the next 7 days, the overdue group folded) is fetched in-process (httpx ASGI transport, no network)
with `Accept-Encoding: gzip`, and so is the user's calendar feed: in full (identity and gzip, as a first
subscription or a client without validators) and as a re-poll with its validators (304, nothing rendered).
Targets: page < 30 ms server time (p50), HTML compressed; feed ≤ 50 ms warm, a 304 a few ms.
`--week-only` puts every item inside the week (a worst case).

Run: .venv/bin/python bench/page_bench.py [--rounds 50] [--database-url mysql+aiomysql://root@127.0.0.1:3306/db]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx
from asgi_lifespan import LifespanManager

from bot.settings import load_settings
from bot.web.app import create_app
from schedule.clock import to_ms
from schedule.domain import ItemChanges, ItemKind, NewItem, NewReminder, Recurrence
from schedule.testing import FrozenClock

TZ = "Asia/Shanghai"
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=ZoneInfo(TZ))
TITLES = ["项目评审会", "给妈妈打电话", "交季度报告", "带材料", "体检", "和供应商确认合同细节", "取快递", "健身"]
SERIES = 20  # daily series: 20 × 7 days = 140 entries; the rest are one-offs
CPU_MS: list[float] = []  # per `timed` call, in order


async def seed(app: object, entries: int, *, week_only: bool) -> int:
    """`entries` items: 20 daily series, the rest one-offs spread over half a year back and ahead (most past
    tasks left undone: overdue) — or, with `week_only`, every one-off inside the page's week (the worst case)."""
    service = app.state.service  # type: ignore[attr-defined]
    user = await service.get_or_create_user("bench")
    start = to_ms(NOW.replace(hour=0))
    span, first = (7 * 86_400_000, start) if week_only else (360 * 86_400_000, start - 180 * 86_400_000)
    for i in range(SERIES):
        at = start + (7 + i % 14) * 3_600_000
        await service.create_item(user.id, NewItem(
            kind="task", title=f"每天 {TITLES[i % len(TITLES)]} #{i}", timezone=TZ, due_at=at,
            recurrence=Recurrence(rrule="FREQ=DAILY"), reminders=(NewReminder(remind_at=at),)))
    ones = entries - SERIES
    for i in range(ones):
        at = first + (i * span) // ones
        kind: ItemKind = "event" if i % 2 else "task"
        reminders = (NewReminder(remind_at=at - 3_600_000, offset_minutes=60),) if i % 3 else ()
        await service.create_item(user.id, NewItem(
            kind=kind, title=f"{TITLES[i % len(TITLES)]} #{i}", timezone=TZ, start_at=at if kind == "event" else None,
            end_at=at + 3_600_000 if kind == "event" else None, due_at=at if kind == "task" else None,
            reminders=reminders))
    return int(user.id)


async def timed(client: httpx.AsyncClient, path: str, rounds: int, headers: dict[str, str],
                status: int = 200) -> tuple[float, float, bytes]:
    """p50 and p99 wall ms, and the last body; the process's CPU ms per request goes to CPU_MS (a contended
    machine stretches wall time, not CPU time)."""
    samples, body = [], b""
    cpu = time.process_time()
    for _ in range(rounds):
        t = time.perf_counter()
        response = await client.get(path, headers=headers)
        samples.append((time.perf_counter() - t) * 1000)
        assert response.status_code == status, response.status_code
        body = response.content
    CPU_MS.append((time.process_time() - cpu) * 1000 / rounds)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))], body


async def changed_feed(app: object, client: httpx.AsyncClient, path: str, user_id: int,
                       rounds: int) -> tuple[float, float, float]:
    """The first gzip poll after an item changed (the change itself is not timed): p50, p99, CPU ms."""
    service = app.state.service  # type: ignore[attr-defined]
    listed = await service.list_items(user_id, statuses=("active",), include_undated_tasks=True, as_stored=True)
    item = next(i for i in listed if i.recurrence is not None)  # in the feed whatever the date
    samples, cpu, seen = [], 0.0, set()
    for n in range(rounds):
        await service.update_item(user_id, item.id, ItemChanges(title=f"{item.title} v{n}"))
        t, c = time.perf_counter(), time.process_time()
        response = await client.get(path, headers={"Accept-Encoding": "gzip"})
        samples.append((time.perf_counter() - t) * 1000)
        cpu += (time.process_time() - c) * 1000
        assert response.status_code == 200, response.status_code
        assert response.headers["etag"] not in seen  # a new version each time
        seen.add(response.headers["etag"])
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))], cpu / rounds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--week-only", action="store_true", help="every entry inside the page's 7 days")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite+aiosqlite:///{tmp}/bench.db"
        settings = load_settings(DATABASE_URL=url, PUBLIC_BASE_URL="https://pages.example", H5_WECHAT_MP_ENABLED=False)
        app = create_app(settings, clock=FrozenClock(NOW.astimezone(UTC)), run_worker=False)
        async with LifespanManager(app, startup_timeout=120), httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                                          base_url="https://pages.example") as client:
            user_id = await seed(app, args.entries, week_only=args.week_only)
            page = urlsplit(await app.state.page_links.itinerary_url(user_id)).path
            feed = urlsplit(await app.state.page_links.feed_url(user_id)).path
            await client.get(page)  # templates compiled, statements prepared
            raw = (await client.get(page, headers={"Accept-Encoding": "identity"})).content
            p50, p99, _ = await timed(client, page, args.rounds, {"Accept-Encoding": "gzip"})
            zipped = await client.get(page, headers={"Accept-Encoding": "gzip"})
            count = raw.split(b'<main class="days">')[1].count(b'<li class="entry')
            overdue = raw.split(b"\xe5\xb7\xb2\xe8\xbf\x87\xe6\x9c\x9f ")[1].split(b" ")[0].decode()  # 已过期 N
            await client.get(feed)
            feed_rounds = max(5, args.rounds // 5)
            f50, f99, ics = await timed(client, feed, feed_rounds, {"Accept-Encoding": "identity"})
            z50, z99, _ = await timed(client, feed, feed_rounds, {"Accept-Encoding": "gzip"})
            async with client.stream("GET", feed, headers={"Accept-Encoding": "gzip"}) as answer:
                ics_gz = b"".join([chunk async for chunk in answer.aiter_raw()])
                etag = answer.headers.get("etag", "")
            n50, n99, none = await timed(client, feed, args.rounds, {"If-None-Match": etag, "Accept-Encoding": "gzip"},
                                         status=304)
            changed = await changed_feed(app, client, feed, user_id, feed_rounds)
    print(f"page of a user with {args.entries} items ({count} cards in 7 days, {overdue} overdue folded; "
          f"{url.split(':')[0]}): p50 {p50:.1f} ms  p99 {p99:.1f} ms (CPU {CPU_MS[0]:.1f} ms)  (target < 30 ms)")
    print(f"html: {len(raw) / 1024:.0f} KB raw, {int(zipped.headers['content-length']) / 1024:.0f} KB gzip "
          f"(content-encoding: {zipped.headers.get('content-encoding')})")
    print(f"feed, full: {len(ics) / 1024:.0f} KB raw p50 {f50:.1f} ms p99 {f99:.1f} ms (CPU {CPU_MS[1]:.1f} ms); "
          f"{len(ics_gz) / 1024:.0f} KB gzip p50 {z50:.1f} ms p99 {z99:.1f} ms (CPU {CPU_MS[2]:.1f} ms; the body "
          "of this version kept compressed)  (target ≤ 50 ms)")
    print(f"feed after a change (a new version: rendered and compressed): p50 {changed[0]:.1f} ms  "
          f"p99 {changed[1]:.1f} ms (CPU {changed[2]:.1f} ms)")
    print(f"feed, re-poll with its ETag: 304, {len(none)} bytes: p50 {n50:.2f} ms  p99 {n99:.2f} ms "
          f"(CPU {CPU_MS[3]:.2f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
