"""`OpenAIAgent`: an OpenAI-compatible chat-completions client (official `openai` SDK) with schedule tools.

Works with any service speaking the protocol (DeepSeek, DashScope compatible mode, Moonshot, vLLM,
Ollama) through `base_url`. Each request is bounded by the SDK's timeout and retry count, the tool
loop by `max_tool_rounds`; any failure becomes a short apology (the error class is logged, never the
user's text). Only the tools write schedule data; the exchange itself goes to the per-user history.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, cast
from zoneinfo import ZoneInfo

import httpx2
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from bot.agent.history import MAX_CHARS, AgentHistory
from bot.agent.port import APOLOGY, Conversation, PageLink
from bot.agent.prompt import conversation_messages, system_prompt
from bot.agent.toolbox import Toolbox, tool_error
from bot.agent.tools import tool_params
from schedule.domain import User
from schedule.service import ScheduleService

log = logging.getLogger(__name__)
MAX_CALLS_PER_ROUND = 8


class MalformedAnswer(Exception):
    """The service answered 200 but not with a usable chat completion."""


class OpenAIAgent:
    def __init__(self, *, base_url: str, api_key: str, model: str, service: ScheduleService, history: AgentHistory,
                 timeout_s: float = 20.0, max_retries: int = 2, max_tool_rounds: int = 4,
                 transport: httpx2.AsyncBaseTransport | None = None, page_link: PageLink | None = None) -> None:
        self._http = httpx2.AsyncClient(transport=transport) if transport is not None else None
        # A local vLLM/Ollama needs no key; the SDK insists on one, so send a placeholder.
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key or "none", timeout=timeout_s,
                                   max_retries=max_retries, http_client=self._http)
        self._model, self._service, self._history = model, service, history
        self._max_rounds, self._page_link = max_tool_rounds, page_link
        self._tools = tool_params()

    async def answer(self, user: User, text: str, *, now: datetime, context: Conversation | None = None) -> str:
        toolbox = Toolbox(self._service, user, page_link=self._page_link, source_text=text)
        try:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": system_prompt(now, ZoneInfo(user.timezone))},
                *await self._history.recent(user.id),
                *conversation_messages(context),
                {"role": "user", "content": text[:MAX_CHARS]},
            ]
            reply = await self._converse(messages, toolbox)
        except Exception as exc:
            log.warning("agent failed: %s (user %d, %d chars)", type(exc).__name__, user.id, len(text))
            return _with_done(APOLOGY, toolbox.done)
        try:
            await self._history.append(user.id, text, reply)
        except Exception as exc:  # the answer still goes out; only the context is lost
            log.warning("agent history not saved: %s (user %d)", type(exc).__name__, user.id)
        return reply

    async def aclose(self) -> None:
        await self._client.close()  # closes the injected http client too

    async def _converse(self, messages: list[dict[str, Any]], toolbox: Toolbox) -> str:
        for _ in range(self._max_rounds):
            completion = await self._client.chat.completions.create(
                model=self._model, messages=cast(Any, messages), tools=cast(Any, self._tools))
            message = _message_of(completion)
            calls = message.tool_calls or []
            if not calls:
                content = (message.content or "").strip()
                if not content:
                    raise MalformedAnswer("empty answer")
                return content
            messages.append({"role": "assistant", "content": message.content,
                             "tool_calls": [call.model_dump(exclude_none=True) for call in calls]})
            for index, call in enumerate(calls):
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": await self._run_call(call, toolbox, index)})
        log.warning("agent tool loop stopped after %d rounds", self._max_rounds)
        return _with_done("这件事我没能一次处理完，请换个说法再试一次。", toolbox.done)

    async def _run_call(self, call: Any, toolbox: Toolbox, index: int) -> str:
        if index >= MAX_CALLS_PER_ROUND:
            return tool_error("too_many_calls", f"一次最多执行 {MAX_CALLS_PER_ROUND} 个工具调用，这个未执行")
        function = getattr(call, "function", None)
        if call.type != "function" or function is None:
            return tool_error("unknown_tool", "只支持 function 类型的工具调用")
        return await toolbox.run(function.name, function.arguments)


def _message_of(completion: object) -> Any:
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        raise MalformedAnswer("no choices")
    message = completion.choices[0].message
    if message is None:
        raise MalformedAnswer("no message")
    return message


def _with_done(text: str, done: list[str]) -> str:
    """Never hide a write: if tools already stored something, say so after the apology."""
    return text if not done else text + "\n不过这些已经办好了：\n" + "\n".join(f"· {line}" for line in done)
