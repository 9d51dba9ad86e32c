"""Push budgets through the real scheduler and worker, the fake WeChat API and a frozen clock, on every backend:
a user's reminders past their daily budget, and a series' pushes closer than the minimum gap, wait in the
in-app queue (shown on the next reply, never dropped) while other users' pushes go on; the account's template
budget keeps reminders going after digests have stopped."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from bot.web.app import create_app
from fakes.wechat import FakeWeChatAPI
from schedule import outbox, window
from schedule.clock import now_ms
from schedule.domain import NewItem, NewReminder, Recurrence
from schedule.model import OutboundMessageRow
from schedule.testing import FrozenClock
from tests.bot.test_scheduled_requests import config, running, say

SH = ZoneInfo("Asia/Shanghai")


async def wrote(app: FastAPI, clock: FrozenClock, openid: str) -> int:
    """A user who just wrote: their customer-service window is open."""
    user = await app.state.service.get_or_create_user(openid)
    async with app.state.sessions.begin() as session:
        await window.record_message(session, user.id, now_ms(clock))
    return int(user.id)


async def reminder_now(app: FastAPI, clock: FrozenClock, user_id: int, title: str,
                       recurrence: Recurrence | None = None) -> None:
    start = now_ms(clock) + 60_000
    await app.state.service.create_item(user_id, NewItem(
        kind="event", title=title, timezone="Asia/Shanghai", start_at=start, recurrence=recurrence,
        reminders=(NewReminder(remind_at=start - 60_000, offset_minutes=1),)))


async def drain(app: FastAPI) -> None:
    for _ in range(4):  # fire, send, fall back a rung, send again
        await app.state.worker.run_once()


async def rows_of(app: FastAPI, user_id: int) -> list[OutboundMessageRow]:
    async with app.state.sessions() as session:
        return list((await session.scalars(select(OutboundMessageRow).where(OutboundMessageRow.user_id == user_id)
                                           .order_by(OutboundMessageRow.id))).all())


def sent_to(api: FakeWeChatAPI, openid: str, path: str = "message/custom/send") -> list[str]:
    return [str(c.body.get("text", {}).get("content") or c.body.get("data", {}).get("thing1", {}).get("value"))
            for c in api.calls_to(path) if c.body["touser"] == openid]


async def test_reminders_past_a_users_daily_budget_wait_in_the_inapp_queue_and_others_go_on(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, PUSH_DAILY_BUDGET_PER_USER=3), clock=clock, run_worker=False)
        async with running(app) as client:
            noisy, quiet = await wrote(app, clock, "o-noisy"), await wrote(app, clock, "o-quiet")
            for n in range(5):
                await reminder_now(app, clock, noisy, f"杂事{n}")
            await reminder_now(app, clock, quiet, "看牙")
            await drain(app)
            held = [r for r in await rows_of(app, noisy) if r.channel == "inapp"]
            assert [(r.status, r.payload["held"]) for r in held] == [("pending", "daily")] * 2
            reply = await say(client, clock, "明天有什么安排", openid="o-noisy")
            after = [r.status for r in await rows_of(app, noisy) if r.channel == "inapp"]
            clock.set(datetime(2026, 6, 19, 0, 5, tzinfo=SH))  # the next (Beijing) day: a fresh budget
            await reminder_now(app, clock, noisy, "新的一天")
            await drain(app)
    assert len(sent_to(api, "o-noisy")) == 4 and "新的一天" in sent_to(api, "o-noisy")[-1]
    assert len(sent_to(api, "o-quiet")) == 1
    assert reply.startswith("你有 2 条未送达的提醒")
    assert all(r.payload["title"] in reply for r in held)
    assert all("还有" not in r.payload["text"] for r in held)  # read later: the item's time, no countdown
    assert after == ["sent", "sent"]


async def test_a_series_pushes_at_most_once_per_minimum_gap(database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, PUSH_SERIES_MIN_INTERVAL_MINUTES=30), clock=clock,
                         run_worker=False)
        async with running(app):
            user = await wrote(app, clock, "o-series")
            # every 10 minutes from 10:01 to 10:51 (six a day: a rule may fire up to 24 times a day)
            await reminder_now(app, clock, user, "喝水",
                               Recurrence(rrule="FREQ=DAILY;BYHOUR=10;BYMINUTE=1,11,21,31,41,51"))
            for _ in range(7):  # 0, 10, … 60 minutes
                await drain(app)
                clock.advance(minutes=10)
            rows = await rows_of(app, user)
    assert len(sent_to(api, "o-series")) == 2  # at 10:01 and 10:31
    assert [r.channel for r in rows] == ["wechat", "inapp", "inapp", "wechat", "inapp", "inapp"]
    assert {r.payload.get("held") for r in rows if r.channel == "inapp"} == {"series"}


async def test_the_template_budget_stops_digests_first_and_spills_to_the_inapp_queue(
        database_url: str, clock: FrozenClock, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="schedule.budget")
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, WECHAT_TEMPLATE_ID_REMINDER="tpl-1", TEMPLATE_DAILY_BUDGET=4,
                                TEMPLATE_DIGEST_SHARE_PERCENT=50), clock=clock, run_worker=False)
        async with running(app):
            async def queue(kind: str, n: int) -> None:
                user = await app.state.service.get_or_create_user(f"o-{kind}-{n}")  # never wrote: window closed
                async with app.state.sessions.begin() as session:
                    await outbox.enqueue(session, user_id=user.id, idempotency_key=f"{kind}:{n}:{now_ms(clock)}",
                                         kind=kind, payload={"text": f"{kind} {n}", "title": f"{kind}{n}"},
                                         now_ms=now_ms(clock))

            for n in range(3):
                await queue("digest", n)
            await drain(app)
            for n in range(3):
                await queue("reminder", n)
            await drain(app)
            clock.advance(timedelta(days=1))
            await queue("digest", 9)
            await drain(app)
            async with app.state.sessions() as session:
                rows = (await session.scalars(select(OutboundMessageRow).order_by(OutboundMessageRow.id))).all()
    assert [(r.kind, r.channel, r.status) for r in rows] == [
        ("digest", "template", "sent"), ("digest", "template", "sent"), ("digest", "inapp", "pending"),
        ("reminder", "template", "sent"), ("reminder", "template", "sent"), ("reminder", "inapp", "pending"),
        ("digest", "template", "sent")]
    assert len(api.calls_to("message/template/send")) == 5
    warned = [r.getMessage() for r in caplog.records if r.name == "schedule.budget" and r.levelno == logging.WARNING]
    assert len(warned) == 2 and all("template budget" in line for line in warned)  # digests' mark, then the whole


async def test_answers_to_requests_run_later_count_against_the_users_daily_budget(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api:
        app = create_app(config(api, database_url, PUSH_DAILY_BUDGET_PER_USER=1), clock=clock, run_worker=False)
        async with running(app) as client:
            assert (await say(client, clock, "明早8点帮我看看今天有什么会", openid="o-asker")).startswith("好的")
            user = await app.state.service.get_or_create_user("o-asker")
            clock.set(clock.now().replace(day=19, hour=0))  # 08:00 local: the request is due
            await reminder_now(app, clock, user.id, "晨会")
            await drain(app)  # the reminder takes the day's one push
            assert (await app.state.requests.run_once()).answered == 1
            await drain(app)
            rows = await rows_of(app, user.id)
    assert [(r.kind, r.channel, r.status, r.payload.get("held")) for r in rows] == [
        ("reminder", "wechat", "sent", None), ("digest", "inapp", "pending", "daily")]
    assert len(sent_to(api, "o-asker")) == 1
