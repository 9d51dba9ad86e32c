"""The agent port: what the conversation handler calls for a message that is not a schedule request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

from schedule.domain import User

PageLink = Callable[[int, int, int], Awaitable[str]]
"""`page_link(user_id, start_ms, end_ms) -> url` of the user's itinerary page for that range."""

APOLOGY = "抱歉，我这会儿有点忙，请稍后再试。"


class Agent(Protocol):
    async def answer(self, user: User, text: str, *, now: datetime) -> str:
        """A short Chinese reply to `text`; never raises (failures become an apology).

        Implementations holding network clients also offer `async def aclose(self) -> None`."""
        ...
