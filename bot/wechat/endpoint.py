"""`/wechat`: URL verification (GET) and message callbacks (POST) in plaintext and safe mode.

Checks run cheapest-first and before any parsing or decryption: body size (413, `BodyLimit` around
the endpoint), configuration (503), url signature (403), timestamp freshness (403), plaintext refused
while an AES key is set (403, unless WECHAT_ACCEPT_PLAINTEXT), then the msg_signature (403) and decryption (400).
A body that passed the signature but cannot be read is logged and acknowledged with `success`
(a 4xx only makes WeChat retry and show the user "service unavailable"); a (timestamp, nonce)
pair that already carried another message is refused (403). Bad input never reaches a 500;
replies are encrypted with the key the request came with.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.settings import Settings
from bot.web.middleware import BodyLimit
from bot.wechat import messages, signature
from bot.wechat.client import WeChatClient
from bot.wechat.crypto import DecryptError, InvalidSignature, MessageCrypto
from bot.wechat.dispatch import SUCCESS, Dispatcher, Replayed, UserDirectory
from bot.wechat.handler import Handler
from bot.wechat.spool import BadRecord, Record, Spool
from bot.wechat.xml import XmlRejected, text_reply
from schedule.clock import Clock, now_ms

log = logging.getLogger(__name__)
SPOOLED = "收到，系统有点忙，稍后回复你"  # the passive reply while the database is down (docs/delivery.md#spool)


class WeChatRouter(APIRouter):
    """The `/wechat` route; `asgi` is what it serves (the endpoint behind the body limit), for the app's fast
    path; `dispatcher.drain()` waits for slow answers still being computed."""

    dispatcher: Dispatcher
    endpoint: WeChatEndpoint
    asgi: ASGIApp


class _Rejected(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def _replay_key(timestamp: str, nonce: str) -> str:
    key = f"nonce:{timestamp}:{nonce}"
    return key if len(key) <= 191 else "nonce:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: str | bytes = ""
    media_type: str = "text/plain"


class WeChatEndpoint:
    """What `/wechat` does, apart from any web framework: query parameters and the body in, an `Answer` out.

    It is its own ASGI callable (`__call__`: GET verifies, POST receives), served behind `BodyLimit` by the
    route of `build_wechat_router` and, inside `create_app`, ahead of the framework's middleware, routing and
    request objects on the one path WeChat calls for every message.
    """

    def __init__(self, *, settings: Settings, clock: Clock, dispatcher: Dispatcher,
                 crypto: MessageCrypto | None, spool: Spool | None = None) -> None:
        self.settings, self.clock, self.dispatcher, self.crypto = settings, clock, dispatcher, crypto
        self.spool = spool
        self.token = settings.WECHAT_TOKEN
        self.tolerance_s = settings.WECHAT_TIMESTAMP_TOLERANCE_S

    async def _spooled(self, message: messages.InboundMessage, fields: dict[str, Any], received: int,
                       exc: Exception) -> str | None:
        """The database did not claim the message: keep it in the durable spool and say so to the user
        (docs/delivery.md#spool); None when it could not be spooled either."""
        if self.spool is None:
            log.error("wechat callback %s could not be claimed (%s: %s)", message.dedupe_key, type(exc).__name__,
                      exc)
            return None
        try:
            await self.spool.append({"fields": fields, "received_ms": received})  # as its claim, if that commits
        except Exception:
            log.exception("wechat callback %s could be neither claimed nor spooled", message.dedupe_key)
            return None
        log.warning("database unavailable (%s): wechat callback %s spooled, answered later", type(exc).__name__,
                    message.dedupe_key)
        if not message.is_user_text:  # events: nothing to say now (a greeting follows with the replay)
            return SUCCESS
        return text_reply(to_user=message.openid, from_user=message.to_user, content=SPOOLED,
                          create_time=now_ms(self.clock) // 1000)

    def _check_signed(self, q: Mapping[str, str]) -> tuple[str, str]:
        timestamp, nonce = q.get("timestamp", ""), q.get("nonce", "")
        if not timestamp or not nonce or not q.get("signature"):
            raise _Rejected(400, "signature, timestamp or nonce missing")
        if not signature.check_url_signature(self.token, q.get("signature"), timestamp, nonce):
            raise _Rejected(403, "bad signature")
        return timestamp, nonce

    def _check_fresh(self, timestamp: str) -> None:
        if not timestamp.isdigit():
            raise _Rejected(400, "timestamp is not a number")
        if self.tolerance_s and abs(now_ms(self.clock) // 1000 - int(timestamp)) > self.tolerance_s:
            raise _Rejected(403, "stale timestamp")

    def verify(self, q: Mapping[str, str]) -> Answer:
        if not self.settings.wechat_configured:
            return Answer(503, "wechat not configured")
        try:
            timestamp, _nonce = self._check_signed(q)
            self._check_fresh(timestamp)
        except _Rejected as exc:
            log.warning("wechat verify rejected: %s", exc)
            return Answer(exc.status)
        return Answer(200, q.get("echostr", ""))

    async def receive(self, q: Mapping[str, str], read_body: Callable[[], Awaitable[bytes]]) -> Answer:
        """A message callback; past the size limit, `read_body` raises (the body limit around it answers 413)."""
        dispatcher, crypto, settings = self.dispatcher, self.crypto, self.settings
        arrived = dispatcher.monotonic()  # the reply budget starts now, not after the database
        if not settings.wechat_configured:
            return Answer(503, "wechat not configured")
        safe_mode = q.get("encrypt_type", "raw").lower() == "aes"
        key_index = 0
        try:
            body = await read_body()
            timestamp, nonce = self._check_signed(q)
            self._check_fresh(timestamp)
            if safe_mode and crypto is None:
                raise _Rejected(400, "safe-mode message but WECHAT_ENCODING_AES_KEY is not set")
            if not safe_mode and crypto is not None and not settings.WECHAT_ACCEPT_PLAINTEXT:
                raise _Rejected(403, "plaintext post while an AES key is set (WECHAT_ACCEPT_PLAINTEXT=1 allows it)")
        except _Rejected as exc:
            log.warning("wechat callback rejected (%d): %s", exc.status, exc)
            return Answer(exc.status)
        try:  # signed from here on: an unreadable body is acknowledged, not refused
            fields = messages.parse_body(body.decode("utf-8", "replace"))
            if safe_mode:
                assert crypto is not None
                encrypt = fields.get("Encrypt")
                if not isinstance(encrypt, str) or not encrypt:
                    raise XmlRejected("safe-mode body without Encrypt")
                plaintext, key_index = crypto.decrypt_keyed(encrypt, q.get("msg_signature"), timestamp, nonce)
                fields = messages.parse_body(plaintext)
            message = messages.from_fields(fields)
        except InvalidSignature:
            log.warning("wechat callback rejected (403): bad msg_signature")
            return Answer(403)
        except DecryptError as exc:  # signed but unreadable with our keys: a configuration problem
            log.warning("wechat callback rejected (400): %s; check WECHAT_ENCODING_AES_KEY", exc)
            return Answer(400)
        except (XmlRejected, RecursionError, ValueError) as exc:  # ValueError: pydantic on odd field values
            log.warning("wechat callback with an unreadable body acknowledged: %s", exc)
            return Answer(200, SUCCESS)
        received = now_ms(self.clock)
        try:
            reply = await dispatcher.handle(message, arrived=arrived, replay_key=_replay_key(timestamp, nonce),
                                            received_ms=received)
        except Replayed:
            log.warning("wechat callback rejected (403): timestamp/nonce reused for another message")
            return Answer(403)
        except Exception as exc:  # before the claim committed: the database is down or does not answer
            spooled = await self._spooled(message, fields, received, exc)
            if spooled is None:
                return Answer(503)  # not even spooled: let WeChat retry
            reply = spooled
        if reply == SUCCESS:
            return Answer(200, SUCCESS)
        if safe_mode and crypto is not None:
            reply = crypto.encrypt_reply(reply, nonce=secrets.token_hex(5), timestamp=str(now_ms(self.clock) // 1000),
                                         key_index=key_index)
        return Answer(200, reply, "application/xml")


    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI: GET verifies, POST receives a callback; whoever routes here has checked the path and method."""
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        if scope["method"] == "GET":
            answer = self.verify(query)
        else:
            answer = await self.receive(query, lambda: _body(receive))
        body = answer.body.encode("utf-8") if isinstance(answer.body, str) else answer.body
        content_type = answer.media_type + ("; charset=utf-8" if answer.media_type.startswith("text/") else "")
        await send({"type": "http.response.start", "status": answer.status,
                    "headers": [(b"content-length", str(len(body)).encode()),
                                (b"content-type", content_type.encode())]})
        await send({"type": "http.response.body", "body": body})


def serves(scope: Scope) -> bool:
    """Whether this request is one the endpoint answers (GET or POST on /wechat)."""
    return scope["type"] == "http" and scope["method"] in ("GET", "POST") and _route_path(scope) == "/wechat"


def build_wechat_router(*, settings: Settings, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                        handler: Handler, client: WeChatClient | None, users: UserDirectory,
                        reply_budget_s: float = 4.0, crypto: MessageCrypto | None = None,
                        monotonic: Callable[[], float] | None = None, spool: Spool | None = None) -> WeChatRouter:
    """The `/wechat` route around one dispatcher; `users` finds or creates the user a message comes from."""
    if crypto is None and settings.WECHAT_ENCODING_AES_KEY:
        crypto = MessageCrypto(settings.WECHAT_TOKEN, settings.WECHAT_ENCODING_AES_KEY, settings.WECHAT_APP_ID,
                               previous_key=settings.WECHAT_PREVIOUS_ENCODING_AES_KEY)
    dispatcher = Dispatcher(sessions=sessions, clock=clock, handler=handler, users=users, client=client,
                            reply_budget_s=reply_budget_s, monotonic=monotonic)
    endpoint = WeChatEndpoint(settings=settings, clock=clock, dispatcher=dispatcher, crypto=crypto, spool=spool)
    router = WeChatRouter(tags=["wechat"])
    router.dispatcher, router.endpoint, router.asgi = dispatcher, endpoint, BodyLimit(endpoint)
    # an endpoint that is not a function is served as the ASGI app it is (no Request object built for it)
    router.add_route("/wechat", router.asgi, methods=["GET", "POST"], include_in_schema=False)  # type: ignore[arg-type]
    return router


def _route_path(scope: Scope) -> str:
    path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
    return path[len(root):] if root and path.startswith(root) else path


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def replay_spool(spool: Spool, dispatcher: Dispatcher) -> int:
    """Replay what the spool holds through the dispatcher, in order, as messages whose passive reply is long
    gone: the answers go through the outbox (custom message). Raises while the database is still down."""

    async def handle(record: Record) -> None:
        fields = record.get("fields")
        try:
            if not isinstance(fields, dict):
                raise TypeError("fields")
            message, received_ms = messages.from_fields(fields), int(record["received_ms"])
        except (KeyError, TypeError, ValueError) as exc:  # not a record the webhook wrote
            raise BadRecord(type(exc).__name__) from None
        await dispatcher.handle(message, arrived=dispatcher.monotonic() - dispatcher.reply_budget_s,
                                received_ms=received_ms, spooled=True)
        await dispatcher.drain()  # its answer queued before the next message is handled

    return await spool.replay(handle)
