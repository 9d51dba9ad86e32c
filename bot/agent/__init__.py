"""Agent fallback (docs/conversation.md#agent): messages that are not schedule requests go to an `Agent`.

`OpenAIAgent` lives in `bot.agent.openai_agent` and is imported only when an LLM is configured,
so starting without one does not pay for loading the `openai` SDK.
"""

from bot.agent.build import build_agent
from bot.agent.builtin import BuiltinResponder
from bot.agent.history import AgentHistory
from bot.agent.port import APOLOGY, Agent, PageLink

__all__ = ["APOLOGY", "Agent", "AgentHistory", "BuiltinResponder", "PageLink", "build_agent"]
