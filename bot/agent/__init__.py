"""Agent fallback (SPEC §9): messages that are not schedule requests go to an `Agent`."""

from bot.agent.build import build_agent
from bot.agent.builtin import BuiltinResponder
from bot.agent.history import AgentHistory
from bot.agent.openai_agent import OpenAIAgent
from bot.agent.port import APOLOGY, Agent, PageLink

__all__ = ["APOLOGY", "Agent", "AgentHistory", "BuiltinResponder", "OpenAIAgent", "PageLink", "build_agent"]
