"""`bot.wiring`: the ports `serve`, `worker` and `chat` share, built once and closed by one `aclose()`."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import wiring
from bot.agent.builtin import BuiltinResponder
from bot.settings import Settings, load_settings
from schedule.testing import FrozenClock

WECHAT = {"WECHAT_APP_ID": "wx-wiring", "WECHAT_APP_SECRET": "secret", "WECHAT_TOKEN": "token"}


class ClosingAgent(BuiltinResponder):
    """The built-in responder, noting when it is closed (and failing to close when told to)."""

    def __init__(self, closed: list[str], name: str, *, fail: bool = False) -> None:
        self.closed, self.name, self.fail = closed, name, fail

    async def aclose(self) -> None:
        self.closed.append(self.name)
        if self.fail:
            raise RuntimeError("close failed")


def config(database_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(DATABASE_URL=database_url, SPOOL_DIR=str(tmp_path / "spool"), **overrides)


def agents_in_order(monkeypatch: pytest.MonkeyPatch, closed: list[str], failing: str = "") -> None:
    """`build_agent` gives agent-1, agent-2 … in the order the wiring asks for them."""
    built: list[str] = []

    def build(*_args: Any, **_kwargs: Any) -> ClosingAgent:
        built.append(f"agent-{len(built) + 1}")
        return ClosingAgent(closed, built[-1], fail=built[-1] == failing)

    monkeypatch.setattr(wiring, "build_agent", build)


async def test_aclose_closes_the_agents_it_built_last_first(database_url: str, engine: AsyncEngine, clock: FrozenClock,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[str] = []
    agents_in_order(monkeypatch, closed)
    web = wiring.web(config(database_url, tmp_path, **WECHAT), clock=clock, engine=engine)
    web.start(run_worker=True)
    await web.ports.aclose()
    assert closed == ["agent-2", "agent-1"]  # the scheduled runs' agent, then the one answering chat
    async with engine.connect() as conn:  # the engine handed in is the caller's, still open
        assert (await conn.execute(text("SELECT 1"))).scalar() == 1


async def test_an_agent_handed_in_is_left_open(database_url: str, engine: AsyncEngine, clock: FrozenClock,
                                               tmp_path: Path) -> None:
    closed: list[str] = []
    given = ClosingAgent(closed, "given")
    web = wiring.web(config(database_url, tmp_path), clock=clock, engine=engine, agent=given)
    assert web.agent is given
    await web.ports.aclose()
    assert closed == []


async def test_a_failing_close_does_not_keep_the_rest_open(database_url: str, engine: AsyncEngine,
                                                           clock: FrozenClock, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    closed: list[str] = []
    agents_in_order(monkeypatch, closed, failing="agent-2")
    web = wiring.web(config(database_url, tmp_path), clock=clock, engine=engine)
    await web.ports.aclose()
    assert closed == ["agent-2", "agent-1"]
    assert "closing ClosingAgent.aclose failed" in caplog.text
    await web.ports.aclose()  # closing twice closes nothing twice
    assert closed == ["agent-2", "agent-1"]


async def test_chat_has_no_wechat_client_even_when_configured(database_url: str, engine: AsyncEngine,
                                                              tmp_path: Path) -> None:
    settings = config(database_url, tmp_path, **WECHAT)
    clock = FrozenClock(datetime.fromisoformat("2026-06-18T10:00:00+08:00"))
    served, chat = wiring.Wiring(settings, clock=clock, engine=engine), wiring.chat(settings, clock)
    try:
        assert served.client is not None and chat.ports.client is None
        assert chat.ports.clock is clock  # `--now` pins the clock every port reads
    finally:
        await served.aclose()
        await chat.ports.aclose()


async def test_the_web_process_gets_no_webhook_without_wechat(tmp_path: Path) -> None:
    web = wiring.web(config(f"sqlite+aiosqlite:///{tmp_path}/w.db", tmp_path, H5_WECHAT_MP_ENABLED=False))
    try:
        assert web.router is None and web.replayer is None and web.jsapi is None
    finally:
        await web.ports.aclose()  # its own engine, disposed


@pytest.fixture(autouse=True)
def _quiet(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
