"""Noisy-neighbour bench: one real server (uvicorn over loopback), a victim who chats through the webhook and
opens their page, and an attacker who replays one attack at a time. For each attack it prints the victim's
p50/p99 without and with the attacker; the budget is a p99 rise of at most 100 ms.

Attacks are small classes in ATTACKS (seed once, then `hit` in a loop); add one for a new kind of abuse.
The server runs its delivery worker and scheduled-request runner in-process (as `schedbot serve` does), with
an LLM on loopback (FakeLLM, LLM_LATENCY_S per answer, LLM_PARALLEL at once); attacks that load the LLM also
time a second victim whose chat the rules do not understand, so the agent answers it.

Run: /work/main/.venv/bin/python bench/noisy_neighbour.py [--seconds 12] [--only NAME ...] [--mariadb]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import secrets
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlencode, urlsplit
from zoneinfo import ZoneInfo

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import speed_line  # noqa: E402
from fakes.llm import FakeLLM  # noqa: E402
from fakes.wechat import FakeWeChatAPI, sign_request, text_message  # noqa: E402

TOKEN, APP_ID, TZ = "benchtoken", "wxbench0000000000", "Asia/Shanghai"
MARIADB = os.environ.get("SCHEDBOT_BENCH_MARIADB_URL", "mysql+aiomysql://root@127.0.0.1:3306")
BUDGET_MS = 100.0  # the victim's p99 may rise by at most this much under any attack
VICTIM_TEXTS = ["明天下午三点开会", "看看明天行程", "后天上午十点去取护照", "这周有什么安排"]
RARE = "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO"  # 29 Feb on a Monday: valid, once in 28 years
PER_MINUTE = "FREQ=DAILY;BYHOUR=" + ",".join(map(str, range(24))) + ";BYMINUTE=" + ",".join(map(str, range(60)))
AGENT_TEXT = "给我讲个笑话"  # no rule reads it: the agent answers
LLM_LATENCY_S, LLM_PARALLEL = 3.0, 4  # a slow LLM that serves four answers at once


def _settings(url: str, port: int, wechat_api: str, llm: str, *, worker: bool) -> Any:
    from bot.settings import load_settings

    return load_settings(DATABASE_URL=url, PUBLIC_BASE_URL=f"http://127.0.0.1:{port}", WECHAT_APP_ID=APP_ID,
                         WECHAT_APP_SECRET="s", WECHAT_TOKEN=TOKEN, WECHAT_API_BASE=wechat_api,
                         SECRET_KEY=os.environ["BENCH_SECRET_KEY"], H5_REMINDER_WORKER_ENABLED=worker,
                         DATABASE_AUTO_MIGRATE=False, AGENT_BASE_URL=llm, AGENT_API_KEY="sk-bench",
                         AGENT_MODEL="bench-model", WECHAT_TEMPLATE_ID_REMINDER="bench-template")


def build_app() -> Any:
    """The server: create_app as `schedbot serve` builds it, on the real clock, its worker and request runner
    in-process."""
    from bot.web.app import create_app
    from schedule.clock import SystemClock

    return create_app(_settings(os.environ["BENCH_DATABASE_URL"], int(os.environ["BENCH_PORT"]),
                                os.environ["BENCH_WECHAT_API"], os.environ["BENCH_LLM"], worker=True),
                      clock=SystemClock())


@dataclass
class World:
    """What the attacks share: the seeding app (same database and keys as the server) and the HTTP client."""
    app: Any
    client: httpx.AsyncClient
    today: datetime
    llm: FakeLLM
    quiet_s: float
    seeded: dict[str, Any] = field(default_factory=dict)
    msg_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def user(self, name: str) -> tuple[int, str]:
        """(user id, API bearer token) of a bench user, created on first use."""
        user, token, _ = await self.app.state.service.issue_api_token(name)
        return int(user.id), token

    async def page(self, user_id: int, days: int) -> str:
        start = self.today
        url = await self.app.state.page_links.itinerary_url(user_id, start_ms=_ms(start),
                                                             end_ms=_ms(start + timedelta(days=days)), tz=TZ)
        return _path(url)

    async def chat(self, openid: str, text: str) -> httpx.Response:
        stamp, nonce = int(time.time()), uuid.uuid4().hex[:10]
        body = text_message(openid, text, msg_id=10**12 + next(self.msg_ids) * 1000 + random.randrange(1000),
                            create_time=stamp)
        return await self.client.post("/wechat?" + urlencode(sign_request(TOKEN, timestamp=stamp, nonce=nonce)),
                                      content=body.encode(), headers={"Content-Type": "text/xml"})

    async def series(self, user_id: int, count: int, rrule: str, first: datetime, title: str) -> None:
        from schedule.domain import NewItem, Recurrence

        service = self.app.state.service
        for i in range(count):
            await service.create_item(user_id, NewItem(kind="task", title=f"{title}{i}", timezone=TZ,
                                                       due_at=_ms(first), recurrence=Recurrence(rrule=rrule)))


class Attack:
    name = ""
    text = ""
    loud_s = 0.0  # the victim's time under attack, when longer than --seconds (pushes counted per minute)
    agent_victim = False  # also time a victim whom the agent answers

    def available(self) -> bool:
        return True

    async def seed(self, world: World) -> str:
        return ""

    async def hit(self, world: World) -> int:
        raise NotImplementedError

    async def report(self, world: World, loud_from: float) -> list[str]:
        """Lines on what the attack did (printed under its row); `loud_from`: when the attack began (epoch s)."""
        return []


class DailySeriesPage(Attack):
    name, text = "daily-page", "2,000 daily series, then their 92-day page"

    async def seed(self, world: World) -> str:
        if "daily" not in world.seeded:
            uid, token = await world.user("attacker-daily")
            await world.series(uid, 2000, "FREQ=DAILY", world.today.replace(hour=8), "每天喝水")
            world.seeded["daily"] = (uid, token, await world.page(uid, 92))
        return "2,000 series stored"

    async def hit(self, world: World) -> int:
        return (await world.client.get(world.seeded["daily"][2])).status_code


class SmallPageOverCentury(DailySeriesPage):
    name, text = "api-limit-5", "GET /items?limit=5 over 2000–2100 (the 2,000 daily series)"

    async def hit(self, world: World) -> int:
        _, token, _ = world.seeded["daily"]
        query = {"from": 946_684_800_000, "to": 4_102_444_799_999, "limit": 5}  # 2000-01-01Z to 2100-01-01Z
        return (await world.client.get("/api/schedule/items", params=query,
                                       headers={"Authorization": f"Bearer {token}"})).status_code


class ChatOverSeries(DailySeriesPage):
    name, text = "daily-chat", "the 2,000 daily series' owner asks in chat what the week holds"

    async def hit(self, world: World) -> int:
        return (await world.chat("attacker-daily", "这周有什么安排")).status_code


class RareRules(Attack):
    name, text = "rare-rules", "600 rules on 29 Feb when a Monday; an empty day listed, the public share link viewed"

    async def seed(self, world: World) -> str:
        uid, token = await world.user("attacker-rare")
        first = datetime(2016, 2, 1, 9, tzinfo=ZoneInfo(TZ))  # 2016-02-29 was a Monday; the next is in 2044
        await world.series(uid, 600, RARE, first, "闰日")
        share = _path(await world.app.state.page_links.share_url(uid))
        world.seeded["rare"] = (token, share, itertools.count())
        return "600 series stored"

    async def hit(self, world: World) -> int:
        token, share, turn = world.seeded["rare"]
        if next(turn) % 2:
            return (await world.client.get(share)).status_code
        day = world.today + timedelta(days=1)
        query = {"from": _ms(day), "to": _ms(day + timedelta(days=1))}
        return (await world.client.get("/api/schedule/items", params=query,
                                       headers={"Authorization": f"Bearer {token}"})).status_code


class PerMinuteRule(Attack):
    name, text = "1440-a-day", "BYHOUR=0..23;BYMINUTE=0..59 posted, then a 7-day page"

    async def seed(self, world: World) -> str:
        uid, token = await world.user("attacker-minute")
        body = {"kind": "task", "title": "每分钟", "due_at": _ms(world.today.replace(hour=8)),
                "recurrence": {"rrule": PER_MINUTE}}
        answer = await world.client.post("/api/schedule/items", json=body,
                                         headers={"Authorization": f"Bearer {token}"})
        world.seeded["minute"] = await world.page(uid, 7)
        return f"POST answered {answer.status_code}"

    async def hit(self, world: World) -> int:
        return (await world.client.get(world.seeded["minute"])).status_code


class NeverIn2099(Attack):
    name, text = "never-2099", "never-occurring rules starting in 2099, posted again and again"
    rules = ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=TU,WE",
             "FREQ=WEEKLY;BYDAY=MO;BYMONTH=2;BYMONTHDAY=29")

    async def seed(self, world: World) -> str:
        world.seeded["never"] = ((await world.user("attacker-never"))[1], itertools.count())
        return ""

    async def hit(self, world: World) -> int:
        token, turn = world.seeded["never"]
        body = {"kind": "task", "title": "永不", "due_at": _ms(datetime(2099, 3, 1, 9, tzinfo=ZoneInfo(TZ))),
                "recurrence": {"rrule": self.rules[next(turn) % len(self.rules)]}}
        return (await world.client.post("/api/schedule/items", json=body,
                                        headers={"Authorization": f"Bearer {token}"})).status_code


class NewWords(Attack):
    name, text = "new-words", "chat titles pouring new words into the tokenizer"

    async def hit(self, world: World) -> int:
        word = "".join(chr(random.randrange(0x4E00, 0x9FA5)) for _ in range(4))
        return (await world.chat("attacker-words", f"明天上午九点提醒我{word}")).status_code


class ScheduledRequests(Attack):
    name, text = "sched-requests", "1,000 daily LLM requests of one user, 80 due in one minute, a 3 s LLM"
    agent_victim = True

    async def seed(self, world: World) -> str:
        from schedule import requests
        from schedule.db import in_transaction
        from schedule.domain import NewRequest, Recurrence

        owners = [(await world.user(name))[0] for name in self.owners()]
        start = time.time() + world.quiet_s + 1.0  # the burst begins as the attack does
        wanted = [int((start + i * 0.75) * 1000) for i in range(80)]  # 80 in one minute
        wanted += [int((start + 3600 + i * 82) * 1000) for i in range(920)]  # the rest later in the day
        now = int(time.time() * 1000)

        async def store(session: Any) -> None:
            for i, first_at in enumerate(wanted):  # straight into the store: the chat path stops at the quota
                await requests.add(session, owners[i % len(owners)], NewRequest(
                    text=f"每天帮我写一句鼓励的话{i}", title=f"鼓励{i}", first_at=first_at, timezone=TZ,
                    recurrence=Recurrence(rrule="FREQ=DAILY")), now_ms=now)

        await in_transaction(world.app.state.sessions, store)
        world.seeded[self.name] = _runs(world)  # the runs of an earlier attack are not this one's
        return self.note

    note = "(1,000 stored straight into the store, as if SCHEDULED_REQUESTS_PER_USER were its maximum)"

    def owners(self) -> list[str]:
        return ["attacker-requests"]

    async def hit(self, world: World) -> int:
        await asyncio.sleep(1.0)  # the attack is the runner's own work: the attacker only waits
        return 200

    async def report(self, world: World, loud_from: float) -> list[str]:
        runs = _runs(world) - world.seeded[self.name]
        return [f"scheduled runs sent to the LLM during the attack: {runs} (one at a time per user, "
                f"SCHEDULED_REQUEST_CONCURRENCY in all; the LLM serves {LLM_PARALLEL} at once, "
                f"{LLM_LATENCY_S:.0f} s each)"]


class ScheduledRequestsOfMany(ScheduledRequests):
    name, text = "sched-many", "50 users at the quota (20 daily LLM requests each), 80 due in one minute, a 3 s LLM"
    note = "(50 × 20)"

    def owners(self) -> list[str]:
        return [f"attacker-requests-{k}" for k in range(50)]


class SeriesPushes(Attack):
    name, text = "push-flood", "50 series of 24 pushes a minute apart (the densest allowed), all due now"
    loud_s = 150.0
    victim_reminders = 5

    async def seed(self, world: World) -> str:
        from schedule.domain import NewItem, NewReminder, Recurrence

        uid, _ = await world.user("attacker-push")
        await world.chat("attacker-push", "看看明天行程")  # an open customer-service window: pushes go out
        zone = ZoneInfo(TZ)
        begin = datetime.fromtimestamp(time.time() + world.quiet_s + 60, zone).replace(second=0, microsecond=0)
        # 24 minutes of one hour (wrapping past :59 to :00, so BYHOUR × BYMINUTE stays 24 a day), a minute apart
        minutes = sorted((begin.minute + i) % 60 for i in range(24))
        rule = f"FREQ=DAILY;BYHOUR={begin.hour};BYMINUTE=" + ",".join(map(str, minutes))
        service = world.app.state.service
        for i in range(50):
            await service.create_item(uid, NewItem(
                kind="task", title=f"刷屏{i}", timezone=TZ, due_at=_ms(begin), recurrence=Recurrence(rrule=rule),
                reminders=(NewReminder(remind_at=_ms(begin), offset_minutes=0),)))
        victim_id, _ = await world.user("victim")
        loud = time.time() + world.quiet_s
        due = [int((loud + 20 + 30 * i) * 1000) for i in range(self.victim_reminders)]
        for i, at in enumerate(due):
            await service.create_item(victim_id, NewItem(
                kind="task", title=f"受害者提醒{i}", timezone=TZ, due_at=at,
                reminders=(NewReminder(remind_at=at, offset_minutes=0),)))
        world.seeded["push"] = (uid, victim_id, _ms(begin), due)
        return f"(rule {rule[:40]}…, first push at {begin:%H:%M})"

    async def hit(self, world: World) -> int:
        await asyncio.sleep(1.0)  # the attack is the worker's own work: the attacker only waits
        return 200

    async def report(self, world: World, loud_from: float) -> list[str]:
        from sqlalchemy import select

        from schedule.db import in_transaction
        from schedule.model import OutboundMessageRow as O

        uid, victim_id, begin, due = world.seeded["push"]
        settings = world.app.state.settings

        async def rows(session: Any) -> list[Any]:
            return list((await session.execute(select(O.user_id, O.channel, O.status, O.updated_at, O.payload)
                                               .where(O.user_id.in_([uid, victim_id]), O.kind == "reminder"))).all())

        found = await in_transaction(world.app.state.sessions, rows)
        pushed = sorted(r.updated_at for r in found if r.user_id == uid and r.channel != "inapp"
                        and r.status == "sent")
        held = Counter(str(r.payload.get("held", "no channel")) for r in found
                       if r.user_id == uid and r.channel == "inapp")
        per_minute = [sum(begin + m * 60_000 <= at < begin + (m + 1) * 60_000 for at in pushed)
                      for m in range(max(1, (int(time.time() * 1000) - begin) // 60_000 + 1))]
        late = sorted((r.updated_at - r.payload.get("remind_at", 0)) / 1000 for r in found
                      if r.user_id == victim_id and r.status == "sent" and r.payload.get("remind_at") in due)
        return [f"attacker: {len(pushed)} pushed, in the in-app queue instead: {dict(held)}; pushed per minute "
                f"from the first due one: {per_minute} (budget: {settings.PUSH_DAILY_BUDGET_PER_USER} a day per "
                f"user, one per series per {settings.PUSH_SERIES_MIN_INTERVAL_MINUTES} min)",
                f"victim reminders: {len(late)} of {len(due)} sent, lateness s "
                + (f"p50 {late[len(late) // 2]:.2f}, max {late[-1]:.2f}" if late else "n/a")]


ATTACKS: list[Attack] = [DailySeriesPage(), SmallPageOverCentury(), ChatOverSeries(), RareRules(), PerMinuteRule(),
                         NeverIn2099(), NewWords(), ScheduledRequests(),
                         ScheduledRequestsOfMany(), SeriesPushes()]


@dataclass
class Samples:
    chat: list[float] = field(default_factory=list)
    page: list[float] = field(default_factory=list)
    agent: list[float] = field(default_factory=list)  # chat the agent answers (attacks that load the LLM)

    def line(self) -> str:
        text = f"chat {_p(self.chat, 0.5):6.0f}/{_p(self.chat, 0.99):6.0f}  page {_p(self.page, 0.5):6.0f}/" \
               f"{_p(self.page, 0.99):6.0f}"
        return text + (f"  agent {_p(self.agent, 0.5):5.0f}/{_p(self.agent, 0.99):5.0f}" if self.agent else "")

    def rise(self, quiet: Samples) -> float:
        """The largest p99 rise over the quiet run, chat and page (and the agent's answers, when timed)."""
        pairs = [(self.chat, quiet.chat), (self.page, quiet.page)] + ([(self.agent, quiet.agent)] if self.agent
                                                                        else [])
        return max(_p(loud, 0.99) - _p(calm, 0.99) for loud, calm in pairs)


async def victim(world: World, page: str, seconds: float, *, agent: bool = False) -> Samples:
    """The victim's session: a chat message, then their page, with a short pause between requests; with
    `agent`, beside it the same victim's questions only the agent answers, one after another."""
    samples, end, texts = Samples(), time.perf_counter() + seconds, itertools.cycle(VICTIM_TEXTS)
    asking = asyncio.create_task(_ask_agent(world, samples.agent, end)) if agent else None
    while time.perf_counter() < end:
        calls: tuple[tuple[list[float], Callable[[], Awaitable[httpx.Response]]], ...] = (
            (samples.chat, lambda: world.chat("victim", next(texts))), (samples.page, lambda: world.client.get(page)))
        for bucket, call in calls:
            started = time.perf_counter()
            answer = await call()
            bucket.append((time.perf_counter() - started) * 1000)
            assert answer.status_code == 200, answer.status_code
            await asyncio.sleep(0.05)
    if asking is not None:
        await asking
    return samples


async def _ask_agent(world: World, took: list[float], end: float) -> None:
    while time.perf_counter() < end:
        started = time.perf_counter()
        answer = await world.chat("victim-ai", AGENT_TEXT)
        took.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, answer.status_code


async def attacker(world: World, attack: Attack, stop: asyncio.Event, took: list[float], codes: set[int]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        codes.add(await attack.hit(world))
        took.append((time.perf_counter() - started) * 1000)


async def run(attacks: list[Attack], seconds: float, url: str, log: IO[bytes]) -> bool:
    from asgi_lifespan import LifespanManager

    from bot.web.app import create_app
    from schedule.clock import SystemClock
    from schedule.migrate import upgrade_url

    await asyncio.to_thread(upgrade_url, url)
    port = _free_port()
    wechat = FakeWeChatAPI(app_id=APP_ID, app_secret="s").start()
    llm = FakeLLM(api_key="sk-bench", latency_s=LLM_LATENCY_S, parallel=LLM_PARALLEL).start()
    env = {**os.environ, "BENCH_DATABASE_URL": url, "BENCH_PORT": str(port), "BENCH_WECHAT_API": wechat.base_url,
           "BENCH_LLM": llm.base_url}
    os.environ.update(env)
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "uvicorn", "noisy_neighbour:build_app", "--factory", "--host", "127.0.0.1",
        "--port", str(port), "--log-level", "warning", "--no-access-log", cwd=str(ROOT / "bench"),
        env={**env, "PYTHONPATH": f"{ROOT}:{ROOT / 'bench'}"}, stdout=log, stderr=asyncio.subprocess.STDOUT)
    seeding = create_app(_settings(url, port, wechat.base_url, llm.base_url, worker=False), clock=SystemClock(),
                         run_worker=False)
    ok = True
    try:
        async with LifespanManager(seeding), httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}",
                                                               timeout=600) as client:
            await _ready(client)
            world = World(seeding, client, datetime.now(ZoneInfo(TZ)).replace(hour=0, minute=0, second=0,
                                                                                microsecond=0), llm, seconds)
            victim_id, _ = await world.user("victim")
            page = await world.page(victim_id, 7)
            await victim(world, page, 2)  # warm: dictionaries, templates, statements
            print(f"victim p50/p99 ms, without → with the attacker (budget: p99 + {BUDGET_MS:.0f} ms)", flush=True)
            for attack in attacks:
                if not attack.available():
                    print(f"{attack.name:12} skipped: not in this code base", flush=True)
                    continue
                started = time.perf_counter()
                note = await attack.seed(world)
                seeded_s = time.perf_counter() - started
                quiet = await victim(world, page, seconds, agent=attack.agent_victim)
                stop, took, codes = asyncio.Event(), list[float](), set[int]()
                loud_from = time.time()
                noise = asyncio.create_task(attacker(world, attack, stop, took, codes))
                await asyncio.sleep(0.2)
                loud = await victim(world, page, max(seconds, attack.loud_s), agent=attack.agent_victim)
                stop.set()
                await noise  # the attacker's last request ends before the next baseline
                rise = loud.rise(quiet)
                ok = ok and rise <= BUDGET_MS
                print(f"{attack.name:12} {quiet.line()}  →  {loud.line()}  p99 {rise:+7.0f} ms "
                      f"{'ok' if rise <= BUDGET_MS else 'OVER BUDGET'}", flush=True)
                print(f"{'':12} {attack.text}; seeded in {seeded_s:.1f} s {note}; attacker: {len(took)} requests, "
                      f"p50 {_p(took, 0.5):.0f} ms, max {max(took, default=0):.0f} ms, status {sorted(codes)}",
                      flush=True)
                for line in await attack.report(world, loud_from):
                    print(f"{'':12} {line}", flush=True)
    finally:
        server.terminate()
        await asyncio.wait_for(server.wait(), 30)
        wechat.stop()
        llm.stop()
    return ok


