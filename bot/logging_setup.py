"""Log set-up (LOG_FORMAT text|json), a request-id middleware that logs one line per request,
and a channel wrapper that logs one line per delivery attempt.

Lines carry ids, routes, statuses and durations — never a user's text, and never the secret part of
a page or calendar link (`/p/<token>` is logged as `/p/…`).
"""

from __future__ import annotations

import contextvars
import itertools
import json
import logging
import os
import re
import secrets
import sys
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.metrics import WEBHOOK_SECONDS
from schedule.channel import Channel, DeliveryFailure, Outgoing, Receipt

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_SECRET_PATH = re.compile(r"^/(p|ics)/[^/]+")
_SECRET_ANYWHERE = re.compile(r"/(p|ics)/[A-Za-z0-9._~%-]+")  # a page or feed token inside any text
_FIELDS = ("request_id", "method", "path", "status", "ms", "client", "channel", "outbox_id", "user_id", "kind",
           "outcome", "failure", "code")
access_log = logging.getLogger("schedbot.request")
delivery_log = logging.getLogger("schedbot.delivery")


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id.get()
        return True


class SecretPathFilter(logging.Filter):
    """Masks page and feed tokens (`/p/<token>`, `/ics/<token>.ics`) in every line, its traceback included,
    whoever logged it (our handlers, uvicorn, a library's exception message)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_secret_paths(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_text is None:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_secret_paths(record.exc_text)
        return True


def mask_secret_paths(text: str) -> str:
    return _SECRET_ANYWHERE.sub(lambda m: f"/{m.group(1)}/…", text)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg and the structured fields present."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name, "msg": record.getMessage(),
        }
        for name in _FIELDS:
            value = getattr(record, name, None)
            if value is not None and value != "-":
                line[name] = value
        if record.exc_info:  # the text SecretPathFilter masked, when it ran
            line["exc"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(log_format: str = "text", *, level: int = logging.INFO) -> None:
    """Route every logger (uvicorn's too) through one stderr handler in the chosen format."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_RequestIdFilter())
    handler.addFilter(SecretPathFilter())
    if log_format == "json":
        formatter: logging.Formatter = JsonFormatter()
        formatter.converter = time.gmtime
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s")
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.access").disabled = True  # RequestLog writes the access line
    logging.getLogger("alembic").setLevel(logging.WARNING)


def loggable_path(path: str) -> str:
    return _SECRET_PATH.sub(lambda m: f"/{m.group(1)}/…", path)[:200]


class _RequestIds:
    """Fresh request ids: a random per-process prefix and a counter, 16 hex characters. As unique as
    uuid4's first 16 for tracing, without a urandom system call per request (2.8 % of the webhook's CPU
    in a profile). A forked child draws its own prefix."""

    def __init__(self) -> None:
        self.reseed()
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        self.prefix = secrets.token_hex(4)
        self.counter = itertools.count(secrets.randbelow(1 << 24))

    def __call__(self) -> str:
        return f"{self.prefix}{next(self.counter) & 0xFFFFFFFF:08x}"


fresh_request_id = _RequestIds()


class RequestLog:
    """ASGI middleware: a request id (X-Request-ID when sane, else fresh) on the response and every log line,
    and one access line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        rid = given if _SAFE_ID.match(given) else fresh_request_id()
        token = request_id.set(rid)
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            ms = round(seconds * 1000, 1)
            if scope.get("path") == "/wechat":
                WEBHOOK_SECONDS.observe(seconds)
            path = loggable_path(scope.get("path", ""))
            client = (scope.get("client") or ("-", 0))[0]  # the proxy's X-Forwarded-For under --proxy-headers
            access_log.info("%s %s %s %s %.1f ms", client, scope.get("method"), path, status, ms,
                            extra={"method": scope.get("method"), "path": path, "status": status, "ms": ms,
                                   "client": client})
            request_id.reset(token)


class LoggedChannel:
    """Wraps a delivery Channel: a line per failed attempt at INFO, per sent one at DEBUG (the delivery_logs
    table has every attempt; at a thousand sends a second an INFO line each cost more than the send), with
    outbox id, user id, kind and outcome, never the text."""

    def __init__(self, inner: Channel) -> None:
        self.inner = inner
        self.name = inner.name
        self.needs_window = bool(getattr(inner, "needs_window", False))

    def parts(self, message: Outgoing) -> int:
        counter = getattr(self.inner, "parts", None)
        return int(counter(message)) if counter is not None else 1

    async def send(self, message: Outgoing) -> Receipt:
        fields: dict[str, Any] = {"channel": self.name, "outbox_id": message.outbox_id, "user_id": message.user_id,
                                  "kind": message.kind}
        try:
            receipt = await self.inner.send(message)
        except DeliveryFailure as exc:
            delivery_log.info("delivery %s via %s failed (%s %s)", message.outbox_id, self.name, exc.failure,
                              exc.code or "-", extra={**fields, "outcome": "failed", "failure": exc.failure,
                                                      "code": exc.code})
            raise
        if delivery_log.isEnabledFor(logging.DEBUG):
            delivery_log.debug("delivery %s via %s sent", message.outbox_id, self.name,
                               extra={**fields, "outcome": "sent"})
        return receipt
