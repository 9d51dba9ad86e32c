"""`/wechat`: URL verification (GET) and message callbacks (POST) in plaintext and safe mode.

Checks run cheapest-first and before any parsing or decryption: configuration (503), body
size (413), url signature (403), timestamp freshness (403), plaintext refused while an AES key
is set (403, unless WECHAT_ACCEPT_PLAINTEXT), then the msg_signature (403) and decryption (400).
A body that passed the signature but cannot be read is logged and acknowledged with `success`
(a 4xx only makes WeChat retry and show the user "service unavailable"); a (timestamp, nonce)
pair that already carried another message is refused (403). Bad input never reaches a 500;
replies are encrypted with the key the request came with.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.handler import Handler
from bot.settings import Settings
from bot.wechat import messages, signature
from bot.wechat.client import WeChatClient
from bot.wechat.crypto import DecryptError, InvalidSignature, MessageCrypto
from bot.wechat.dispatch import SUCCESS, Dispatcher, Replayed, UserDirectory
from bot.wechat.xml import XmlRejected
from schedule.clock import Clock, now_ms

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 64 * 1024


class WeChatRouter(APIRouter):
    """The `/wechat` routes; `dispatcher.drain()` waits for slow answers still being computed."""

    dispatcher: Dispatcher


def _plain(status: int, text: str = "") -> Response:
    return PlainTextResponse(text, status_code=status)


class _Rejected(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise _Rejected(413, "body over limit")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _Rejected(413, "body over limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _replay_key(timestamp: str, nonce: str) -> str:
    key = f"nonce:{timestamp}:{nonce}"
    return key if len(key) <= 191 else "nonce:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def build_wechat_router(*, settings: Settings, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                        handler: Handler, client: WeChatClient | None, users: UserDirectory | None = None,
                        reply_budget_s: float = 4.0, max_body_bytes: int = MAX_BODY_BYTES,
                        crypto: MessageCrypto | None = None,
                        monotonic: Callable[[], float] | None = None) -> WeChatRouter:
    if users is None:
        from schedule.service import ScheduleService

        users = ScheduleService(sessions, clock, default_timezone=settings.H5_DEFAULT_TIMEZONE)
    if crypto is None and settings.WECHAT_ENCODING_AES_KEY:
        crypto = MessageCrypto(settings.WECHAT_TOKEN, settings.WECHAT_ENCODING_AES_KEY, settings.WECHAT_APP_ID,
                               previous_key=settings.WECHAT_PREVIOUS_ENCODING_AES_KEY)
    dispatcher = Dispatcher(sessions=sessions, clock=clock, handler=handler, users=users, client=client,
                            reply_budget_s=reply_budget_s, monotonic=monotonic)
    router = WeChatRouter(tags=["wechat"])
    router.dispatcher = dispatcher
    token = settings.WECHAT_TOKEN
    tolerance_s = settings.WECHAT_TIMESTAMP_TOLERANCE_S

    def check_signed(request: Request) -> tuple[str, str]:
        q = request.query_params
        timestamp, nonce = q.get("timestamp", ""), q.get("nonce", "")
        if not timestamp or not nonce or not q.get("signature"):
            raise _Rejected(400, "signature, timestamp or nonce missing")
        if not signature.check_url_signature(token, q.get("signature"), timestamp, nonce):
            raise _Rejected(403, "bad signature")
        return timestamp, nonce

    def check_fresh(timestamp: str) -> None:
        if not timestamp.isdigit():
            raise _Rejected(400, "timestamp is not a number")
        if tolerance_s and abs(now_ms(clock) // 1000 - int(timestamp)) > tolerance_s:
            raise _Rejected(403, "stale timestamp")

    @router.get("/wechat", include_in_schema=False)
    async def verify(request: Request) -> Response:
        if not settings.wechat_configured:
            return _plain(503, "wechat not configured")
        try:
            timestamp, _nonce = check_signed(request)
            check_fresh(timestamp)
        except _Rejected as exc:
            log.warning("wechat verify rejected: %s", exc)
            return _plain(exc.status)
        return _plain(200, request.query_params.get("echostr", ""))

    @router.post("/wechat", include_in_schema=False)
    async def receive(request: Request) -> Response:
        arrived = dispatcher.monotonic()  # the reply budget starts now, not after the database
        if not settings.wechat_configured:
            return _plain(503, "wechat not configured")
        q = request.query_params
        safe_mode = q.get("encrypt_type", "raw").lower() == "aes"
        key_index = 0
        try:
            body = await _read_body(request, max_body_bytes)
            timestamp, nonce = check_signed(request)
            check_fresh(timestamp)
            if safe_mode and crypto is None:
                raise _Rejected(400, "safe-mode message but WECHAT_ENCODING_AES_KEY is not set")
            if not safe_mode and crypto is not None and not settings.WECHAT_ACCEPT_PLAINTEXT:
                raise _Rejected(403, "plaintext post while an AES key is set (WECHAT_ACCEPT_PLAINTEXT=1 allows it)")
        except _Rejected as exc:
            log.warning("wechat callback rejected (%d): %s", exc.status, exc)
            return _plain(exc.status)
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
            return _plain(403)
        except DecryptError as exc:  # signed but unreadable with our keys: a configuration problem
            log.warning("wechat callback rejected (400): %s; check WECHAT_ENCODING_AES_KEY", exc)
            return _plain(400)
        except (XmlRejected, RecursionError, ValueError) as exc:  # ValueError: pydantic on odd field values
            log.warning("wechat callback with an unreadable body acknowledged: %s", exc)
            return _plain(200, SUCCESS)
        try:
            reply = await dispatcher.handle(message, arrived=arrived, replay_key=_replay_key(timestamp, nonce))
        except Replayed:
            log.warning("wechat callback rejected (403): timestamp/nonce reused for another message")
            return _plain(403)
        except Exception:  # before the claim committed (database down): let WeChat retry
            log.exception("wechat callback %s could not be claimed", message.dedupe_key)
            return _plain(503)
        if reply == SUCCESS:
            return _plain(200, SUCCESS)
        if safe_mode and crypto is not None:
            reply = crypto.encrypt_reply(reply, nonce=secrets.token_hex(5), timestamp=str(now_ms(clock) // 1000),
                                         key_index=key_index)
        return Response(reply, media_type="application/xml")

    return router
