"""Agent fixtures: a fake OpenAI-compatible server on loopback, the service, two users, an agent factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent import AgentHistory, PageLink
from bot.agent.openai_agent import OpenAIAgent
from fakes.llm import FakeLLM
from schedule.domain import User
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

MakeAgent = Callable[..., OpenAIAgent]


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as fake:
        yield fake


@pytest.fixture
def service(sessions: async_sessionmaker[AsyncSession], clock: FrozenClock) -> ScheduleService:
    return ScheduleService(sessions, clock)


@pytest.fixture
async def alice(service: ScheduleService) -> User:
    return await service.get_or_create_user("o-alice")


@pytest.fixture
async def bob(service: ScheduleService) -> User:
    return await service.get_or_create_user("o-bob")


@pytest.fixture
async def make_agent(llm: FakeLLM, service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                     clock: FrozenClock) -> AsyncIterator[MakeAgent]:
    made: list[OpenAIAgent] = []

    def make(*, base_url: str | None = None, api_key: str = "sk-test", keep: int = 10, timeout_s: float = 5.0,
             max_retries: int = 0, max_tool_rounds: int = 4, page_link: PageLink | None = None,
             **extra: Any) -> OpenAIAgent:
        agent = OpenAIAgent(base_url=base_url or llm.base_url, api_key=api_key, model="fake-model",
                            service=service, history=AgentHistory(sessions, clock, keep=keep), timeout_s=timeout_s,
                            max_retries=max_retries, max_tool_rounds=max_tool_rounds, page_link=page_link, **extra)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        await agent.aclose()
