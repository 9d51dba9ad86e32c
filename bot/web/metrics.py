"""GET /metrics (Prometheus text format) for `schedbot serve`, and the worker's own `--metrics-port` server.

Process metrics (webhook latency, messages handed to the agent, the worker's delivery counters) are
per process; the outbox figures are read from the database (at most every 5 s), so any process tells the
whole deployment's backlog. No metric carries a user's text or id. `schedbot serve` answers /metrics only
to the addresses of METRICS_ALLOW (`allowed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections.abc import Sequence

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import start_http_server as _start_http_server
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule.clock import Clock, now_ms
from schedule.metrics import OutboxSnapshot
from schedule.outage import OutageLog

log = logging.getLogger(__name__)
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
WEBHOOK_SECONDS = Histogram("schedbot_webhook_seconds", "Time to answer a WeChat webhook request",
                            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 5, 10))
AGENT_FALLBACKS = Counter("schedbot_parse_agent_fallbacks", "Messages the rule preflight handed to the agent")
REFRESH_S = 5.0  # the worker's metrics server: how often the outbox figures are re-read
CACHE_MS = 5_000  # `schedbot serve`: the database figures are this fresh (a flood of scrapes is one query)

__all__ = ["AGENT_FALLBACKS", "CONTENT_TYPE_LATEST", "WEBHOOK_SECONDS", "Metrics", "WorkerMetrics", "allowed",
           "metrics_router"]


class Metrics:
    """The /metrics body of one app: process metrics plus this app's outbox snapshot, whose database figures
    are read at most once every CACHE_MS however often (and however many at once) scrapes arrive."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._sessions, self._clock = sessions, clock
        self.snapshot = OutboxSnapshot()
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(self.snapshot)
        self._read_at: int | None = None
        self._reading = asyncio.Lock()
        self._outage = OutageLog(log, "metrics: reading the outbox figures", clock)

    async def render(self) -> bytes:
        async with self._reading:  # scrapes that arrive during a read share it
            now = now_ms(self._clock)
            if self._read_at is None or not 0 <= now - self._read_at < CACHE_MS:
                self._read_at = now
                await self._refresh(now)
        return generate_latest(REGISTRY) + generate_latest(self._registry)

    async def _refresh(self, now: int) -> None:
        try:
            await self.snapshot.refresh(self._sessions, now)
        except Exception as exc:  # the process metrics are still worth serving; the gauges keep their value
            self._outage.failed(exc)
        else:
            self._outage.recovered()


class WorkerMetrics(Metrics):
    """`schedbot worker --metrics-port N`: prometheus_client's HTTP server on a thread, gauges refreshed
    by a task on the worker's loop."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        super().__init__(sessions, clock)
        REGISTRY.register(self.snapshot)  # once per worker process
        self._task: asyncio.Task[None] | None = None

    def serve(self, host: str, port: int) -> None:
        _start_http_server(port, addr=host)
        self._task = asyncio.create_task(self._refresh_forever(), name="schedbot-metrics")
        log.info("worker metrics on http://%s:%d/metrics", host, port)

    async def _refresh_forever(self) -> None:
        while True:
            await self._refresh(now_ms(self._clock))
            await asyncio.sleep(REFRESH_S)

    async def aclose(self) -> None:
        """Stop refreshing and wait until the refresh has ended: a read still in flight on the database would
        otherwise be cut off by the engine's disposal and leave the process waiting for it at exit."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def metrics_router(metrics: Metrics, networks: Sequence[IPNetwork]) -> APIRouter:
    """`GET /metrics` of `schedbot serve`, for the addresses of `networks` only (404 to anyone else)."""
    router = APIRouter(tags=["ops"])

    @router.get("/metrics", response_class=Response)
    async def prometheus_metrics(request: Request) -> Response:
        """Prometheus text format: outbox backlog, delivery attempts and latency, webhook latency. Only for
        METRICS_ALLOW (the backlog is nobody else's business, and a scrape reads the database)."""
        if not allowed(request.client.host if request.client else None, request.headers.get("x-forwarded-for"),
                       networks):
            raise HTTPException(status_code=404)
        return Response(await metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return router


def allowed(peer: str | None, forwarded_for: str | None, networks: Sequence[IPNetwork]) -> bool:
    """Whether a scrape may read /metrics. Behind the local reverse proxy (the peer is loopback and says whom
    it forwards), the client is the address the proxy appended last to X-Forwarded-For (what a client sent
    in that header itself comes before it and is not believed)."""
    client = peer
    if forwarded_for and peer is not None and _is_loopback(peer):
        client = forwarded_for.rsplit(",", 1)[-1].strip()
    try:
        address = ipaddress.ip_address(client or "")
    except ValueError:
        return False
    return any(address in network for network in networks)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
