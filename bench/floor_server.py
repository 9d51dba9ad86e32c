"""The floor: the least code that does the webhook's I/O for one message, on the same uvicorn as the app.

Per POST /wechat: check the signature (wechatpy), parse the XML (wechatpy), `intent.parse_all` the text, then
one transaction on the project's own tables (schedule.model) — the dedupe row (inbound_messages, with the
reply), the user's row with its customer-service window opened (one upsert), the item and its reminder —
commit, and answer with the passive XML reply (wechatpy). No ScheduleService, no dispatcher, no handler:
what schedbot spends beyond this per message is the price of its own code (bench/floor_vs_serve.py).

A retried MsgId hits the dedupe row's unique key: the transaction rolls back and the stored reply is sent.
Run by bench/floor_vs_serve.py as `uvicorn bench.floor_server:build_app --factory` with
BENCH_DATABASE_URL and BENCH_TOKEN set; GET /bench/counts answers its statement and commit counts.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, cast
from urllib.parse import parse_qs
from zoneinfo import ZoneInfo

from sqlalchemy import Table, func, insert, select
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.types import Receive, Scope, Send
from wechatpy import parse_message
from wechatpy.exceptions import InvalidSignatureException
from wechatpy.replies import TextReply
from wechatpy.utils import check_signature

import intent
from bench.statements import StatementCounter, counts_app
from intent.model import CreateIntent
from schedule.db import create_engine
from schedule.model import InboundMessageRow, ReminderRow, ScheduleItemRow, UserRow

TZ = ZoneInfo("Asia/Shanghai")
USERS = cast(Table, UserRow.__table__)
ITEMS = cast(Table, ScheduleItemRow.__table__)
REMINDERS = cast(Table, ReminderRow.__table__)
INBOUND = cast(Table, InboundMessageRow.__table__)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class Floor:
    """The bare ASGI app: one message in, one transaction, one passive reply out."""

    def __init__(self, engine: AsyncEngine, token: str) -> None:
        self._engine, self._token = engine, token
        self._sqlite = engine.dialect.name == "sqlite"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/healthz":
            await _answer(send, 200, b"ok", b"text/plain")
            return
        query = {k: v[0] for k, v in parse_qs(scope.get("query_string", b"").decode("latin-1")).items()}
        try:
            check_signature(self._token, query.get("signature", ""), query.get("timestamp", ""),
                            query.get("nonce", ""))
        except InvalidSignatureException:
            await _answer(send, 403, b"bad signature", b"text/plain")
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await _answer(send, 200, (await self.handle(body)).encode(), b"application/xml")

    async def handle(self, body: bytes) -> str:
        message = parse_message(body)
        now = datetime.now(TZ)
        stamp = _ms(now)
        text = str(getattr(message, "content", "") or "")
        parsed = [i for i in intent.parse_all(text, now=now, tz=TZ) if isinstance(i, CreateIntent)]
        create = parsed[0] if parsed else None
        anchor = (create.start_at or create.due_at) if create is not None else None
        reply = TextReply(message=message, content=f"已记下：{create.title}" if create is not None and anchor
                          else "没听懂").render()
        key = f"{message.source}:{message.id}"
        try:
            async with self._engine.begin() as conn:
                await conn.execute(insert(INBOUND).values(dedupe_key=key, received_at=stamp, status="done",
                                                          reply=reply))
                user_id = await self._user(conn, str(message.source), stamp)
                if create is not None and anchor is not None:
                    item = await conn.execute(insert(ITEMS).values(
                        user_id=user_id, kind=create.kind, title=create.title, status="active",
                        start_at=_ms(create.start_at) if create.start_at else None,
                        due_at=_ms(create.due_at) if create.due_at else None, all_day=create.all_day,
                        timezone="Asia/Shanghai", source_channel="wechat", source_message_id=str(message.id),
                        created_at=stamp, updated_at=stamp, sequence=0))
                    if create.reminder is not None:
                        at = _ms(create.reminder.remind_at)
                        await conn.execute(insert(REMINDERS).values(
                            user_id=user_id, item_id=item.lastrowid, remind_at=at,
                            offset_minutes=create.reminder.offset_minutes, channel="wechat", status="pending",
                            attempts=0, next_attempt_at=at, created_at=stamp, updated_at=stamp, once=False))
        except IntegrityError:  # a WeChat retry of a MsgId already answered: the stored reply again
            async with self._engine.connect() as conn:
                stored = await conn.scalar(select(INBOUND.c.reply).where(INBOUND.c.dedupe_key == key))
            return str(stored or "success")
        return reply

    async def _user(self, conn: Any, openid: str, stamp: int) -> int:
        """The user's id, created at need, with the customer-service window opened by this message: one upsert."""
        opened = {"window_kind": "message", "window_opened_at": stamp, "window_sent_count": 0,
                  "last_user_message_at": stamp}
        values = {"wechat_openid": openid, "timezone": "Asia/Shanghai", "subscribed": True, "created_at": stamp,
                  "link_epoch": 0, **opened}
        if self._sqlite:
            lite = sqlite_insert(USERS).values(values)
            return int((await conn.execute(lite.on_conflict_do_update(
                index_elements=[USERS.c.wechat_openid], set_=opened).returning(USERS.c.id))).scalar_one())
        my = mysql_insert(USERS).values(values)  # LAST_INSERT_ID(id): the existing row's id as lastrowid
        result = await conn.execute(my.on_duplicate_key_update(id=func.last_insert_id(USERS.c.id), **opened))
        return int(result.lastrowid)


async def _answer(send: Send, status: int, body: bytes, kind: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def build_app() -> Any:
    """uvicorn factory: the floor on BENCH_DATABASE_URL, statements counted, parser dictionaries loaded."""
    intent.parse_all("明天下午三点开会", now=datetime.now(TZ), tz=TZ)  # dictionaries now, not on a measured request
    counter = StatementCounter()
    counter.install()
    return counts_app(Floor(create_engine(os.environ["BENCH_DATABASE_URL"]), os.environ["BENCH_TOKEN"]), counter)
