"""LLM failures (down, 5xx, 401, timeout, malformed): a short apology, nothing written, no user text logged."""

from __future__ import annotations

import logging
import socket

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent import APOLOGY
from fakes.llm import FakeLLM
from schedule.domain import User
from schedule.model import AgentMessageRow, ScheduleItemRow
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]
SECRET = "我的银行卡密码是123456，帮我记一下"
MEETING = {"kind": "event", "title": "项目会", "start_at": "2026-06-19T15:00:00+08:00"}


async def rows(sessions: Sessions, model: type) -> int:
    async with sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_llm_down_gives_an_apology(make_agent, alice: User, clock: FrozenClock, sessions: Sessions,
                                         caplog: pytest.LogCaptureFixture) -> None:
    agent = make_agent(base_url=f"http://127.0.0.1:{closed_port()}/v1", max_retries=1)
    with caplog.at_level(logging.DEBUG):
        assert await agent.answer(alice, SECRET, now=clock.now()) == APOLOGY
    assert "APIConnectionError" in caplog.text and SECRET not in caplog.text and "123456" not in caplog.text
    assert await rows(sessions, AgentMessageRow) == 0


async def test_server_errors_are_retried_then_apologised(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                                         sessions: Sessions, caplog: pytest.LogCaptureFixture) -> None:
    llm.fail(500, "The server had an error while processing your request.", times=3)
    with caplog.at_level(logging.WARNING):
        assert await make_agent(max_retries=2).answer(alice, SECRET, now=clock.now()) == APOLOGY
    assert len(llm.requests) == 3  # one try + two bounded retries
    assert "InternalServerError" in caplog.text and "123456" not in caplog.text
    assert await rows(sessions, AgentMessageRow) == 0


async def test_a_transient_error_then_success(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock) -> None:
    llm.fail(503).reply("好了。")
    assert await make_agent(max_retries=2).answer(alice, "在吗", now=clock.now()) == "好了。"
    assert len(llm.requests) == 2


async def test_a_wrong_key_is_not_retried(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                          sessions: Sessions, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert await make_agent(api_key="sk-wrong", max_retries=2).answer(alice, "你好", now=clock.now()) == APOLOGY
    assert len(llm.requests) == 1 and "AuthenticationError" in caplog.text
    assert await rows(sessions, AgentMessageRow) == 0


async def test_a_timeout_is_bounded(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock, sessions: Sessions,
                                    caplog: pytest.LogCaptureFixture) -> None:
    llm.reply("太晚了", delay_s=3).reply("也太晚了", delay_s=3)
    with caplog.at_level(logging.WARNING):
        answer = await make_agent(timeout_s=0.2, max_retries=1).answer(alice, SECRET, now=clock.now())
    assert answer == APOLOGY and len(llm.requests) == 2
    assert "APITimeoutError" in caplog.text and "123456" not in caplog.text
    assert await rows(sessions, AgentMessageRow) == 0


@pytest.mark.parametrize("body", ["<html>bad gateway</html>", '{"id": "x", "object": "chat.completion"}',
                                  '{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}'])
async def test_a_malformed_answer_gives_an_apology(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock,
                                                   sessions: Sessions, body: str) -> None:
    llm.raw(body)
    assert await make_agent().answer(alice, "你好", now=clock.now()) == APOLOGY
    assert await rows(sessions, AgentMessageRow) == 0


async def test_an_empty_answer_gives_an_apology(llm: FakeLLM, make_agent, alice: User, clock: FrozenClock) -> None:
    llm.reply("   ")
    assert await make_agent().answer(alice, "你好", now=clock.now()) == APOLOGY


async def test_a_failure_after_a_write_still_says_what_was_stored(llm: FakeLLM, make_agent, alice: User,
                                                                  clock: FrozenClock, sessions: Sessions) -> None:
    llm.call_tools(("schedule_create_item", MEETING)).fail(500)
    answer = await make_agent().answer(alice, "明天三点项目会", now=clock.now())
    assert answer.startswith(APOLOGY) and "已记录：6月19日（周五）15:00 项目会" in answer
    assert await rows(sessions, ScheduleItemRow) == 1
