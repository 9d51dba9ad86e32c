"""The handler port the webhook calls for user text, and a default that echoes the parsed intent."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from bot.wechat.messages import InboundMessage
from schedule.clock import Clock
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
_ACTIONS = {
    "create": "记录", "query": "查询", "update": "修改", "cancel": "取消", "complete": "完成",
    "snooze": "稍后提醒", "subscribe_digest": "订阅每日待办", "unsubscribe_digest": "取消每日待办",
}


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


def _load_parse() -> Callable[..., Any] | None:
    try:  # the intent package is built in parallel; run without it until it exposes parse
        module = importlib.import_module("intent")
    except Exception:
        return None
    parse = getattr(module, "parse", None)
    return parse if callable(parse) else None


class IntentEchoHandler:
    """Answers with what `intent.parse` understood (or the capability list); no schedule writes."""

    def __init__(self, clock: Clock, tz: str = "Asia/Shanghai") -> None:
        self._clock = clock
        self._tz = ZoneInfo(tz)
        self._parse = _load_parse()

    async def __call__(self, message: InboundMessage) -> Reply:
        text = (message.content or "").strip()
        if not text:
            return CAPABILITIES
        if self._parse is None:
            return "收到。日程功能马上就好。\n" + CAPABILITIES
        try:
            intent = self._parse(text, now=self._clock.now().astimezone(self._tz), tz=self._tz)
        except Exception:
            log.exception("intent.parse failed (text length %d)", len(text))
            return "抱歉，我没看懂。\n" + CAPABILITIES
        question = getattr(intent, "question", None)
        if question:
            return str(question)
        action = str(getattr(intent, "action", "none"))
        if action == "none":
            return CAPABILITIES
        return f"我理解为：{_ACTIONS.get(action, action)}。（完整功能即将上线）"
