"""`FakeLLM`: an OpenAI-compatible chat-completions server on real loopback HTTP, for agent tests.

Like `FakeWeChatAPI`, uvicorn runs in a background thread. `POST /v1/chat/completions` answers with
the real response JSON (id, object, created, model, choices[].message with content and/or tool_calls,
finish_reason, usage); replies, tool calls, delays and HTTP errors (OpenAI's error JSON) are scripted
in order, and every request body is recorded so tests can assert the messages and tools sent.

Like a real inference server it can serve only `parallel` requests at once (the rest queue, first come first
served), and `hold(marker)` keeps the requests whose last message contains `marker` unanswered (in their slot)
until `release()`: a slow LLM without any wall-clock wait. `concurrent` records, at each arrival, the last
messages of every request then received and not yet answered; `answered` the order answers went out.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fakes.loopback import LoopbackServer

CREATED = 1_781_748_000  # a fixed `created` stamp: the fake never reads the clock
ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
               429: "rate_limit_exceeded"}


@dataclass(frozen=True)
class Scripted:
    """One scripted answer: text, tool calls `(name, arguments)`, an HTTP error, or a raw body."""

    content: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any] | str], ...] = ()
    status: int = 200
    error: str = ""
    raw: str | None = None
    delay_s: float = 0.0


@dataclass
class FakeLLM:
    api_key: str = "sk-test"
    default_reply: str = "好的。"
    latency_s: float = 0.0
    retry_after_ms: int | None = 10  # sent with errors so the SDK's retries do not back off for seconds
    requests: list[dict[str, Any]] = field(default_factory=list, repr=False)
    port: int = 0
    _script: deque[Scripted] = field(default_factory=deque, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _serial: itertools.count[int] = field(default_factory=lambda: itertools.count(1), repr=False)
    parallel: int | None = None
    concurrent: list[tuple[str, ...]] = field(default_factory=list, repr=False)
    answered: list[str] = field(default_factory=list, repr=False)
    _loopback: LoopbackServer | None = field(default=None, repr=False)
    _open: list[str] = field(default_factory=list, repr=False)
    _held: str | None = field(default=None, repr=False)
    _slots: asyncio.Semaphore | None = field(default=None, repr=False)
    _gate: asyncio.Event | None = field(default=None, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _watchers: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(default_factory=list, repr=False)

    # --- scripting ------------------------------------------------------------------------
    def reply(self, content: str, *, delay_s: float = 0.0) -> FakeLLM:
        return self._push(Scripted(content=content, delay_s=delay_s))

    def call_tools(self, *calls: tuple[str, dict[str, Any] | str], content: str | None = None) -> FakeLLM:
        """Answer with tool calls; arguments given as a str are sent verbatim (e.g. broken JSON)."""
        return self._push(Scripted(content=content, tool_calls=calls))

    def fail(self, status: int, message: str = "scripted failure", *, times: int = 1) -> FakeLLM:
        for _ in range(times):
            self._push(Scripted(status=status, error=message))
        return self

    def raw(self, body: str, *, status: int = 200) -> FakeLLM:
        return self._push(Scripted(raw=body, status=status))

    def hold(self, marker: str) -> FakeLLM:
        """Requests whose last message contains `marker` wait unanswered until `release()`."""
        with self._lock:
            self._held = marker
            if self._gate is not None and self._loop is not None:
                self._loop.call_soon_threadsafe(self._gate.clear)
        return self

    def release(self) -> None:
        with self._lock:
            self._held = None
            if self._gate is not None and self._loop is not None:
                self._loop.call_soon_threadsafe(self._gate.set)

    async def received(self, count: int, *, timeout_s: float = 10.0) -> None:
        """Wait until `count` requests have arrived (polls the record; fails after `timeout_s`)."""
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(timeout_s):
            while True:
                arrived = asyncio.Event()
                with self._lock:
                    if len(self.requests) >= count:
                        return
                    self._watchers.append((loop, arrived))
                await arrived.wait()

    def _push(self, answer: Scripted) -> FakeLLM:
        with self._lock:
            self._script.append(answer)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- the API ----------------------------------------------------------------------------
    async def _completions(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "could not parse the JSON body", "invalid_request_error")
        last = str((body.get("messages") or [{}])[-1].get("content") or "")
        if self._slots is None:  # made on the server's own loop, at its first request
            self._loop = asyncio.get_running_loop()
            self._slots = asyncio.Semaphore(self.parallel or 1_000_000)
            self._gate = asyncio.Event()
            if self._held is None:
                self._gate.set()
        with self._lock:
            self.requests.append(body)
            self._open.append(last)
            self.concurrent.append(tuple(self._open))
            for loop, arrived in self._watchers:
                loop.call_soon_threadsafe(arrived.set)
            self._watchers.clear()
        try:
            async with self._slots:
                if self._held is not None and self._held in last:
                    await self._gate.wait()  # type: ignore[union-attr]
                with self._lock:
                    scripted = self._script.popleft() if self._script else Scripted(content=self.default_reply)
                if self.latency_s or scripted.delay_s:
                    await asyncio.sleep(self.latency_s + scripted.delay_s)
        finally:
            with self._lock:
                self._open.remove(last)
                self.answered.append(last)
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        if scripted.raw is not None:
            return Response(scripted.raw, status_code=scripted.status, media_type="application/json")
        if scripted.status != 200:
            response = _error(scripted.status, scripted.error, ERROR_TYPES.get(scripted.status, "server_error"))
            if self.retry_after_ms is not None:
                response.headers["retry-after-ms"] = str(self.retry_after_ms)
            return response
        return JSONResponse(self._completion(body, scripted))

    def _completion(self, body: dict[str, Any], scripted: Scripted) -> dict[str, Any]:
        serial = next(self._serial)
        message: dict[str, Any] = {"role": "assistant", "content": scripted.content, "refusal": None}
        if scripted.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_fake_{serial}_{i}", "type": "function",
                 "function": {"name": name, "arguments": args if isinstance(args, str)
                              else json.dumps(args, ensure_ascii=False)}}
                for i, (name, args) in enumerate(scripted.tool_calls)]
        prompt_tokens = len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 4
        completion_tokens = len(json.dumps(message, ensure_ascii=False)) // 4
        return {
            "id": f"chatcmpl-fake-{serial}", "object": "chat.completion", "created": CREATED + serial,
            "model": body.get("model", ""), "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if scripted.tool_calls else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeLLM:
        app = Starlette(routes=[Route("/v1/chat/completions", self._completions, methods=["POST"])])
        self._loopback = LoopbackServer(app, "fake LLM")
        self.port = self._loopback.start()
        return self

    def stop(self) -> None:
        if self._loopback is not None:
            self._loopback.stop()

    async def __aenter__(self) -> FakeLLM:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *_exc: object) -> None:
        await asyncio.to_thread(self.stop)


def _error(status: int, message: str, kind: str, code: str | None = None) -> JSONResponse:
    """OpenAI's error body: {"error": {"message", "type", "param", "code"}}."""
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}},
                        status_code=status)
