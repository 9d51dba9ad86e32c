"""The handler port the webhook calls for user text."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from bot.wechat.messages import InboundMessage
from schedule.fastsql import Executor

log = logging.getLogger(__name__)
Reply = str | None

CAPABILITIES = (
    "我可以帮你记待办、日程和提醒，例如：\n"
    "· 明天下午三点开会，提前半小时提醒我\n"
    "· 周五前交材料\n"
    "· 这周有什么安排\n"
    "· 每天早上7点给我发当天待办"
)


class Handler(Protocol):
    """Answers one message. A handler whose unit of work begins with a known read may also have
    `opening(user_id) -> (Fast, params)`: on MariaDB the webhook then sends that read in its claim's
    trip and hands the transaction on (`schedule.handoff`)."""

    async def __call__(self, message: InboundMessage) -> Reply: ...


class ReplyStore(Protocol):
    async def __call__(self, target: Executor, reply: Reply) -> None: ...


_REPLY_STORE: ContextVar[ReplyStore | None] = ContextVar("schedbot_reply_store", default=None)


@contextmanager
def storing_replies(store: ReplyStore) -> Iterator[None]:
    """Tasks created inside the block (the webhook's handler run) see `store` in `store_reply_in`."""
    token = _REPLY_STORE.set(store)
    try:
        yield
    finally:
        _REPLY_STORE.reset(token)


async def store_reply_in(target: Executor, reply: Reply) -> None:
    """A handler that knows its final answer inside its own transaction hands it over here: the webhook
    then stores the answer and marks the message done in that same transaction, instead of opening
    another after it (one commit, one log flush fewer per message). Nothing happens where no webhook
    is waiting (the chat command line), or when the webhook has stopped waiting for this answer."""
    store = _REPLY_STORE.get()
    if store is not None:
        await store(target, reply)
