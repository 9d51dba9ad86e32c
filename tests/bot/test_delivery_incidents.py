"""Configuration incidents lose nothing (docs/delivery.md#incidents): errcodes only the account owner can fix pause
the API without spending delivery attempts, /healthz and doctor say so, one ERROR line per pause, rows
wait up to the catch-up window and then go down the ladder; a bad template sends pushes on down it."""

from __future__ import annotations

import logging

import httpx
import pytest
from test_delivery import app_with, outbox_row, queue_text

from bot.wechat import incident
from fakes.wechat import FakeWeChatAPI
from schedule.clock import now_ms
from schedule.testing import FrozenClock


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_40_minute_ip_whitelist_incident_spends_no_attempts_and_loses_nothing(
        database_url: str, clock: FrozenClock, caplog: pytest.LogCaptureFixture) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock) as app, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        rows = [await queue_text(app, clock, f"o-{n}", f"第{n}条提醒") for n in range(3)]
        api.script("stable_token", *[40164] * 5)  # the server's IP is off the whitelist for the next 5 tries
        with caplog.at_level(logging.ERROR):
            for _ in range(5):  # 5 pauses of 10 minutes: each one used to spend an attempt of 5
                await app.state.worker.run_once()
                assert {(await outbox_row(app, i)).status for i in rows} == {"pending"}
                health = (await http.get("/healthz")).json()
                assert health == {"status": "degraded", "database": "ok"}  # public: no detail, no IP
                [standing] = await incident.standing(app.state.sessions, now_ms(clock))  # the operator's view
                assert "IP白名单" in standing
                clock.advance(minutes=10, seconds=1)
        assert [(await outbox_row(app, i)).attempts for i in rows] == [0, 0, 0]  # none spent
        lines = errors(caplog)
        assert len(lines) == 5 and all("IP" in line and "whitelist" in line for line in lines)  # one per pause
        assert len(api.calls_to("stable_token")) == 5  # one call a pause, not one a row
        await app.state.worker.run_once()  # fixed: everything goes out on the customer-service rung
        finished = [await outbox_row(app, i) for i in rows]
        health = (await http.get("/healthz")).json()
    assert [(r.status, r.channel, r.attempts) for r in finished] == [("sent", "wechat", 1)] * 3
    assert health == {"status": "ok", "database": "ok"}


async def test_an_incident_outlasting_the_catch_up_window_goes_down_the_ladder(
        database_url: str, clock: FrozenClock) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, H5_REMINDER_CATCHUP_HOURS=1) as app:
        row = await queue_text(app, clock, "o-late", "开会提醒")
        api.script("stable_token", *[40164] * 20)
        for _ in range(8):  # 80 minutes of pauses: past the 1 h catch-up window
            await app.state.worker.run_once()
            clock.advance(minutes=10, seconds=1)
        await app.state.worker.run_once()
        final = await outbox_row(app, row)
    assert (final.status, final.channel) == ("pending", "inapp")  # shown with the user's next reply, not failed
    assert final.attempts == 0


async def test_a_bad_template_id_alerts_once_and_sends_pushes_on_down_the_ladder(
        database_url: str, clock: FrozenClock, caplog: pytest.LogCaptureFixture) -> None:
    async with FakeWeChatAPI() as api, app_with(api, database_url, clock, WECHAT_TEMPLATE_ID_REMINDER="tpl-x") as app:
        rows = [await queue_text(app, clock, f"o-t{n}", "提醒", kind="reminder") for n in range(3)]
        api.script("message/custom/send", *[45015] * 4)  # every window closed: the template rung
        api.script("message/template/send", *[40037] * 4)
        with caplog.at_level(logging.ERROR):
            for _ in range(3):
                await app.state.worker.run_once()
            rows.append(await queue_text(app, clock, "o-t3", "又一条提醒", kind="reminder"))  # while the template pause lasts
            for _ in range(3):
                await app.state.worker.run_once()
        final = [await outbox_row(app, i) for i in rows]
        standing = await incident.standing(app.state.sessions, now_ms(clock))
    assert [(r.status, r.channel) for r in final] == [("pending", "inapp")] * 4  # none failed for good
    assert len(api.calls_to("message/template/send")) == 3  # the batch in flight; the pause stopped the 4th
    [line] = errors(caplog)  # one ERROR line for the pause
    assert "WECHAT_TEMPLATE_ID_REMINDER" in line
    assert len(standing) == 1 and "template paused" in standing[0] and "40037" in standing[0]
