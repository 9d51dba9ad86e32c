"""WeChatClient: the one client of the service-account HTTP API: the access token, the delivery sends
(custom/typing/template/subscribe), the JS-SDK ticket's `getticket` and the account commands' calls, over an
injected `Transport` (transport.py's aiohttp one in production, an in-process one in tests).

Every call goes through `_call`, which refreshes the token once and retries once on an auth errcode and
never loops (a forced refresh at most once a minute, shared through the token store); answers are read by
errors.parse_answer into data or classified `WeChatError`s. A configuration errcode (bad AppID/secret, IP not
whitelisted), whichever call met it, pauses every call for `config_pause_s`, logs one line naming the setting,
and shows in `misconfigured` (for /healthz).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.wechat.errors import (
    ErrcodeRule,
    FailureClass,
    PartialSendError,
    WeChatAPIError,
    WeChatError,
    WeChatTransportError,
    parse_answer,
    whitelist_ip,
)
from bot.wechat.token_store import LeasedValue, LeaseStore, ProcessStore, TokenStore
from bot.wechat.transport import AiohttpTransport, Transport
from bot.wechat.xml import split_utf8, strip_illegal
from schedule.clock import Clock, now_ms

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT = 5.0  # seconds for an answer (connecting: 3 s)
MAX_CONNECTIONS = 32  # concurrent calls per process; more wait for a free keep-alive connection
# A 45002 that survived resending in halves: failed for good (no errcode, so no retry of the same payload).
BIZSEND = "message/subscribe/bizsend"
SPLIT_FAILED = ErrcodeRule(FailureClass.INVALID_PAYLOAD, "content size out of limit even in halves", alert=True)


@dataclass(frozen=True)
class SentPart:
    index: int
    msgid: str | None  # custom/send documents no msgid; kept when WeChat returns one


def _text_body(openid: str, content: str) -> dict[str, Any]:
    return {"touser": openid, "msgtype": "text", "text": {"content": content}}


def template_client_msg_id(idempotency_key: str) -> str:
    """Deterministic client_msg_id (≤ 64 bytes) so a replayed template send is deduplicated by WeChat."""
    return "sb" + hashlib.sha256(idempotency_key.encode("utf-8")).hexdigest()[:40]


def _path(api: str) -> str:
    """The path below the API origin: `cgi-bin/<api>`, or an API with a root of its own (`/wxaapi/…`)."""
    return api[1:] if api.startswith("/") else f"cgi-bin/{api}"


class WeChatClient:
    def __init__(self, *, app_id: str, app_secret: str, transport: Transport, tokens: LeaseStore, clock: Clock,
                 token_poll_s: float = 0.05, token_wait_polls: int = 200, config_pause_s: int = 600) -> None:
        self.app_id = app_id
        self._secret = app_secret
        self._clock = clock
        self._http = transport
        self._token = LeasedValue(tokens, clock, what="the access token", poll_s=token_poll_s,
                                  wait_polls=token_wait_polls)
        self._config_pause_ms = config_pause_s * 1000
        self._config_error: WeChatAPIError | None = None
        self._config_paused_until = 0
        self.misconfigured: str | None = None  # what to fix, while a configuration errcode stands

    @classmethod
    def over_http(cls, *, app_id: str, app_secret: str, clock: Clock,
                  sessions: async_sessionmaker[AsyncSession] | None, api_base: str = "https://api.weixin.qq.com",
                  timeout: float = DEFAULT_TIMEOUT, max_connections: int = MAX_CONNECTIONS,
                  token_poll_s: float = 0.05, token_wait_polls: int = 200, config_pause_s: int = 600
                  ) -> WeChatClient:
        """The client on aiohttp, every connection kept alive (the worker's concurrent sends reuse them instead
        of reconnecting); the token shared through the database, or, with `sessions` None (the commands that
        need no database), kept for this process."""
        transport = AiohttpTransport(api_base, timeout=timeout, connect_timeout=min(timeout, 3.0),
                                     max_connections=max_connections)
        tokens: LeaseStore = TokenStore(sessions, clock, f"wechat:{app_id}") if sessions is not None \
            else ProcessStore(clock)
        return cls(app_id=app_id, app_secret=app_secret, transport=transport, tokens=tokens, clock=clock,
                   token_poll_s=token_poll_s, token_wait_polls=token_wait_polls, config_pause_s=config_pause_s)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def server_time(self) -> datetime | None:
        """The WeChat API's own clock (the Date header of a call that needs no token), None when it sent none;
        a WeChatTransportError when no answer came."""
        return await self._http.server_date("cgi-bin/get_api_domain_ip")

    # --- tokens -------------------------------------------------------------------------

    async def access_token(self, *, stale: str | None = None) -> str:
        """A usable token; `stale` names one WeChat just rejected (forces a refresh past it)."""
        return await self._token.get(self._fetch_token, stale=stale)

    async def _fetch_token(self, stale: str | None) -> tuple[str, int]:
        # WeChat rejected `stale`: a plain stable_token call would hand the same token back, so the
        # refresh is forced straight away (one call, not two; at most once a minute for every process)
        force = stale is not None and await self._token.store.claim_forced_refresh()
        body: dict[str, Any] = {"grant_type": "client_credential", "appid": self.app_id, "secret": self._secret}
        if force:
            body["force_refresh"] = True
        data = await self._request("stable_token", body=body, token=None)
        token, expires_in = data.get("access_token"), data.get("expires_in")
        if not isinstance(token, str) or not isinstance(expires_in, int):
            raise WeChatTransportError("stable_token answered without access_token/expires_in")
        return token, expires_in

    # --- calls --------------------------------------------------------------------------

    def _check_configured(self) -> None:
        error = self._config_error
        if error is not None and now_ms(self._clock) < self._config_paused_until:
            raise WeChatAPIError(error.errcode or 0, error.errmsg, api=error.api)  # no call: it would fail alike

    def _configuration_failed(self, error: WeChatAPIError) -> None:
        """An account-wide configuration errcode: one ERROR line per pause naming the setting, `misconfigured`
        set, calls paused."""
        rule = error.rule
        what = f"errcode {error.errcode} ({rule.meaning}): check {rule.setting}"
        if ip := whitelist_ip(error.errmsg):
            what += f"; whitelist {ip}"
        now = now_ms(self._clock)
        if what != self.misconfigured or now >= self._config_paused_until:  # one ERROR line per pause
            log.error("wechat API misconfigured, pausing WeChat calls for %ds: %s", self._config_pause_ms // 1000,
                      what)
        self.misconfigured, self._config_error = what, error
        self._config_paused_until = now + self._config_pause_ms

    async def _request(self, api: str, *, token: str | None, body: dict[str, Any] | None = None,
                       params: Mapping[str, str] | None = None) -> dict[str, Any]:
        """One call: a POST of `body` as JSON (Chinese as raw UTF-8), or a GET without one."""
        self._check_configured()
        query = {**(params or {}), **({"access_token": token} if token is not None else {})} or None
        try:
            if body is None:
                status, answer = await self._http.get(_path(api), params=query)
            else:
                raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
                status, answer = await self._http.post(_path(api), raw, params=query)
        except WeChatTransportError as exc:  # named by the call it cut short
            raise WeChatTransportError(str(exc), maybe_delivered=exc.maybe_delivered, api=api) from None
        try:
            data = parse_answer(api, status, answer)
        except WeChatAPIError as error:
            if error.rule.failure is FailureClass.CONFIG and not error.rule.ladder:  # account-wide: stop calling
                self._configuration_failed(error)
            raise
        if self._config_error is not None:
            log.info("wechat API configuration fixed: calls succeed again")
            self._config_error, self.misconfigured = None, None
        return data

    async def _call(self, api: str, *, body: dict[str, Any] | None = None,
                    params: Mapping[str, str] | None = None) -> dict[str, Any]:
        token = await self.access_token()
        try:
            return await self._request(api, token=token, body=body, params=params)
        except WeChatAPIError as exc:
            if exc.failure is not FailureClass.AUTH:
                raise
            log.warning("wechat %s: errcode %s, refreshing the access token once", api, exc.errcode)
            rejected = exc
        fresh = await self.access_token(stale=token)
        if fresh == token:  # no new token (forced refresh already spent this minute): the retry would fail
            raise rejected
        return await self._request(api, token=fresh, body=body, params=params)  # a second auth error propagates

    async def get(self, api: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
        """`GET cgi-bin/<api>` (or `/<root>/…`) with the access token: the account commands, `getticket`."""
        return await self._call(api, params=params)

    async def post(self, api: str, body: dict[str, Any]) -> dict[str, Any]:
        """`POST cgi-bin/<api>` of a JSON body with the access token."""
        return await self._call(api, body=body)

    # --- business APIs ------------------------------------------------------------------

    async def send_text(self, openid: str, text: str, *, skip_parts: frozenset[int] = frozenset()
                        ) -> list[SentPart]:
        """Customer-service text, split into ≤ 2048-byte parts; parts in `skip_parts` were sent before."""
        sent: list[SentPart] = []
        for index, part in enumerate(split_utf8(strip_illegal(text))):
            if index in skip_parts:
                continue
            try:
                data = await self._send_part(openid, part)
            except WeChatError as exc:
                if sent:
                    raise PartialSendError(exc, [(p.index, p.msgid) for p in sent]) from exc
                raise
            msgid = data.get("msgid")
            sent.append(SentPart(index, str(msgid) if msgid is not None else None))
        return sent

    async def _send_part(self, openid: str, part: str) -> dict[str, Any]:
        """One part; on 45002 (WeChat measured it over its limit) resend it once in halves, and if that
        fails too, give up without a retry (the same payload fails the same way)."""
        try:
            return await self.post("message/custom/send", _text_body(openid, part))
        except WeChatAPIError as exc:
            if not exc.rule.split:
                raise
            log.warning("wechat custom/send: errcode 45002 on a %d-byte part, resending it in halves",
                        len(part.encode("utf-8")))
        data: dict[str, Any] = {}
        for piece in split_utf8(part, max(len(part.encode("utf-8")) // 2, 8)):
            try:
                data = await self.post("message/custom/send", _text_body(openid, piece))
            except WeChatAPIError as exc:
                if not exc.rule.split:
                    raise
                raise WeChatError(f"{exc} after resending in halves", failure=FailureClass.INVALID_PAYLOAD,
                                  rule=SPLIT_FAILED) from exc
        return data

    async def typing(self, openid: str, *, command: str = "Typing") -> None:
        await self.post("message/custom/typing", {"touser": openid, "command": command})

    async def send_subscribe(self, openid: str, template_id: str, data: dict[str, Any], *,
                             page: str | None = None) -> str | None:
        """A subscription message (订阅通知, `message/subscribe/bizsend`); the user must have granted it."""
        body: dict[str, Any] = {"touser": openid, "template_id": template_id, "data": data}
        if page:
            body["page"] = page
        result = await self.post(BIZSEND, body)
        msgid = result.get("msgid")
        return str(msgid) if msgid is not None else None

    async def send_template(self, openid: str, template_id: str, data: dict[str, Any], *,
                            client_msg_id: str, url: str | None = None) -> str | None:
        body: dict[str, Any] = {"touser": openid, "template_id": template_id, "data": data,
                                "client_msg_id": client_msg_id}
        if url:
            body["url"] = url
        result = await self.post("message/template/send", body)
        msgid = result.get("msgid")
        return str(msgid) if msgid is not None else None
