"""WeChatClient: the service-account HTTP API (tokens, custom/typing/template sends) over the aiohttp
transport of transport.py.

Every business call goes through `_call`, which refreshes the token once and retries once on
an auth errcode and never loops (a forced refresh at most once a minute, shared through the token
store); errcodes become classified `WeChatError`s (errors.py). A configuration errcode (bad
AppID/secret, IP not whitelisted) pauses every call for `config_pause_s`, logs one line naming
the setting, and shows in `misconfigured` (for /healthz).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.wechat.errors import (
    ErrcodeRule,
    FailureClass,
    PartialSendError,
    WeChatAPIError,
    WeChatError,
    WeChatTransportError,
)
from bot.wechat.token_store import CachedToken, TokenStore, usable_until
from bot.wechat.transport import AiohttpTransport
from bot.wechat.xml import split_utf8, strip_illegal
from schedule.clock import Clock, now_ms

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT = 5.0  # seconds for an answer (connecting: 3 s)
MAX_CONNECTIONS = 32  # concurrent calls per process; more wait for a free keep-alive connection
_IP = re.compile(r"invalid ip ([0-9a-fA-F.:]+)")
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


class WeChatClient:
    def __init__(self, *, app_id: str, app_secret: str, sessions: async_sessionmaker[AsyncSession],
                 clock: Clock, api_base: str = "https://api.weixin.qq.com",
                 timeout: float = DEFAULT_TIMEOUT, token_poll_s: float = 0.05,
                 token_wait_polls: int = 200, config_pause_s: int = 600,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self.app_id = app_id
        self._secret = app_secret
        self._clock = clock
        # Every connection kept alive: the worker's concurrent sends reuse them instead of reconnecting.
        self._http = AiohttpTransport(api_base, timeout=timeout, connect_timeout=min(timeout, 3.0),
                                      max_connections=max_connections)
        self._store = TokenStore(sessions, clock, f"wechat:{app_id}")
        self._memory: CachedToken | None = None
        self._lock = asyncio.Lock()
        self._poll_s = token_poll_s
        self._wait_polls = token_wait_polls
        self._config_pause_ms = config_pause_s * 1000
        self._config_error: WeChatAPIError | None = None
        self._config_paused_until = 0
        self.misconfigured: str | None = None  # what to fix, while a configuration errcode stands

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- tokens -------------------------------------------------------------------------

    def _fresh(self, cached: CachedToken | None, stale: str | None) -> bool:
        return cached is not None and cached.token != stale and cached.usable_until_ms > now_ms(self._clock)

    async def access_token(self, *, stale: str | None = None) -> str:
        """A usable token; `stale` names one WeChat just rejected (forces a refresh past it)."""
        if self._fresh(self._memory, stale):
            assert self._memory is not None
            return self._memory.token
        async with self._lock:  # one refresh per process; other processes wait on the DB lease
            for _ in range(self._wait_polls):
                if self._fresh(self._memory, stale):
                    assert self._memory is not None
                    return self._memory.token
                stored = await self._store.read()
                if self._fresh(stored, stale):
                    self._memory = stored
                    return stored.token  # type: ignore[union-attr]
                lease = await self._store.acquire(stale)
                if lease is not None:
                    return await self._refresh(lease, stale)
                await asyncio.sleep(self._poll_s)
        raise WeChatTransportError("timed out waiting for another process to refresh the access token")

    async def _refresh(self, lease: str, stale: str | None) -> str:
        try:
            # WeChat rejected `stale`: a plain stable_token call would hand the same token back, so the
            # refresh is forced straight away (one call, not two; at most once a minute for every process)
            force = stale is not None and await self._store.claim_forced_refresh()
            token, expires_in = await self._fetch_token(force=force)
        except BaseException:
            await self._store.release(lease)
            raise
        cached = CachedToken(token, usable_until(now_ms(self._clock), expires_in))
        await self._store.publish(lease, cached.token, cached.usable_until_ms)
        self._memory = cached
        return token

    async def _fetch_token(self, *, force: bool) -> tuple[str, int]:
        body: dict[str, Any] = {"grant_type": "client_credential", "appid": self.app_id, "secret": self._secret}
        if force:
            body["force_refresh"] = True
        data = await self._post("stable_token", body, token=None)
        token, expires_in = data.get("access_token"), data.get("expires_in")
        if not isinstance(token, str) or not isinstance(expires_in, int):
            raise WeChatTransportError("stable_token answered without access_token/expires_in")
        return token, expires_in

    # --- transport ----------------------------------------------------------------------

    def _check_configured(self) -> None:
        error = self._config_error
        if error is not None and now_ms(self._clock) < self._config_paused_until:
            raise WeChatAPIError(error.errcode or 0, error.errmsg, api=error.api)  # no call: it would fail alike

    def configuration_failed(self, error: WeChatAPIError) -> None:
        """An account-wide configuration errcode, met by this client or by a call made beside it (the JS-SDK
        ticket): one ERROR line per pause naming the setting, `misconfigured` set, calls paused."""
        rule = error.rule
        ip = _IP.search(error.errmsg)
        what = f"errcode {error.errcode} ({rule.meaning}): check {rule.setting}"
        if ip:
            what += f"; whitelist {ip.group(1)}"
        now = now_ms(self._clock)
        if what != self.misconfigured or now >= self._config_paused_until:  # one ERROR line per pause
            log.error("wechat API misconfigured, pausing WeChat calls for %ds: %s", self._config_pause_ms // 1000,
                      what)
        self.misconfigured, self._config_error = what, error
        self._config_paused_until = now + self._config_pause_ms

    async def _post(self, api: str, body: dict[str, Any], *, token: str | None) -> dict[str, Any]:
        self._check_configured()
        params = {"access_token": token} if token is not None else None
        raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")  # Chinese as UTF-8
        try:
            status, answer = await self._http.post(f"cgi-bin/{api}", raw, params=params)
        except WeChatTransportError as exc:  # named by the call it cut short
            raise WeChatTransportError(str(exc), maybe_delivered=exc.maybe_delivered, api=api) from None
        if status >= 500:
            raise WeChatTransportError(f"{api}: HTTP {status}")
        try:
            data = json.loads(answer)  # the bytes, whatever the content-type (WeChat sometimes says text/plain)
        except ValueError:
            raise WeChatTransportError(f"{api}: unreadable body (HTTP {status})") from None
        if not isinstance(data, dict):
            raise WeChatTransportError(f"{api}: body is not a JSON object")
        errcode = data.get("errcode", 0)
        if errcode:
            error = WeChatAPIError(int(errcode), str(data.get("errmsg", "")), api=api)
            if error.rule.failure is FailureClass.CONFIG and not error.rule.ladder:  # account-wide: stop calling
                self.configuration_failed(error)
            raise error
        if self._config_error is not None:
            log.info("wechat API configuration fixed: calls succeed again")
            self._config_error, self.misconfigured = None, None
        return data

    async def _call(self, api: str, body: dict[str, Any]) -> dict[str, Any]:
        token = await self.access_token()
        try:
            return await self._post(api, body, token=token)
        except WeChatAPIError as exc:
            if exc.failure is not FailureClass.AUTH:
                raise
            log.warning("wechat %s: errcode %s, refreshing the access token once", api, exc.errcode)
            rejected = exc
        fresh = await self.access_token(stale=token)
        if fresh == token:  # no new token (forced refresh already spent this minute): the retry would fail
            raise rejected
        return await self._post(api, body, token=fresh)  # a second auth error propagates: no loop

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
            return await self._call("message/custom/send", _text_body(openid, part))
        except WeChatAPIError as exc:
            if not exc.rule.split:
                raise
            log.warning("wechat custom/send: errcode 45002 on a %d-byte part, resending it in halves",
                        len(part.encode("utf-8")))
        data: dict[str, Any] = {}
        for piece in split_utf8(part, max(len(part.encode("utf-8")) // 2, 8)):
            try:
                data = await self._call("message/custom/send", _text_body(openid, piece))
            except WeChatAPIError as exc:
                if not exc.rule.split:
                    raise
                raise WeChatError(f"{exc} after resending in halves", failure=FailureClass.INVALID_PAYLOAD,
                                  rule=SPLIT_FAILED) from exc
        return data

    async def typing(self, openid: str, *, command: str = "Typing") -> None:
        await self._call("message/custom/typing", {"touser": openid, "command": command})

    async def send_subscribe(self, openid: str, template_id: str, data: dict[str, Any], *,
                             page: str | None = None) -> str | None:
        """A subscription message (订阅通知, `message/subscribe/bizsend`); the user must have granted it."""
        body: dict[str, Any] = {"touser": openid, "template_id": template_id, "data": data}
        if page:
            body["page"] = page
        result = await self._call(BIZSEND, body)
        msgid = result.get("msgid")
        return str(msgid) if msgid is not None else None

    async def send_template(self, openid: str, template_id: str, data: dict[str, Any], *,
                            client_msg_id: str, url: str | None = None) -> str | None:
        body: dict[str, Any] = {"touser": openid, "template_id": template_id, "data": data,
                                "client_msg_id": client_msg_id}
        if url:
            body["url"] = url
        result = await self._call("message/template/send", body)
        msgid = result.get("msgid")
        return str(msgid) if msgid is not None else None
