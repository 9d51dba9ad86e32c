"""Log set-up (LOG_FORMAT text|json), a request-id middleware that logs one line per request,
and a channel wrapper that logs one line per delivery attempt.

Lines carry ids, routes, statuses and durations — never a user's text, and never a secret: `SecretFilter`,
on the one handler every logger propagates to, masks page and feed links (`/p/<token>` is logged as `/p/…`),
WeChat's `access_token=`/`ticket=` query values, bearer and API tokens, in every line whoever wrote it.
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
from typing import Any, TextIO

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.web.metrics import WEBHOOK_SECONDS
from schedule.channel import Channel, DeliveryFailure, Outgoing, Receipt

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_SECRET_PATH = re.compile(r"^/(p|ics)/[^/]+")
# Secrets in any text: a page or feed link's token; a WeChat credential in a query string or JSON
# (access_token=, ticket= and jsapi_ticket=, secret=; httpx logs every request URL at INFO); a bearer
# header; an API token (sb_…); a bare link token (scope.user.expiry.nonce.mac).
_SECRET_ANYWHERE = re.compile(
    r"/(?P<path>p|ics)/[A-Za-z0-9._~%-]+"
    r"|(?P<key>access_token|ticket|secret)=(?!…)[^&\s\"'<>,;)]+"
    r"|(?P<field>[\"'](?:access_token|ticket|jsapi_ticket|secret)[\"']\s*:\s*[\"'])(?!…)[^\"']+"
    r"|(?P<bearer>[Bb]earer\s+)(?!…)[^\s\"',]+"
    # the look-behinds follow the first characters: a pattern that starts with a literal is scanned faster
    r"|sb_(?<![A-Za-z0-9_-]sb_)[A-Za-z0-9_-]{16,}"
    r"|[psc]\.(?<![A-Za-z0-9_.-][psc]\.)[0-9a-f]{1,16}\.[0-9a-f]{1,16}\.[A-Za-z0-9_-]{0,32}\.[A-Za-z0-9_-]{32}"
    r"(?![A-Za-z0-9_-])")
_STRING_FIELDS = ("path", "client", "failure", "code")
_FIELDS = ("request_id", "method", "path", "status", "ms", "client", "channel", "outbox_id", "user_id", "kind",
           "outcome", "failure", "code")
LIBRARY_LEVELS = {"alembic": logging.WARNING, "aiosqlite": logging.INFO}
access_log = logging.getLogger("schedbot.request")
delivery_log = logging.getLogger("schedbot.delivery")


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id.get()
        return True


class SecretFilter(logging.Filter):
    """Masks every secret `mask_secrets` knows in a line, its traceback and structured fields included,
    whoever logged it (our code, uvicorn, httpx, aiohttp, a library's exception message). Attached to the
    handler, so records propagated from any logger pass through it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_secrets(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_text is None:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_secrets(record.exc_text)
        if record.stack_info:
            record.stack_info = mask_secrets(record.stack_info)
        for name in _STRING_FIELDS:
            value = getattr(record, name, None)
            if isinstance(value, str):
                setattr(record, name, mask_secrets(value))
        return True


def _masked(match: re.Match[str]) -> str:
    if match["path"]:
        return f"/{match['path']}/…"
    if match["key"]:
        return f"{match['key']}=…"
    if match["field"]:
        return f"{match['field']}…"
    if match["bearer"]:
        return f"{match['bearer']}…"
    return "…"


def mask_secrets(text: str) -> str:
    """`text` with every link token, WeChat credential, bearer and API token replaced by `…`."""
    return _SECRET_ANYWHERE.sub(_masked, text)


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
        if record.exc_info:  # the text SecretFilter masked, when it ran
            line["exc"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(log_format: str = "text", *, level: int = logging.INFO) -> None:
    """Route every logger (uvicorn's too) through one stderr handler in the chosen format."""
    handler = log_handler(sys.stderr, log_format)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.access").disabled = True  # RequestLog writes the access line
    quiet_libraries()


def quiet_libraries() -> None:
    """Libraries whose lower levels are chatter: alembic's INFO on every start; aiosqlite's DEBUG, a line per
    statement with its parameters (users' text, the cached access token) that no filter can tell apart."""
    for name, level in LIBRARY_LEVELS.items():
        logging.getLogger(name).setLevel(level)


def log_handler(stream: TextIO, log_format: str = "text") -> logging.Handler:
    """The handler every process logs through: request ids, secrets masked, text or JSON lines."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(_RequestIdFilter())
    handler.addFilter(SecretFilter())
    if log_format == "json":
        formatter: logging.Formatter = JsonFormatter()
        formatter.converter = time.gmtime
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s")
    handler.setFormatter(formatter)
    return handler


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
