"""Who opened a private page: WeChat's silent web OAuth (`snsapi_base`) and a signed session cookie.

Inside WeChat's browser a visitor without a session goes once through WeChat's authorize URL; the code
that comes back is exchanged (server to server) for the visitor's openid, kept in a signed, HttpOnly,
SameSite=Lax cookie. Only the page's owner (that openid is the page user's) may act; anyone else reads.
A code that cannot be exchanged (used, expired, a snapshot-mode virtual user) leaves the visitor unknown
for a short while, so the page never loops through WeChat.

Without WECHAT_APP_ID and WECHAT_APP_SECRET there is no WeChat to forward links in and none to ask who
is reading: the private link (which reached its holder through `schedbot chat` or `schedbot user token`
on the server) is then the owner's, as a bearer link.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import secrets
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import parse_qsl, urlencode

log = logging.getLogger("schedbot.pages")
SESSION_COOKIE, STATE_COOKIE = "sb_who", "sb_state"
SESSION_TTL_S = 30 * 86_400  # a signed-in visitor stays known for a month
UNKNOWN_TTL_S = 600  # an exchange that failed is tried again after ten minutes, not on every view
STATE_TTL_S = 600  # WeChat's codes live five minutes; the state cookie a little longer
MAX_COOKIE = 200
_STATE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
DROPPED = frozenset({"code", "state"})  # what WeChat appends to redirect_uri, never carried back to the page


def in_wechat(user_agent: str) -> bool:
    """WeChat's built-in browser (phone and desktop WeChat both say MicroMessenger)."""
    return "MicroMessenger" in user_agent


@dataclass(frozen=True, slots=True)
class Session:
    openid: str  # "" when WeChat could not say who this is
    expires_at: int  # epoch seconds


def _mac(key: bytes, body: str) -> str:
    digest = hmac.new(key, body.encode("ascii"), hashlib.sha256).digest()[:18]
    return base64.urlsafe_b64encode(digest).decode("ascii")


def seal(key: bytes, openid: str, *, now_s: int, ttl_s: int) -> str:
    """The session cookie's value: `openid(base64url).expiry(hex).mac`."""
    who = base64.urlsafe_b64encode(openid.encode("utf-8")).decode("ascii").rstrip("=")
    body = f"{who}.{now_s + ttl_s:x}"
    return f"{body}.{_mac(key, body)}"


def unseal(key: bytes, value: str, *, now_s: int) -> Session | None:
    """The session a cookie carries, or None (forged, expired, not ours)."""
    if not value or len(value) > MAX_COOKIE or not value.isascii():
        return None
    parts = value.split(".")
    if len(parts) != 3:
        return None
    who, expiry, mac = parts
    if not hmac.compare_digest(_mac(key, f"{who}.{expiry}"), mac):
        return None
    try:
        expires = int(expiry, 16)
        openid = base64.urlsafe_b64decode(who + "=" * (-len(who) % 4)).decode("utf-8")
    except ValueError:
        return None
    return Session(openid, expires) if expires > now_s else None


def new_state() -> str:
    return secrets.token_urlsafe(18)


def state_ok(cookie: str | None, state: str | None) -> bool:
    return bool(cookie and state and _STATE.match(cookie) and hmac.compare_digest(cookie, state))


def clean_query(query: str) -> str:
    """A page's own query string, without what WeChat's redirect adds (kept: range, share parameters)."""
    return urlencode([(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in DROPPED][:20])


class SignIn(Protocol):
    """Who a WeChat browser is: the authorize URL to send it through, and the openid its code stands for
    (None when the code cannot be exchanged). `bot.wechat.oauth.WebOAuth` is the one that asks WeChat."""

    app_id: str

    def authorize_url(self, redirect_uri: str, state: str) -> str: ...

    async def openid(self, code: str) -> str | None: ...
