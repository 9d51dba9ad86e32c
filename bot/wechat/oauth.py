"""WeChat's silent web OAuth (`snsapi_base`) for the itinerary page: the authorize URL, and the code exchange
(`sns/oauth2/access_token`) over the same HTTP transport as every other WeChat call (`bot.wechat.transport`)."""

from __future__ import annotations

import json
import logging
import re
from urllib.parse import urlencode

from bot.wechat.errors import WeChatTransportError
from bot.wechat.transport import AiohttpTransport, Transport

log = logging.getLogger("schedbot.pages")
_CODE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


class WebOAuth:
    """WeChat's web OAuth for one official account: the authorize URL and the code exchange."""

    def __init__(self, *, app_id: str, app_secret: str, api_base: str, oauth_base: str,
                 timeout_s: float = 5.0, transport: Transport | None = None) -> None:
        self.app_id, self._secret = app_id, app_secret
        self._api_base, self._oauth_base = api_base.rstrip("/"), oauth_base.rstrip("/")
        self._timeout = timeout_s
        self._transport = transport  # None: one short-lived connection per exchange (a rare, interactive call)

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
        transport = self._transport or AiohttpTransport(self._api_base, timeout=self._timeout)
        try:
            _status, body = await transport.get("sns/oauth2/access_token", params=params)
            data = json.loads(body)
        except (WeChatTransportError, ValueError) as exc:
            log.warning("web OAuth: sns/oauth2/access_token unreachable (%s)", type(exc).__name__)
            return None
        finally:
            if self._transport is None:
                await transport.aclose()
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
