"""The handler port the webhook calls for user text, with the message's transaction as a parameter.

One message is one unit of work, opened (or adopted from the claim's trip) by its caller, the webhook's
dispatcher or `run_alone`:

    turn = await handler.turn(message, unit)   # inside the transaction: the handler's reads and writes
    … the caller's own finishing writes, when `turn.final` …
    COMMIT
    reply = turn.reply if turn.final else await handler.finish(turn)   # after it: the agent, page links

A final answer (`Turn.answered`) is stored by the caller in the same transaction as the handler's writes, so
an answer saying 已记录 is only ever sent once the commit that made it true has succeeded. If the unit rolls
back, the caller asks `finish` for the answer to a failed turn (`Turn.failure`: nothing it wrote was kept).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from bot.wechat.messages import InboundMessage
from schedule.fastsql import Executor, Fast
from schedule.retry import retry_contention

log = logging.getLogger(__name__)
Reply = str | None
Opening = tuple[Fast, Mapping[str, Any]]  # a handler's first statement and its parameters

CAPABILITIES = (
    "我可以帮你记待办、日程和提醒，例如：\n"
    "· 明天下午三点开会，提前半小时提醒我\n"
    "· 周五前交材料\n"
    "· 这周有什么安排\n"
    "· 每天早上7点给我发当天待办"
)
APOLOGY = "抱歉，刚才处理出错了，请稍后再试一次。"


@dataclass(frozen=True, slots=True)
class Turn:
    """What a message's unit of work made of it.

    `final`: `reply` is the answer, known inside the transaction (the caller stores it there). Otherwise
    the handler's `finish` makes the answer after the commit, from `later` (the handler's own state: what the
    agent is to be asked, the links still to make). `failed`: the unit rolled back, nothing of it was kept."""

    message: InboundMessage
    reply: Reply = None
    final: bool = False
    failed: bool = False
    later: object = None

    @classmethod
    def answered(cls, message: InboundMessage, reply: Reply) -> Turn:
        return cls(message, reply, final=True)

    @classmethod
    def pending(cls, message: InboundMessage, later: object = None) -> Turn:
        return cls(message, later=later)

    @classmethod
    def failure(cls, message: InboundMessage) -> Turn:
        return cls(message, failed=True)


class Handler(Protocol):
    """Answers one message in two parts around its transaction (see the module docstring)."""

    def opening(self, user_id: int) -> Opening | None:
        """The unit's first statement for this user, if the handler always starts with one: on MariaDB the
        webhook sends it in its claim's trip and runs the unit in the transaction it began (`schedule.handoff`)."""
        ...

    async def turn(self, message: InboundMessage, unit: Executor) -> Turn:
        """The message's reads and writes, in `unit` (never committed or rolled back here)."""
        ...

    async def finish(self, turn: Turn) -> Reply:
        """The answer to a turn that was not final, after its unit committed or rolled back (`turn.failed`)."""
        ...


class Answering(ABC):
    """A handler whose answer needs no writes in the message's unit (a test's, a bench's echo): it answers in
    `finish`, after the (empty) unit; the caller then stores the answer in a transaction of its own."""

    def opening(self, user_id: int) -> Opening | None:
        return None

    async def turn(self, message: InboundMessage, unit: Executor) -> Turn:
        return Turn.pending(message)

    async def finish(self, turn: Turn) -> Reply:
        return APOLOGY if turn.failed else await self.answer(turn.message)

    @abstractmethod
    async def answer(self, message: InboundMessage) -> Reply: ...


async def run_alone(handler: Handler, message: InboundMessage,
                    begin: Callable[[], AbstractAsyncContextManager[Executor]]) -> Reply:
    """One message with no webhook around it (`schedbot chat`, a bench): its unit in a transaction of `begin`'s,
    run again while the database aborts it as a deadlock victim, then the answer."""

    async def once() -> Turn:
        async with begin() as unit:
            return await handler.turn(message, unit)

    try:
        turn = await retry_contention(once)
    except Exception:
        log.exception("the unit of work of %s failed", message.dedupe_key)
        turn = Turn.failure(message)
    return turn.reply if turn.final else await handler.finish(turn)

