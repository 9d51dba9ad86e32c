"""Delivery metrics in Prometheus form: what the worker counts as it goes (attempts, failures, due→sent
latency) and what the database says at scrape time (backlog, oldest due row, stale leases, pauses).

Counters and histograms live in prometheus_client's process-wide registry; the database figures come from
`OutboxSnapshot`, a collector refreshed by whoever serves /metrics (`schedbot serve` at scrape time, the
worker's `--metrics-port` server every few seconds).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import Table, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import pauses
from schedule.db import in_transaction
from schedule.model import OutboundMessageRow

OUTBOX = cast(Table, OutboundMessageRow.__table__)
BACKLOG = ("pending", "claimed", "sending", "unknown")

ATTEMPTS = Counter("schedbot_delivery_attempts", "Delivery attempts by channel and outcome (sent, failed)",
                   ["channel", "outcome"])
FAILURES = Counter("schedbot_delivery_failures", "Failed delivery attempts by channel and failure class",
                   ["channel", "failure"])
DUE_TO_SENT = Histogram("schedbot_delivery_due_to_sent_seconds",
                        "From a push's due instant (reminder time, or when it was queued) to its receipt commit",
                        buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600))
FELL_BACK = Counter("schedbot_delivery_fallbacks", "Pushes moved down the channel ladder, by the rung they left",
                    ["channel"])


class OutboxSnapshot(Collector):
    """Database gauges as of the last `refresh` (cheap queries over the outbox's unfinished rows)."""

    def __init__(self) -> None:
        self._backlog: dict[tuple[str, str], int] = {}
        self._oldest: dict[str, float] = {}
        self._stale = 0
        self._paused: dict[str, pauses.Pause] = {}
        self._now = 0

    async def refresh(self, sessions: async_sessionmaker[AsyncSession], now: int) -> None:
        async def read(session: AsyncSession) -> None:
            o = OUTBOX.c
            self._backlog = {(r.status, r.channel): int(r.n) for r in (await session.execute(
                select(o.status, o.channel, func.count().label("n")).where(o.status.in_(BACKLOG))
                .group_by(o.status, o.channel))).all()}
            self._oldest = {r.channel: max(0.0, (now - int(r.due)) / 1000) for r in (await session.execute(
                select(o.channel, func.min(o.next_attempt_at).label("due"))
                .where(o.status == "pending", o.next_attempt_at <= now).group_by(o.channel))).all()}
            self._stale = int(await session.scalar(select(func.count()).select_from(OUTBOX).where(or_(
                and_(o.status.in_(("claimed", "sending")), o.locked_until < now), o.status == "unknown"))) or 0)
            self._paused = await pauses.active(session, now)

        await in_transaction(sessions, read)
        self._now = now

    def collect(self) -> Iterator[Metric]:
        backlog = GaugeMetricFamily("schedbot_outbox_messages", "Unfinished outbox rows by status and channel",
                                    labels=["status", "channel"])
        for (status, channel), n in sorted(self._backlog.items()):
            backlog.add_metric([status, channel], n)
        yield backlog
        oldest = GaugeMetricFamily("schedbot_outbox_oldest_due_seconds",
                                   "How long the oldest due pending row of a channel has waited",
                                   labels=["channel"])
        for channel, seconds in sorted(self._oldest.items()):
            oldest.add_metric([channel], seconds)
        yield oldest
        yield GaugeMetricFamily("schedbot_outbox_stale_leases",
                                "Rows whose worker lease ran out (a dead worker) or whose send is unknown",
                                value=self._stale)
        paused = GaugeMetricFamily("schedbot_channel_paused_seconds",
                                   "Seconds left of a channel pause shared by every worker (45011/45009)",
                                   labels=["channel", "code"])
        for channel, pause in sorted(self._paused.items()):
            paused.add_metric([channel, pause.code or ""], max(0.0, (pause.until - self._now) / 1000))
        yield paused