def _runs(world: World) -> int:
    """Requests to the LLM made by scheduled runs (their prompt says 定时请求)."""
    return sum("定时请求" in str((r.get("messages") or [{}])[-1].get("content")) for r in world.llm.requests)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _ready(client: httpx.AsyncClient) -> None:
    for _ in range(300):
        try:
            if (await client.get("/healthz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError("bench server did not start")


async def _with_database(mariadb: bool, body: Callable[[str], Awaitable[bool]]) -> bool:
    if not mariadb:
        with tempfile.TemporaryDirectory(prefix="schedbot-noisy-") as tmp:
            return await body(f"sqlite+aiosqlite:///{tmp}/noisy.db")
    from sqlalchemy import text

    from schedule.db import create_engine

    name = f"schedbot_noisy_{uuid.uuid4().hex[:8]}"
    engine = create_engine(MARIADB)
    async with engine.begin() as conn:
        await conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"))
    try:
        return await body(f"{MARIADB}/{name}")
    finally:
        async with engine.begin() as conn:
            await conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
        await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=12.0, help="victim time without and with each attack")
    parser.add_argument("--only", nargs="*", default=[], help=f"attack names: {[a.name for a in ATTACKS]}")
    parser.add_argument("--mariadb", action="store_true", help="MariaDB (SCHEDBOT_BENCH_MARIADB_URL), not SQLite")
    args = parser.parse_args()
    os.environ.setdefault("BENCH_SECRET_KEY", secrets.token_urlsafe(48))
    chosen = [a for a in ATTACKS if not args.only or a.name in args.only]
    print(speed_line(), flush=True)
    log_path = Path(tempfile.mkstemp(prefix="schedbot-noisy-", suffix=".log")[1])
    with log_path.open("wb") as log:  # the server's own output (tracebacks under attack) stays out of the table
        ok = asyncio.run(_with_database(args.mariadb, lambda url: run(chosen, args.seconds, url, log)))
    lines = log_path.read_text(errors="replace").splitlines()
    print(f"server log: {len(lines)} lines in {log_path}" + (f"; last: {lines[-1][:160]}" if lines else ""))
    print("budget met" if ok else "budget NOT met", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
