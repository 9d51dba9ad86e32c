"""WeChat's account-wide limits through the real client and the fake API: 45011 (frequency limit) and
45009 (daily quota) pause the channel for every worker, kept in the database (docs/delivery.md#pauses)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from zoneinfo import ZoneInfo

from fastapi import FastAPI
from sqlalchemy import select, text
from test_delivery import app_with, outbox_row, queue_text

from bot.wiring import delivery_worker, wechat_client
from fakes.wechat import FakeWeChatAPI
from schedule.clock import to_ms
from schedule.model import ChannelPauseRow
from schedule.testing import FrozenClock
from schedule.worker import DeliveryWorker

SH = ZoneInfo("Asia/Shanghai")


@asynccontextmanager
async def another_worker(app: FastAPI, clock: FrozenClock) -> AsyncIterator[DeliveryWorker]:
    """A second worker process as far as the database is concerned: its own client, memory and state."""
    client = wechat_client(app.state.settings, app.state.sessions, clock)
    assert client is not None
    try:
        yield delivery_worker(app.state.settings, app.state.sessions, clock, client)
    finally:
        await client.aclose()


async def stored_pauses(app: FastAPI) -> dict[str, tuple[int, bool, str | None]]:
    async with app.state.sessions() as session:
        rows = (await session.scalars(select(ChannelPauseRow))).all()
    return {r.channel: (r.paused_until, r.daily, r.code) for r in rows}


async def test_frequency_limit_pauses_custom_messages_for_every_worker(database_url: str,
                                                                       clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        first = await queue_text(app, clock, "o-a", "第一条")
        api.script("message/custom/send", 45011)
        await app.state.worker.run_once()
        assert (await outbox_row(app, first)).status == "pending"
        until, daily, code = (await stored_pauses(app))["wechat"]
        assert (until - to_ms(clock.now()), daily, code) == (60_000, False, "45011")

        later = [await queue_text(app, clock, f"o-{n}", f"第{n}条") for n in "bcd"]
        async with another_worker(app, clock) as other:  # a worker started after the limit: it reads the pause
            clock.advance(seconds=30)
            report = await other.run_once()
            await app.state.worker.run_once()
            assert report.claimed == 0
            assert len(api.calls_to("message/custom/send")) == 1  # nobody called WeChat during the pause
            assert {(await outbox_row(app, i)).status for i in later} == {"pending"}

            clock.advance(seconds=31)
            await other.run_once()
            await other.run_once()
        rows = [await outbox_row(app, i) for i in (first, *later)]
    assert [r.status for r in rows] == ["sent"] * 4
    assert len(api.calls_to("message/custom/send")) == 5  # the refused one, its retry, three new ones


async def test_daily_quota_sends_the_rest_down_the_ladder_until_beijing_midnight(database_url: str,
                                                                                 clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, WECHAT_TEMPLATE_ID_REMINDER="tpl-1") as app:
        first = await queue_text(app, clock, "o-a", "第一条", kind="reminder")
        api.script("message/custom/send", 45009)
        await app.state.worker.run_once()
        await app.state.worker.run_once()
        assert (await outbox_row(app, first)).channel == "template"  # not held until tomorrow
        until, daily, code = (await stored_pauses(app))["wechat"]
        assert datetime.fromtimestamp(until / 1000, SH) == datetime(2026, 6, 19, 0, 0, tzinfo=SH)
        assert (daily, code) == (True, "45009")

        second = await queue_text(app, clock, "o-b", "第二条", kind="reminder")
        async with another_worker(app, clock) as other:
            await other.run_once()
            await other.run_once()
            assert (await outbox_row(app, second)).channel == "template"
            assert len(api.calls_to("message/custom/send")) == 1  # the quota is gone: no more calls today

            clock.set(datetime(2026, 6, 19, 0, 1, tzinfo=SH))  # a new day in Beijing: the quota is back
            third = await queue_text(app, clock, "o-c", "第三条")
            await other.run_once()
        rows = [await outbox_row(app, i) for i in (first, second, third)]
    assert [(r.status, r.channel) for r in rows] == [("sent", "template"), ("sent", "template"), ("sent", "wechat")]
    assert len(api.calls_to("message/template/send")) == 2


async def test_a_pause_that_cannot_be_stored_still_holds_here_and_loses_no_receipt(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app:
        first, second = [await queue_text(app, clock, f"o-{n}", f"第{n}条") for n in "ab"]
        async with app.state.engine.begin() as conn:
            await conn.execute(text("DROP TABLE channel_pauses"))  # the database refuses the pause
        api.script("message/custom/send", 0, 45011)  # one send goes out, the other meets the limit
        report = await app.state.worker.run_once()
        third = await queue_text(app, clock, "o-c", "第三条")
        clock.advance(seconds=2)  # past the pause re-read: reading fails too, the worker keeps its own
        again = await app.state.worker.run_once()
        rows = [await outbox_row(app, i) for i in (first, second, third)]
    assert (report.sent, report.retried, again.claimed) == (1, 1, 0)
    assert sorted(r.status for r in rows[:2]) == ["pending", "sent"]  # the sends race: either may be refused
    assert rows[2].status == "pending"
    assert len(api.calls_to("message/custom/send")) == 2  # nothing more during the pause
