"""Signed page tokens: `scope.user.expiry.nonce.mac`, HMAC-SHA256, compared in constant time.

Scopes: `p` the owner's private page, `s` a public share (its nonce names a revocable row),
`c` the calendar feed. A token only ever opens its own scope for its own user.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

SCOPES = frozenset({"p", "s", "c"})
# Feed links live while the user's link epoch and feed generation do (checked on every resolve), whatever the
# expiry they carry: a subscribed calendar never silently stops updating (links once issued for 400 days too).
LASTING = frozenset({"c"})
MAX_TOKEN_LENGTH = 160
_NONCE = re.compile(r"^[A-Za-z0-9_-]{0,32}$")
_HEX = re.compile(r"^[0-9a-f]{1,16}$")


class LinkError(Exception):
    """A token that opens nothing; `status` is 404 (forged, wrong scope) or 410 (expired, revoked)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


@dataclass(frozen=True, slots=True)
class Claims:
    scope: str
    user_id: int
    expires_at: int  # epoch ms
    nonce: str = "0"  # never empty: ".." in a URL can trip chat linkifiers


def _mac(key: bytes, body: str) -> str:
    digest = hmac.new(key, body.encode("ascii"), hashlib.sha256).digest()[:24]
    return base64.urlsafe_b64encode(digest).decode("ascii")


def derive(secret: bytes, purpose: str) -> bytes:
    """A separate key per purpose (tokens, csrf), so one MAC can never stand in for another."""
    return hmac.new(secret, f"schedbot:{purpose}".encode(), hashlib.sha256).digest()


def sign(key: bytes, claims: Claims) -> str:
    if claims.scope not in SCOPES or not _NONCE.match(claims.nonce):
        raise ValueError("bad claims")
    body = f"{claims.scope}.{claims.user_id:x}.{claims.expires_at // 1000:x}.{claims.nonce}"
    return f"{body}.{_mac(key, body)}"


def verify(key: bytes, token: str, *, scopes: frozenset[str], now_ms: int) -> Claims:
    """The token's claims, or LinkError. The signature is checked before anything else is believed."""
    if not token or len(token) > MAX_TOKEN_LENGTH or not token.isascii():
        raise LinkError(404, "malformed")
    parts = token.split(".")
    if len(parts) != 5:
        raise LinkError(404, "malformed")
    scope, user_hex, expiry_hex, nonce, mac = parts
    if not hmac.compare_digest(_mac(key, ".".join(parts[:4])), mac):
        raise LinkError(404, "bad signature")
    if scope not in scopes or not _HEX.match(user_hex) or not _HEX.match(expiry_hex) or not _NONCE.match(nonce):
        raise LinkError(404, "wrong scope")
    claims = Claims(scope=scope, user_id=int(user_hex, 16), expires_at=int(expiry_hex, 16) * 1000, nonce=nonce)
    if claims.expires_at <= now_ms and claims.scope not in LASTING:
        raise LinkError(410, "expired")
    return claims


def csrf_token(key: bytes, page_token: str, issued_ms: int) -> str:
    """A per-page form token: bound to the page token and the moment the page was rendered."""
    stamp = f"{issued_ms // 1000:x}"
    return f"{stamp}.{_mac(key, f'csrf.{page_token}.{stamp}')}"


def csrf_ok(key: bytes, page_token: str, value: str, *, now_ms: int, max_age_ms: int) -> bool:
    if len(value) > 64 or not value.isascii():
        return False
    stamp, _, mac = value.partition(".")
    if not _HEX.match(stamp) or not mac:
        return False
    if not hmac.compare_digest(_mac(key, f"csrf.{page_token}.{stamp}"), mac):
        return False
    return 0 <= now_ms - int(stamp, 16) * 1000 <= max_age_ms
