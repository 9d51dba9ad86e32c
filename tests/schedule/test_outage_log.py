"""A database outage is logged as one outage: one ERROR with the traceback when it starts, a short line at
most once a minute while it lasts, an INFO when it ends — not a traceback every poll. The worker is run
against MariaDB through a loopback proxy that the test cuts and restores."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy.engine import make_url

from bot.web.metrics import Metrics
from schedule.db import create_engine, session_factory
from schedule.domain import ScheduledRequest
from schedule.outage import OutageLog
from schedule.request_runner import RequestRunner
from schedule.testing import FrozenClock, RecordingChannel
from schedule.worker import DeliveryWorker


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.arrived = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.arrived.set()

    def of(self, level: int) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno == level]


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    loggers = [logging.getLogger(name) for name in ("schedule.worker", "schedule.request_runner", "bot.web.metrics",
                                                       "test.outage")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


def test_one_traceback_per_outage_a_line_a_minute_and_the_end(records: Records, clock: FrozenClock) -> None:
    outage = OutageLog(logging.getLogger("test.outage"), "delivery tick", clock)
    outage.recovered()  # nothing to end
    for _ in range(59):  # a poll a second for a minute
        outage.failed(ConnectionRefusedError("connection refused"))
        clock.advance(seconds=1)
    assert records.of(logging.ERROR) == ["delivery tick failed; retrying until it works (reported again at most "
                                         "once a minute)"]
    assert records.records[0].exc_info is not None and records.of(logging.WARNING) == []
    clock.advance(seconds=1)
    outage.failed(TimeoutError())
    assert records.of(logging.WARNING) == ["delivery tick still failing after 60 s (60 failures, last TimeoutError)"]
    outage.failed(TimeoutError())
    assert len(records.of(logging.WARNING)) == 1 and outage.failing
    clock.advance(seconds=5)
    outage.recovered()
    assert records.of(logging.INFO) == ["delivery tick works again after 65 s (61 failures)"]
    assert not outage.failing and sum(r.exc_info is not None for r in records.records) == 1
    outage.failed(ConnectionResetError())  # the next outage is a new one: its own traceback
    assert len(records.of(logging.ERROR)) == 2


class Proxy:
    """A loopback TCP proxy to the database; `cut()` drops every connection and answers new ones by closing
    them (counted in `refused`), `restore()` forwards again."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._up = True
        self._pipes: set[asyncio.StreamWriter] = set()
        self.refused = 0
        self.forwarded = 0
        self._changed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._up:
            self.refused += 1
            self._changed.set()
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self._target)
        self._pipes |= {writer, up_writer}
        if not self._up:  # cut while this connection was being opened
            self.cut()
        self.forwarded += 1
        self._changed.set()
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()
        self._pipes.discard(writer)

    def cut(self) -> None:
        self._up = False
        for writer in list(self._pipes):
            writer.transport.abort()

    def restore(self) -> None:
        self._up = True

    async def until(self, done: Callable[[], bool]) -> None:
        async with asyncio.timeout(30):
            while not done():
                self._changed.clear()
                await self._changed.wait()

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


@pytest.mark.mariadb
@pytest.mark.parametrize("database_url", ["mariadb"], indirect=True)
async def test_the_worker_logs_a_database_outage_once_not_every_poll(engine: object, database_url: str,
                                                                     clock: FrozenClock, records: Records) -> None:
    url = make_url(database_url)
    proxy = Proxy(url.host or "127.0.0.1", url.port or 3306)
    await proxy.start()
    proxied = create_engine(url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False),
                            pool_pre_ping=True)
    worker = DeliveryWorker(session_factory(proxied), clock, {"wechat": RecordingChannel()}, poll_interval_s=0.01)
    task = asyncio.create_task(worker.run())
    try:
        await proxy.until(lambda: proxy.forwarded >= 1)  # a tick went through
        proxy.cut()
        await proxy.until(lambda: proxy.refused >= 20)  # twenty polls in the outage
        clock.advance(seconds=61)
        seen = proxy.refused
        await proxy.until(lambda: proxy.refused >= seen + 2)
        proxy.restore()
        await asyncio.wait_for(_logged(records, logging.INFO), 30)
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
        await proxied.dispose()
        await proxy.stop()
    assert records.of(logging.ERROR) == ["delivery tick failed; retrying until it works (reported again at most "
                                         "once a minute)"]
    assert sum(r.exc_info is not None for r in records.records) == 1  # one traceback for ≥ 22 failed polls
    [still] = records.of(logging.WARNING)
    assert still.startswith("delivery tick still failing after 61 s (")
    assert records.of(logging.INFO)[-1].startswith("delivery tick works again after 61 s (")


async def _logged(records: Records, level: int) -> None:
    while not records.of(level):
        records.arrived.clear()
        await records.arrived.wait()


async def test_the_scheduled_requests_loop_logs_an_outage_once(clock: FrozenClock, records: Records) -> None:
    """A database that refuses every connection from the start (the proxy's target is never reached)."""
    proxy = Proxy("127.0.0.1", 9)
    await proxy.start()
    proxy.cut()
    dead = create_engine(f"mysql+aiomysql://root@127.0.0.1:{proxy.port}/schedbot")

    async def answer(request: ScheduledRequest, *, run_at: object) -> str:
        raise AssertionError("nothing can be claimed while the database is down")

    runner = RequestRunner(session_factory(dead), clock, answer,  # type: ignore[arg-type]
                           failed_text=lambda r, n: "failed", missed_text=lambda r: "missed", poll_interval_s=0.01)
    task = asyncio.create_task(runner.run())
    try:
        await proxy.until(lambda: proxy.refused >= 20)
    finally:
        runner.stop()
        await asyncio.wait_for(task, 30)
        await dead.dispose()
        await proxy.stop()
    assert records.of(logging.ERROR) == ["scheduled requests pass failed; retrying until it works (reported again "
                                         "at most once a minute)"]
    assert sum(r.exc_info is not None for r in records.records) == 1 and records.of(logging.WARNING) == []


async def test_metrics_scrapes_during_an_outage_log_it_once_then_once_a_minute(clock: FrozenClock,
                                                                               records: Records) -> None:
    proxy = Proxy("127.0.0.1", 9)
    await proxy.start()
    proxy.cut()
    dead = create_engine(f"mysql+aiomysql://root@127.0.0.1:{proxy.port}/schedbot")
    metrics = Metrics(session_factory(dead), clock)
    try:
        for _ in range(13):  # a scrape every 10 s for two minutes: each one tries the database
            assert b"schedbot_webhook_seconds" in await metrics.render()  # the process metrics still served
            clock.advance(seconds=10)
    finally:
        await dead.dispose()
        await proxy.stop()
    assert proxy.refused >= 13
    assert records.of(logging.ERROR) == ["metrics: reading the outbox figures failed; retrying until it works "
                                         "(reported again at most once a minute)"]
    assert [line.split(" (")[0] for line in records.of(logging.WARNING)] == [
        "metrics: reading the outbox figures still failing after 60 s",
        "metrics: reading the outbox figures still failing after 120 s"]
