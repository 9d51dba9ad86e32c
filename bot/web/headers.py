"""Security headers for what the pages router does not set itself: API answers are never cached, and the
front page and the API docs get a Content-Security-Policy and may never be framed (clickjacking)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

NO_STORE = [(b"cache-control", b"no-store")]
_NOT_FRAMED = [(b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff")]
HOME = [(b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                     b"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"), *_NOT_FRAMED]
# Swagger UI starts from an inline script and ReDoc renders in a blob: worker; their assets are ours
# (fastapi-offline), so nothing is loaded from another origin.
DOCS = [(b"content-security-policy", b"default-src 'self'; script-src 'self' 'unsafe-inline'; "
                                     b"style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                     b"worker-src 'self' blob:; connect-src 'self'; base-uri 'none'; "
                                     b"form-action 'self'; frame-ancestors 'none'"), *_NOT_FRAMED]
_DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})


def headers_for(path: str) -> list[tuple[bytes, bytes]]:
    if path.startswith("/api/"):
        return NO_STORE
    if path == "/":
        return HOME
    if path in _DOCS_PATHS:
        return DOCS
    return []


class SecurityHeaders:
    """Adds `headers_for(path)` to the answer, leaving any header the route set itself as it is."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        extra = headers_for(scope.get("path", "")) if scope["type"] == "http" else []
        if not extra:
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                message["headers"] = headers + [(name, value) for name, value in extra if name not in present]
            await send(message)

        await self.app(scope, receive, send_with_headers)
