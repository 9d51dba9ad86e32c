"""The ASGI layers every request passes: the body limit, and the JSON 500 of the `/wechat` fast path.

`BodyLimit` is the one body limit: the app wraps the framework in it, and the webhook's ASGI callable
is wrapped in it wherever it is served (its FastAPI route and the fast path), so a body over
MAX_BODY_BYTES gets the same 413 everywhere, sized or chunked, before anything acts on it.
"""

from __future__ import annotations

import contextlib
import logging

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.logging_setup import loggable_path

log = logging.getLogger("schedbot")
MAX_BODY_BYTES = 64 * 1024  # any request body, a WeChat callback's or the API's: 413 past it


class BodyLimit:
    """Refuse request bodies over the limit with 413 before any handler acts on them."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except TooLarge:
            await _too_large(scope, receive, send)


class TooLarge(HTTPException):
    """Raised from `receive` once a chunked body passes the limit: FastAPI re-raises HTTPExceptions from body
    parsing (any other error becomes 400 "There was an error parsing the body"), so the answer is 413."""

    def __init__(self) -> None:
        super().__init__(413, "request body too large")


async def _too_large(scope: Scope, receive: Receive, send: Send) -> None:
    await JSONResponse({"detail": "request body too large"}, status_code=413)(scope, receive, send)


def guarded(inner: ASGIApp) -> ASGIApp:
    """`inner` with the framework's last resort for a path served around the framework: an error that escapes
    is logged and answered with a JSON 500 (or, once the answer had begun, the server closes the connection)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await inner(scope, receive, send)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), loggable_path(str(scope.get("path", ""))))
            with contextlib.suppress(RuntimeError):
                await JSONResponse({"detail": "internal error"}, status_code=500)(scope, receive, send)

    return app
