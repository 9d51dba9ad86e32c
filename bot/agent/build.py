"""Choose the agent from settings: the LLM client when one is configured, else the built-in responder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent.builtin import BuiltinResponder
from bot.agent.history import AgentHistory
from bot.agent.port import Agent, PageLink
from bot.settings import Settings
from schedule.clock import Clock
from schedule.service import ScheduleService

if TYPE_CHECKING:
    import httpx2


def build_agent(settings: Settings, *, service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                clock: Clock, transport: httpx2.AsyncBaseTransport | None = None,
                page_link: PageLink | None = None) -> Agent:
    """`OpenAIAgent` when AGENT_BASE_URL and AGENT_MODEL are set; `BuiltinResponder` otherwise."""
    if not (settings.AGENT_BASE_URL and settings.AGENT_MODEL):
        return BuiltinResponder()
    from bot.agent.openai_agent import OpenAIAgent  # the SDK loads only when an LLM is configured

    return OpenAIAgent(
        base_url=settings.AGENT_BASE_URL, api_key=settings.AGENT_API_KEY, model=settings.AGENT_MODEL,
        service=service, history=AgentHistory(sessions, clock, keep=settings.AGENT_HISTORY_MESSAGES),
        timeout_s=settings.AGENT_TIMEOUT_S, max_retries=settings.AGENT_MAX_RETRIES,
        max_tool_rounds=settings.AGENT_MAX_TOOL_ROUNDS, transport=transport, page_link=page_link)
