"""GET /metrics on `serve` and `schedbot worker --metrics-port`: Prometheus text the real parser reads,
figures that match the database and what the worker did."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_delivery import app_with, queue_text, user_who_wrote
from webhook_helpers import signed

from fakes.wechat import FakeWeChatAPI, text_message
from schedule import outbox
from schedule.clock import now_ms
from schedule.testing import FrozenClock
from tests.bot.test_cli import SCHEDBOT, free_port, run

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(body: str) -> Samples:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


async def scrape(client: httpx.AsyncClient) -> Samples:
    answer = await client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    return samples(answer.text)


async def test_metrics_show_backlog_attempts_latency_and_pauses(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        before = await scrape(client)
        sent = [await queue_text(app, clock, f"o-{n}", f"第{n}条") for n in range(3)]
        clock.advance(seconds=2)  # they were due two seconds ago
        await app.state.worker.run_once()
        user_id = await user_who_wrote(app, clock, "o-later")
        async with app.state.sessions.begin() as session:
            for n in range(2):  # due 5 s and 10 s ago when scraped: the backlog
                await outbox.enqueue(session, user_id=user_id, idempotency_key=f"later{n}", kind="notice",
                                     payload={"text": "稍后"}, now_ms=now_ms(clock) - 5_000 * n)
        api.script("message/custom/send", 45011)
        clock.advance(seconds=5)  # the database figures are read at most every 5 s
        after = await scrape(client)
        await app.state.worker.run_once()  # one send meets 45011: the channel pauses for every worker
        clock.advance(seconds=5)
        paused = await scrape(client)
    assert len(sent) == 3
    assert value(after, "schedbot_delivery_attempts_total", channel="wechat", outcome="sent") \
        - value(before, "schedbot_delivery_attempts_total", channel="wechat", outcome="sent") == 3
    assert value(after, "schedbot_delivery_due_to_sent_seconds_count") \
        - value(before, "schedbot_delivery_due_to_sent_seconds_count") == 3
    assert value(after, "schedbot_delivery_due_to_sent_seconds_bucket", le="1.0") \
        - value(before, "schedbot_delivery_due_to_sent_seconds_bucket", le="1.0") == 0  # 2 s late, not ≤ 1 s
    assert value(after, "schedbot_outbox_messages", status="pending", channel="wechat") == 2
    assert value(after, "schedbot_outbox_oldest_due_seconds", channel="wechat") == 10.0
    assert value(after, "schedbot_outbox_stale_leases") == 0
    assert value(paused, "schedbot_delivery_failures_total", channel="wechat", failure="rate_limit") \
        - value(before, "schedbot_delivery_failures_total", channel="wechat", failure="rate_limit") >= 1
    assert value(paused, "schedbot_channel_paused_seconds", channel="wechat", code="45011") == 55.0


async def test_webhook_latency_and_agent_fallbacks_are_counted(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        before = await scrape(client)
        for n, text in enumerate(("明天下午三点开会", "今天心情不错")):
            answer = await client.post("/wechat", params=signed(clock),
                                       content=text_message("o-chat", text, msg_id=700 + n, create_time=1))
            assert answer.status_code == 200
        after = await scrape(client)
    assert value(after, "schedbot_webhook_seconds_count") - value(before, "schedbot_webhook_seconds_count") == 2
    assert value(after, "schedbot_parse_agent_fallbacks_total") \
        - value(before, "schedbot_parse_agent_fallbacks_total") == 1  # the small talk, not the meeting


def test_worker_serves_its_metrics_on_the_given_port(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/schedbot.db"}
    worker = subprocess.Popen([SCHEDBOT, "worker", "--metrics-port", str(port)], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, body = time.monotonic() + 60, ""
        while not body:
            try:
                body = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=1).text
            except httpx.TransportError:
                if time.monotonic() > deadline or worker.poll() is not None:
                    pytest.fail("the worker's metrics server did not come up")
                time.sleep(0.1)
        found = samples(body)
    finally:
        worker.send_signal(signal.SIGTERM)
        output = worker.communicate(timeout=30)[0]
    assert worker.returncode == 0, output
    assert ("schedbot_outbox_stale_leases", ()) in found  # the database figures, read by the worker
    assert any(name == "schedbot_delivery_due_to_sent_seconds_count" for name, _ in found)


def test_worker_metrics_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = run(["worker", "--metrics-port", str(taken.getsockname()[1])], tmp_path)
    assert result.returncode == 2
    assert "cannot serve metrics" in result.stderr and "Traceback" not in result.stderr


async def test_a_flood_of_scrapes_reads_the_database_once_every_five_seconds(database_url: str,
                                                                              clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        first = await scrape(client)
        await queue_text(app, clock, "o-flood", "积压")
        clock.advance(seconds=4)
        flood = await asyncio.gather(*(scrape(client) for _ in range(20)))
        clock.advance(seconds=1)
        fresh = await scrape(client)
    backlog = [value(s, "schedbot_outbox_messages", status="pending", channel="wechat") for s in (first, *flood)]
    assert backlog == [0.0] * 21  # within 5 s: the figures of the first read, no query per scrape
    assert value(fresh, "schedbot_outbox_messages", status="pending", channel="wechat") == 1


@pytest.mark.parametrize(("peer", "forwarded", "allow", "served"), [
    ("127.0.0.1", None, "127.0.0.1/32,::1/128", True),  # Prometheus on the host, straight to schedbot
    ("127.0.0.1", "203.0.113.9", "127.0.0.1/32,::1/128", False),  # the public, through nginx's location /
    ("127.0.0.1", "127.0.0.1, 203.0.113.9", "127.0.0.1/32", False),  # a forged header does not help
    ("127.0.0.1", "10.1.2.3", "10.0.0.0/8", True),  # the monitoring network, through nginx
    ("203.0.113.9", "10.1.2.3", "10.0.0.0/8", False),  # only the local proxy's forwarding is believed
])
async def test_metrics_answer_only_the_addresses_the_operator_allows(
        database_url: str, clock: FrozenClock, peer: str, forwarded: str | None, allow: str, served: bool) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, METRICS_ALLOW=allow) as app, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(peer, 40000)),
                              base_url="http://t") as client:
        answer = await client.get("/metrics", headers={"X-Forwarded-For": forwarded} if forwarded else {})
    assert answer.status_code == (200 if served else 404)
    assert ("schedbot_outbox_messages" in answer.text) == served
