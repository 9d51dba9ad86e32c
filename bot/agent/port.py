"""The agent port: what the conversation handler calls for a message that is not a schedule request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from schedule.domain import Item, User

PageLink = Callable[[int, int, int], Awaitable[str]]
"""`page_link(user_id, start_ms, end_ms) -> url` of the user's itinerary page for that range."""

APOLOGY = "抱歉，我这会儿有点忙，请稍后再试。"


@dataclass(frozen=True, slots=True)
class Conversation:
    """What the agent should know of the chat so far: the last turns, those the rules answered
    included (user text, reply; oldest first), and the item(s) in focus, which "它 / 这个 / 刚才那个" mean."""

    turns: tuple[tuple[str, str], ...] = ()
    focus: tuple[Item, ...] = ()


class Agent(Protocol):
    async def answer(self, user: User, text: str, *, now: datetime, context: Conversation | None = None) -> str:
        """A short Chinese reply to `text`; never raises (failures become an apology)."""
        ...

    async def aclose(self) -> None:
        """Close what the agent holds (its network clients); a no-op for one that holds nothing."""
        ...
