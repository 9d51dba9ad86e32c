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
from urllib.parse import parse_qsl, urlencode

import httpx

log = logging.getLogger("schedbot.pages")
SESSION_COOKIE, STATE_COOKIE = "sb_who", "sb_state"
SESSION_TTL_S = 30 * 86_400  # a signed-in visitor stays known for a month
UNKNOWN_TTL_S = 600  # an exchange that failed is tried again after ten minutes, not on every view
STATE_TTL_S = 600  # WeChat's codes live five minutes; the state cookie a little longer
MAX_COOKIE = 200
_STATE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_CODE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
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


class WebOAuth:
    """WeChat's web OAuth for one official account: the authorize URL and the code exchange."""

    def __init__(self, *, app_id: str, app_secret: str, api_base: str, oauth_base: str,
                 timeout_s: float = 5.0) -> None:
        self.app_id, self._secret = app_id, app_secret
        self._api_base, self._oauth_base = api_base.rstrip("/"), oauth_base.rstrip("/")
        self._timeout = timeout_s

    def authorize_url(self, redirect_uri: str, state: str) -> str:
        """Silent (`snsapi_base`): WeChat sends the browser straight back to redirect_uri with code and state.
        redirect_uri's host must be the account's 网页授权域名 (deploy/README.md)."""
        query = urlencode({"appid": self.app_id, "redirect_uri": redirect_uri, "response_type": "code",
                           "scope": "snsapi_base", "state": state})
        return f"{self._oauth_base}/connect/oauth2/authorize?{query}#wechat_redirect"

    async def openid(self, code: str) -> str | None:
        """The openid a code stands for, or None (40029 invalid, 40163 used, a snapshot-mode virtual user,
        WeChat unreachable). The web access token that comes with it is not kept: the openid is all we need."""
        if not _CODE.match(code):
            return None
        params = {"appid": self.app_id, "secret": self._secret, "code": code, "grant_type": "authorization_code"}
        try:
            async with httpx.AsyncClient(base_url=self._api_base, timeout=self._timeout) as http:
                response = await http.get("/sns/oauth2/access_token", params=params)
            data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("web OAuth: sns/oauth2/access_token unreachable (%s)", type(exc).__name__)
            return None
        if not isinstance(data, dict):
            return None
        errcode = int(data.get("errcode") or 0)
        if errcode:
            level = logging.INFO if errcode in (40029, 40163) else logging.WARNING  # a reload, a back button
            log.log(level, "web OAuth: code exchange refused (errcode %s)", errcode)
            return None
        if data.get("is_snapshotuser") == 1:  # 朋友圈's snapshot page: a virtual user, not the visitor
            return None
        openid = data.get("openid")
        return openid if isinstance(openid, str) and 0 < len(openid) <= 128 else None
