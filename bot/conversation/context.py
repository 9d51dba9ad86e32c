"""What every conversation step gets: the user, `now` in their timezone, the ports, the dialogue."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from bot.conversation.focus import Focus
from intent.model import Intent
from schedule.clock import to_ms
from schedule.domain import Item, User
from schedule.errors import NotFound
from schedule.service import ScheduleService


class PageLinks(Protocol):
    """Links to the user's itinerary page, public share page and calendar feed (bot/pages)."""

    async def itinerary_url(self, user_id: int, *, start_ms: int | None = None, end_ms: int | None = None,
                            tz: str | None = None) -> str: ...
    def itinerary_url_now(self, user_id: int, *, start_ms: int | None, end_ms: int | None, tz: str) -> str | None: ...
    async def share_url(self, user_id: int) -> str: ...
    async def revoke_share(self, user_id: int) -> bool: ...
    async def reset_links(self, user_id: int) -> bool: ...
    async def feed_url(self, user_id: int) -> str: ...

    async def revoke_feed(self, user_id: int) -> bool: ...


@dataclass
class Ask:
    """A question left open: the intent to complete and, for "which one?", the numbered item ids."""

    intent: Intent
    candidates: tuple[int, ...] = ()


@dataclass
class Context:
    user: User
    tz: ZoneInfo
    now: datetime  # aware, in the user's timezone
    text: str
    service: ScheduleService
    message_id: str | None = None
    candidates: tuple[int, ...] = ()  # numbered choices offered by the pending question
    focus: Focus = field(default_factory=Focus)  # the item the conversation is about (the focus)
    asks: list[Ask] = field(default_factory=list)  # questions this message leaves open (the last one is kept)
    again: str | None = None  # a request refused as a repeat (the same request twice), stored if the user says 再记一条
    llm: bool = False  # an LLM answers free-form requests (a request run later needs one)
    request_limit: int = 20  # active requests run later a user may keep

    def ask(self, intent: Intent, candidates: tuple[int, ...] = ()) -> None:
        self.asks.append(Ask(intent, candidates))

    @property
    def now_ms(self) -> int:
        return to_ms(self.now)

    async def active_items(self, ids: tuple[int, ...] | list[int]) -> list[Item]:
        """The user's items of `ids` that are still active, in that order (gone or closed ones left out)."""
        found = []
        for item_id in ids:
            try:
                item = await self.service.get_item(self.user.id, item_id)
            except NotFound:
                continue
            if item.status == "active":
                found.append(item)
        return found

    @property
    def focus_ids(self) -> tuple[int, ...]:
        """The items in focus while fresh."""
        return self.focus.live_ids(self.now_ms)
