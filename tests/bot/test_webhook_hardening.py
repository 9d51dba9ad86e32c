"""WeChat edge regressions at `/wechat`: forged and replayed posts, key rotation, hostile bodies, users'
own markup, the reply budget from arrival, answers kept when finishing fails, reachability, scancode."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
import xmltodict
from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from webhook_helpers import (
    AES_KEY,
    APP_ID,
    TOKEN,
    FakeMonotonic,
    RecordingHandler,
    bare_app,
    content_of,
    http,
    now_s,
    settings,
    signed,
)

from bot.wechat.crypto import DecryptError, MessageCrypto
from bot.wechat.dispatch import TEXT_ONLY, VOICE_UNRECOGNISED
from fakes.wechat import encrypt_message, event_message, text_message
from schedule.db import create_engine, session_factory
from schedule.model import DeliveryLogRow, InboundMessageRow, OutboundMessageRow, UserRow
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

Sessions = async_sessionmaker[AsyncSession]
OTHER_KEY = "B" * 43
SAFE_ONLY = {"WECHAT_ACCEPT_PLAINTEXT": False}


# --- 1. forged posts: plaintext refused in safe mode, (timestamp, nonce) accepted once -------------

async def test_plaintext_post_is_refused_when_an_aes_key_is_set(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler, config=settings(**SAFE_ONLY))
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o", "hi", msg_id=1,
                                                                                      create_time=1))
    assert r.status_code == 403 and not handler.seen


async def test_plaintext_accepted_during_a_mode_switch(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler, config=settings(WECHAT_ACCEPT_PLAINTEXT=True))
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o", "hi", msg_id=1,
                                                                                      create_time=1))
    assert r.status_code == 200 and [m.content for m in handler.seen] == ["hi"]


async def test_replayed_timestamp_and_nonce_with_another_body_is_refused(sessions: Sessions,
                                                                         clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler, config=settings(WECHAT_ENCODING_AES_KEY=""))
    leaked = signed(clock, "leaked")
    async with http(app) as client:
        first = await client.post("/wechat", params=leaked, content=text_message("o-a", "真的", msg_id=11,
                                                                                  create_time=1))
        forged = await client.post("/wechat", params=leaked, content=text_message("o-victim", "伪造", msg_id=12,
                                                                                   create_time=1))
        retry = await client.post("/wechat", params=leaked, content=text_message("o-a", "真的", msg_id=11,
                                                                                  create_time=1))
        # The forged message was not claimed (the claim, sent with the nonce, needs the nonce to be its own):
        # the genuine message with that MsgId, under a signature of its own, is still handled.
        async with sessions() as session:
            keys = set(await session.scalars(select(InboundMessageRow.dedupe_key)))
        assert "msg:o-victim:12" not in keys and "msg:o-a:11" in keys
        genuine = await client.post("/wechat", params=signed(clock, "fresh"),
                                    content=text_message("o-victim", "真的", msg_id=12, create_time=1))
    assert first.status_code == 200 and forged.status_code == 403
    assert retry.status_code == 200 and retry.text == first.text  # the same message again: its stored reply
    assert genuine.status_code == 200
    assert [(m.openid, m.content) for m in handler.seen] == [("o-a", "真的"), ("o-victim", "真的")]


async def test_replay_is_refused_by_another_process(database_url: str, engine: object, clock: FrozenClock) -> None:
    engines = [create_engine(database_url) for _ in range(2)]
    handler = RecordingHandler()
    config = settings(WECHAT_ENCODING_AES_KEY="")
    apps = [bare_app(session_factory(e), clock, handler, config=config)[0] for e in engines]
    leaked = signed(clock, "leaked-2")
    try:
        async with http(apps[0]) as a, http(apps[1]) as b:
            first = await a.post("/wechat", params=leaked, content=text_message("o-a", "x", msg_id=21,
                                                                                create_time=1))
            forged = await b.post("/wechat", params=leaked, content=text_message("o-b", "y", msg_id=22,
                                                                                 create_time=1))
    finally:
        for e in engines:
            await e.dispose()
    assert (first.status_code, forged.status_code) == (200, 403)
    assert [m.openid for m in handler.seen] == ["o-a"]


# --- 2. key rotation: answered with the key the message came with -----------------------------------

async def test_message_under_the_previous_key_is_answered_with_that_key(sessions: Sessions,
                                                                         clock: FrozenClock) -> None:
    config = settings(WECHAT_ENCODING_AES_KEY=OTHER_KEY, WECHAT_PREVIOUS_ENCODING_AES_KEY=AES_KEY, **SAFE_ONLY)
    app, _ = bare_app(sessions, clock, RecordingHandler(reply="好的"), config=config)
    old = MessageCrypto(TOKEN, AES_KEY, APP_ID)
    query, body = encrypt_message(old, text_message("o-rot", "hi", msg_id=31, create_time=1),
                                  timestamp=now_s(clock), nonce="rot")
    async with http(app) as client:
        r = await client.post("/wechat", params=query, content=body)
    outer = xmltodict.parse(r.text)["xml"]
    inner = old.decrypt(outer["Encrypt"], outer["MsgSignature"], outer["TimeStamp"], outer["Nonce"])
    assert content_of(inner) == "好的"
    with pytest.raises(DecryptError):  # and not readable with the new key alone
        MessageCrypto(TOKEN, OTHER_KEY, APP_ID).decrypt(outer["Encrypt"], outer["MsgSignature"],
                                                        outer["TimeStamp"], outer["Nonce"])


# --- 3. hostile bodies: never a 500, authenticated garbage is acknowledged ----------------------------

async def test_deeply_nested_json_is_acknowledged_not_a_500(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    body = '{"a":' * 6000 + "1" + "}" * 6000
    async with http(app) as client:
        plain = await client.post("/wechat", params=signed(clock), content=body)
        query, wrapped = encrypt_message(MessageCrypto(TOKEN, AES_KEY, APP_ID), body, timestamp=now_s(clock),
                                         nonce="deep")
        safe = await client.post("/wechat", params=query, content=wrapped)
    assert (plain.status_code, plain.text) == (200, "success")
    assert (safe.status_code, safe.text) == (200, "success")
    assert not handler.seen


# --- 4. users who type markup -------------------------------------------------------------------------

@pytest.mark.parametrize("typed", ["<!DOCTYPE html>", '<!ENTITY x SYSTEM "file:///etc/passwd">',
                                   "<![INCLUDE[ 明天开会 ]]>"])
async def test_user_text_with_markup_declarations_reaches_the_handler(sessions: Sessions, clock: FrozenClock,
                                                                      typed: str) -> None:
    handler = RecordingHandler(reply="收到")
    app, _ = bare_app(sessions, clock, handler)
    crypto = MessageCrypto(TOKEN, AES_KEY, APP_ID)
    async with http(app) as client:
        plain = await client.post("/wechat", params=signed(clock),
                                  content=text_message("o-m", typed, msg_id=41, create_time=1))
        query, body = encrypt_message(crypto, text_message("o-m", typed, msg_id=42, create_time=1),
                                      timestamp=now_s(clock), nonce="markup")
        safe = await client.post("/wechat", params=query, content=body)
    assert plain.status_code == 200 and content_of(plain.text) == "收到"
    assert safe.status_code == 200
    assert [m.content for m in handler.seen] == [typed, typed]


# --- 5. the reply budget runs from arrival; a computed answer is never dropped ----------------------

@dataclass
class SlowDirectory:
    """The real user directory behind a database that takes `lookup_s` (on the fake monotonic clock)."""

    service: ScheduleService
    monotonic: FakeMonotonic
    lookup_s: float
    calls: list[str] = field(default_factory=list)

    async def get_or_create_user(self, openid: str) -> Any:
        self.calls.append(openid)
        self.monotonic.now += self.lookup_s
        return await self.service.get_or_create_user(openid)

    async def forget_user(self, user_id: int) -> None:
        await self.service.forget_user(user_id)


async def _outbox_texts(sessions: Sessions) -> list[str]:
    async with sessions() as session:
        rows = (await session.scalars(select(OutboundMessageRow).order_by(OutboundMessageRow.id))).all()
    return [row.payload["text"] for row in rows]


async def test_slow_lookup_counts_against_the_budget_and_the_answer_is_queued(sessions: Sessions,
                                                                               clock: FrozenClock) -> None:
    mono = FakeMonotonic()
    users = SlowDirectory(ScheduleService(sessions, clock), mono, lookup_s=4.5)
    handler = RecordingHandler(reply="算好的答案")
    app, router = bare_app(sessions, clock, handler, users=users, monotonic=mono)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o-slowdb", "问", msg_id=51,
                                                                                      create_time=1))
        await router.dispatcher.drain()
    assert (r.status_code, r.text) == (200, "success")  # WeChat has given up on a passive reply by now
    assert await _outbox_texts(sessions) == ["算好的答案"]


async def test_fast_lookup_still_answers_passively(sessions: Sessions, clock: FrozenClock) -> None:
    mono = FakeMonotonic()
    users = SlowDirectory(ScheduleService(sessions, clock), mono, lookup_s=0.5)
    app, _ = bare_app(sessions, clock, RecordingHandler(reply="马上"), users=users, monotonic=mono)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o-ok", "问", msg_id=52,
                                                                                      create_time=1))
    assert content_of(r.text) == "马上" and await _outbox_texts(sessions) == []


async def _break_user_updates(sessions: Sessions) -> None:
    """A database fault in the finishing step: every UPDATE of users fails (a trigger, both backends)."""
    async with sessions.begin() as session:
        if (await session.connection()).dialect.name == "sqlite":
            await session.execute(text("CREATE TRIGGER users_broken BEFORE UPDATE ON users "
                                       "BEGIN SELECT RAISE(ABORT, 'injected fault'); END"))
        else:
            await session.execute(text("CREATE TRIGGER users_broken BEFORE UPDATE ON users FOR EACH ROW "
                                       "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected fault'"))


async def test_failure_while_finishing_keeps_a_passive_answer(sessions: Sessions, clock: FrozenClock) -> None:
    await ScheduleService(sessions, clock).get_or_create_user("o-fault")
    await _break_user_updates(sessions)
    app, _ = bare_app(sessions, clock, RecordingHandler(reply="答案还在"))
    async with http(app) as client:
        body = text_message("o-fault", "问", msg_id=53, create_time=1)
        r = await client.post("/wechat", params=signed(clock), content=body)
        retry = await client.post("/wechat", params=signed(clock), content=body)
    assert r.status_code == 200 and content_of(r.text) == "答案还在"
    assert retry.text == r.text  # stored for WeChat's retries too


async def test_failure_while_finishing_a_late_answer_still_queues_it(sessions: Sessions,
                                                                     clock: FrozenClock) -> None:
    mono = FakeMonotonic()
    service = ScheduleService(sessions, clock)
    await service.get_or_create_user("o-late")
    await _break_user_updates(sessions)
    app, router = bare_app(sessions, clock, RecordingHandler(reply="迟到的答案"),
                           users=SlowDirectory(service, mono, lookup_s=4.5), monotonic=mono)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o-late", "问", msg_id=54,
                                                                                      create_time=1))
        await router.dispatcher.drain()
    assert r.text == "success"
    assert await _outbox_texts(sessions) == ["迟到的答案"]


# --- 6. a user who writes again is reachable again -------------------------------------------------

async def test_user_marked_unreachable_is_reachable_after_writing(sessions: Sessions, clock: FrozenClock) -> None:
    user = await ScheduleService(sessions, clock).get_or_create_user("o-back")
    async with sessions.begin() as session:  # the worker got 43004/43019 earlier
        await session.execute(update(UserRow).where(UserRow.id == user.id).values(subscribed=False))
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        await client.post("/wechat", params=signed(clock), content=text_message("o-back", "我回来了", msg_id=61,
                                                                                  create_time=1))
    async with sessions() as session:
        assert await session.scalar(select(UserRow.subscribed).where(UserRow.id == user.id)) is True


# --- 7. scancode events -------------------------------------------------------------------------------

@pytest.mark.parametrize("event", ["scancode_push", "scancode_waitmsg"])
async def test_scancode_events_open_the_click_window_and_get_a_reply(sessions: Sessions, clock: FrozenClock,
                                                                      event: str) -> None:
    body = event_message("o-scan", event, create_time=now_s(clock), key="SCAN_1").replace(
        "</xml>", "<ScanCodeInfo><ScanType><![CDATA[qrcode]]></ScanType>"
                  "<ScanResult><![CDATA[https://example.com/x]]></ScanResult></ScanCodeInfo></xml>")
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=body)
    assert r.status_code == 200 and content_of(r.text)
    async with sessions() as session:
        user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-scan"))
    assert user is not None and user.window_kind == "click" and user.window_opened_at == now_s(clock) * 1000


# --- 17. message types without text --------------------------------------------------------------------

def _typed(msg_type: str, extra: str) -> str:
    return (f"<xml><ToUserName><![CDATA[gh]]></ToUserName><FromUserName><![CDATA[o-types]]></FromUserName>"
            f"<CreateTime>1</CreateTime><MsgType><![CDATA[{msg_type}]]></MsgType>{extra}"
            f"<MsgId>{sum(map(ord, msg_type))}</MsgId></xml>")


@pytest.mark.parametrize(("msg_type", "extra", "expect"), [
    ("voice", "<MediaId><![CDATA[m]]></MediaId><Format><![CDATA[amr]]></Format>", VOICE_UNRECOGNISED),
    ("location", "<Location_X>23.1</Location_X><Location_Y>113.3</Location_Y><Scale>20</Scale>"
                 "<Label><![CDATA[某地]]></Label>", TEXT_ONLY),
    ("link", "<Title><![CDATA[t]]></Title><Description><![CDATA[d]]></Description><Url><![CDATA[u]]></Url>",
     TEXT_ONLY),
    ("video", "<MediaId><![CDATA[m]]></MediaId><ThumbMediaId><![CDATA[t]]></ThumbMediaId>", TEXT_ONLY),
    ("shortvideo", "<MediaId><![CDATA[m]]></MediaId><ThumbMediaId><![CDATA[t]]></ThumbMediaId>", TEXT_ONLY),
    ("hologram", "<Beam><Depth>3</Depth></Beam>", None),
])
async def test_message_types_without_text(sessions: Sessions, clock: FrozenClock, msg_type: str, extra: str,
                                          expect: str | None) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=_typed(msg_type, extra))
    assert r.status_code == 200 and not handler.seen
    assert (r.text == "success") if expect is None else (content_of(r.text) == expect)


async def test_json_format_text_message_is_answered(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="JSON 收到")
    app, _ = bare_app(sessions, clock, handler)
    body = json.dumps({"ToUserName": "gh", "FromUserName": "o-json", "CreateTime": 1, "MsgType": "text",
                       "Content": "<!DOCTYPE html>", "MsgId": 71}, ensure_ascii=False)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=body.encode())
    assert r.status_code == 200 and [m.content for m in handler.seen] == ["<!DOCTYPE html>"]


# --- 14. a template the user blocked --------------------------------------------------------------

def _job_finish(openid: str, msg_id: str, status: str) -> str:
    return (f"<xml><ToUserName><![CDATA[gh]]></ToUserName><FromUserName><![CDATA[{openid}]]></FromUserName>"
            f"<CreateTime>1395658920</CreateTime><MsgType><![CDATA[event]]></MsgType>"
            f"<Event><![CDATA[TEMPLATESENDJOBFINISH]]></Event><MsgID>{msg_id}</MsgID>"
            f"<Status><![CDATA[{status}]]></Status></xml>")


async def test_template_blocked_by_the_user_fails_its_outbox_row(sessions: Sessions, clock: FrozenClock) -> None:
    user = await ScheduleService(sessions, clock).get_or_create_user("o-tpl")
    async with sessions.begin() as session:
        rows = [OutboundMessageRow(user_id=user.id, idempotency_key=f"tpl:{n}", kind="reminder",
                                   payload={"text": "提醒"}, channel="template", status="sent", attempts=1,
                                   next_attempt_at=0, receipt={"parts": {"0": msgid}}, created_at=0, updated_at=0)
                for n, msgid in enumerate(["1000041", "1000042"])]
        session.add_all(rows)
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock),
                              content=_job_finish("o-tpl", "1000042", "failed:user block"))
    assert (r.status_code, r.text) == (200, "success")
    async with sessions() as session:
        states = (await session.execute(select(OutboundMessageRow.idempotency_key, OutboundMessageRow.status)
                                        .order_by(OutboundMessageRow.id))).all()
        logs = (await session.scalars(select(DeliveryLogRow))).all()
    assert [tuple(s) for s in states] == [("tpl:0", "sent"), ("tpl:1", "failed")]
    assert [(log.outbox_id, log.status, log.provider_message_id) for log in logs] == \
        [(rows[1].id, "failed", "1000042")]


# --- 15 (the webhook's share). unsubscribing blanks the stored replies ----------------------------------

async def test_unsubscribe_blanks_stored_replies(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler(reply="你的私事：明天九点看牙医"))
    async with http(app) as client:
        await client.post("/wechat", params=signed(clock), content=text_message("o-priv", "看牙", msg_id=151,
                                                                                  create_time=1))
        await client.post("/wechat", params=signed(clock), content=event_message("o-priv", "unsubscribe",
                                                                                   create_time=2))
    async with sessions() as session:
        replies = (await session.scalars(select(InboundMessageRow.reply))).all()
    assert not any("看牙医" in (reply or "") for reply in replies)


@pytest.mark.parametrize("body", [
    '{"MsgType": {"a": 1}, "FromUserName": "u"}',
    '{"MsgType": "text", "FromUserName": "u", "CreateTime": "soon"}',
    '{"MsgType": "text", "FromUserName": ["u"], "CreateTime": 1}',
    '{"MsgType": "text", "FromUserName": "u", "CreateTime": 1e400, "Content": null}',
    '{"MsgType": "event", "FromUserName": "u", "Event": "subscribe_msg_popup_event",'
    ' "SubscribeMsgPopupEvent": [[[[1]]]]}',
    "[" * 3000 + "]" * 3000,
    '{"a": "' + "\\ud800" * 10 + '"}',
])
async def test_hostile_json_bodies_never_500(sessions: Sessions, clock: FrozenClock, body: str) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=body.encode())
    assert r.status_code == 200
