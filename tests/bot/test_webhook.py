"""`/wechat` over ASGI: verification, plaintext and safe mode, rejections, dedupe, slow answers, events."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import xmltodict
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from webhook_helpers import AES_KEY, APP_ID, TOKEN, RecordingHandler, bare_app, http, settings, signed

from bot.testing import FakeWeChatAPI, encrypt_message, event_message, sign_request, text_message
from bot.wechat import signature
from bot.wechat.client import WeChatClient
from bot.wechat.crypto import MessageCrypto
from bot.wechat.dispatch import GREETING, TEXT_ONLY
from schedule.clock import to_ms
from schedule.db import create_engine, session_factory
from schedule.model import (
    DeliveryLogRow,
    InboundMessageRow,
    OutboundMessageRow,
    ScheduleItemRow,
    UserRow,
)
from schedule.testing import FrozenClock

VECTORS: dict[str, Any] = json.loads(Path("/work/shared/eval/external/wechat_vectors.json").read_text("utf-8"))
DOC = VECTORS["official_doc_AAAAA"]
NEG = {case["id"]: case for case in VECTORS["derived_negative"]}
Sessions = async_sessionmaker[AsyncSession]


def at(ts: str | int) -> FrozenClock:
    return FrozenClock(datetime.fromtimestamp(int(ts), UTC))


def content_of(reply_xml: str) -> str:
    return str(xmltodict.parse(reply_xml, strip_whitespace=False)["xml"]["Content"])


def now_s(clock: FrozenClock) -> int:
    return int(clock.now().timestamp())


# --- verification -------------------------------------------------------------------------------

async def test_get_verify_echoes_echostr(sessions: Sessions) -> None:
    v = DOC["url_verify_get"]
    app, _ = bare_app(sessions, at(v["timestamp"]), RecordingHandler())
    async with http(app) as client:
        r = await client.get("/wechat", params={k: v[k] for k in ("signature", "timestamp", "nonce", "echostr")})
    assert (r.status_code, r.text) == (200, v["expected_response_body"])


@pytest.mark.parametrize("case_id", ["neg_url_sig_tampered_nonce", "neg_url_sig_wrong_token",
                                     "neg_url_sig_uppercase_hex", "neg_url_sig_missing_param"])
async def test_get_verify_negatives_never_echo(sessions: Sessions, case_id: str) -> None:
    c = NEG[case_id]
    app, _ = bare_app(sessions, at(c["timestamp"]), RecordingHandler(), config=settings(WECHAT_TOKEN=c["token"]))
    params = {"timestamp": c["timestamp"], "nonce": c["nonce"], "echostr": "ECHO"}
    if c["signature"]:
        params["signature"] = c["signature"]
    async with http(app) as client:
        r = await client.get("/wechat", params=params)
    assert r.status_code in (400, 403) and "ECHO" not in r.text


async def test_unconfigured_wechat_answers_503(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler(), config=settings(WECHAT_TOKEN="", WECHAT_APP_ID=""))
    async with http(app) as client:
        assert (await client.get("/wechat", params=signed(clock))).status_code == 503
        assert (await client.post("/wechat", params=signed(clock), content="<xml/>")).status_code == 503


# --- official POST vectors ----------------------------------------------------------------------

async def test_official_plain_post(sessions: Sessions) -> None:
    v = DOC["plain_post"]
    app, _ = bare_app(sessions, at(v["timestamp"]), RecordingHandler())
    params = {k: v[k] for k in ("signature", "timestamp", "nonce")}
    async with http(app) as client:
        r = await client.post("/wechat", params=params, content=json.dumps(v["body_json"]))
    assert (r.status_code, r.text) == (200, "success")


async def test_official_aes_post(sessions: Sessions) -> None:
    v = DOC["aes_post"]
    handler = RecordingHandler()
    app, _ = bare_app(sessions, at(v["timestamp"]), handler)
    params = {k: v[k] for k in ("signature", "timestamp", "nonce", "openid", "encrypt_type", "msg_signature")}
    body = f"<xml><ToUserName><![CDATA[gh]]></ToUserName><Encrypt><![CDATA[{v['body_json']['Encrypt']}]]></Encrypt></xml>"
    async with http(app) as client:
        r_xml = await client.post("/wechat", params=params, content=body)
        r_json = await client.post("/wechat", params=params, content=json.dumps(v["body_json"]))
    assert (r_xml.status_code, r_xml.text) == (200, "success")
    assert (r_json.status_code, r_json.text) == (200, "success")  # same event: deduplicated


@pytest.mark.parametrize("case_id", ["neg_msg_sig_uses_url_signature", "neg_encrypt_one_char_flipped"])
async def test_aes_negatives_rejected_403(sessions: Sessions, case_id: str) -> None:
    c = NEG[case_id]
    handler = RecordingHandler()
    app, _ = bare_app(sessions, at(c["timestamp"]), handler)
    params = sign_request(TOKEN, timestamp=c["timestamp"], nonce=c["nonce"])
    params.update(encrypt_type="aes", msg_signature=c["msg_signature"])
    async with http(app) as client:
        r = await client.post("/wechat", params=params, content=f"<xml><Encrypt><![CDATA[{c['Encrypt']}]]></Encrypt></xml>")
    assert r.status_code == 403 and not handler.seen


async def test_wrong_aes_key_is_a_clean_400(sessions: Sessions) -> None:
    v = DOC["aes_post"]
    app, _ = bare_app(sessions, at(v["timestamp"]), RecordingHandler(),
                      config=settings(WECHAT_ENCODING_AES_KEY=NEG["neg_wrong_aes_key"]["encoding_aes_key"]))
    params = {k: v[k] for k in ("signature", "timestamp", "nonce", "encrypt_type", "msg_signature")}
    async with http(app) as client:
        r = await client.post("/wechat", params=params, content=json.dumps(v["body_json"]))
    assert r.status_code == 400


async def test_previous_aes_key_still_accepted(sessions: Sessions) -> None:
    v = DOC["aes_post"]
    config = settings(WECHAT_ENCODING_AES_KEY=NEG["neg_wrong_aes_key"]["encoding_aes_key"],
                      WECHAT_PREVIOUS_ENCODING_AES_KEY=AES_KEY)
    app, _ = bare_app(sessions, at(v["timestamp"]), RecordingHandler(), config=config)
    params = {k: v[k] for k in ("signature", "timestamp", "nonce", "encrypt_type", "msg_signature")}
    async with http(app) as client:
        r = await client.post("/wechat", params=params, content=json.dumps(v["body_json"]))
    assert (r.status_code, r.text) == (200, "success")


async def test_safe_mode_text_gets_an_encrypted_reply(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="已记录：明天 09:00 带材料。")
    app, _ = bare_app(sessions, clock, handler)
    crypto = MessageCrypto(TOKEN, AES_KEY, APP_ID)
    query, body = encrypt_message(crypto, text_message("o-aes", "明天上午九点提醒我带材料", msg_id=77,
                                                       create_time=now_s(clock)), timestamp=now_s(clock), nonce="nn")
    async with http(app) as client:
        r = await client.post("/wechat", params=query, content=body)
    assert r.status_code == 200
    outer = xmltodict.parse(r.text)["xml"]
    assert signature.compute(TOKEN, outer["TimeStamp"], outer["Nonce"], outer["Encrypt"]) == outer["MsgSignature"]
    inner = crypto.decrypt(outer["Encrypt"], outer["MsgSignature"], outer["TimeStamp"], outer["Nonce"])
    parsed = xmltodict.parse(inner)["xml"]
    assert (parsed["ToUserName"], parsed["FromUserName"], parsed["Content"]) == ("o-aes", "gh_test",
                                                                               "已记录：明天 09:00 带材料。")
    assert handler.seen[0].content == "明天上午九点提醒我带材料"


async def test_safe_mode_without_key_is_400(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler(), config=settings(WECHAT_ENCODING_AES_KEY=""))
    query, body = encrypt_message(MessageCrypto(TOKEN, AES_KEY, APP_ID), "<xml/>", timestamp=now_s(clock), nonce="x")
    async with http(app) as client:
        assert (await client.post("/wechat", params=query, content=body)).status_code == 400


# --- rejections: never a 500 --------------------------------------------------------------------

async def test_bad_signature_is_403(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    params = signed(clock) | {"signature": "0" * 40}
    async with http(app) as client:
        r = await client.post("/wechat", params=params, content=text_message("o", "hi", msg_id=1, create_time=1))
    assert r.status_code == 403 and not handler.seen


async def test_stale_timestamp_rejected_and_tolerance_zero_disables(sessions: Sessions, clock: FrozenClock) -> None:
    body = text_message("o", "hi", msg_id=2, create_time=1)
    old = sign_request(TOKEN, timestamp=now_s(clock) - 301, nonce="n")
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        assert (await client.post("/wechat", params=old, content=body)).status_code == 403
        ok = sign_request(TOKEN, timestamp=now_s(clock) + 299, nonce="n")
        assert (await client.post("/wechat", params=ok, content=body)).status_code == 200
    app, _ = bare_app(sessions, clock, RecordingHandler(), config=settings(WECHAT_TIMESTAMP_TOLERANCE_S=0))
    async with http(app) as client:
        r = await client.post("/wechat", params=old, content=text_message("o", "hi", msg_id=3, create_time=1))
    assert r.status_code == 200


@pytest.mark.parametrize(("body", "status"), [
    (b"", 400),
    (b"   ", 400),
    (b"<xml><MsgType>text", 400),
    (b'<!DOCTYPE x [<!ENTITY a "b">]><xml><MsgType>text</MsgType><FromUserName>u</FromUserName></xml>', 400),
    (b"<xml><MsgType>text</MsgType><FromUserName>u</FromUserName><Content>&lol;</Content></xml>", 400),
    (b"\x00\x01\x02", 400),
    (b"\xff\xfe<xml>", 400),
    (b"<xml>" + b"a" * (64 * 1024) + b"</xml>", 413),
])
async def test_bad_bodies_get_clean_answers(sessions: Sessions, clock: FrozenClock, body: bytes, status: int) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=body)
    assert r.status_code == status and not handler.seen


async def test_random_garbage_never_500(sessions: Sessions, clock: FrozenClock) -> None:
    rng = random.Random(7)
    app, _ = bare_app(sessions, clock, RecordingHandler())
    pieces = [b"<xml>", b"</xml>", b"<MsgType>", b"text", b"event", b"</MsgType>", b"<![CDATA[", b"]]>",
              b"<FromUserName>u</FromUserName>", b"<CreateTime>1</CreateTime>", b"&", b"<!", b"\x00", b"\xe4\xbd"]
    async with http(app) as client:
        for _ in range(60):
            body = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
            r = await client.post("/wechat", params=signed(clock), content=body)
            assert r.status_code < 500, body


async def test_control_characters_in_text_are_handled(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock),
                              content=text_message("o", "明天\x01开会\x0b", msg_id=5, create_time=1))
    assert r.status_code == 200 and handler.seen[0].content == "明天开会"


async def test_reply_with_cdata_terminator_round_trips(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="a]]>b")
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o", "x", msg_id=6, create_time=1))
    assert content_of(r.text) == "a]]>b"


async def test_handler_exception_is_an_apology_not_a_500(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler(fail=True))
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o", "x", msg_id=8, create_time=1))
    assert r.status_code == 200 and "抱歉" in content_of(r.text)


# --- dedupe: the handler runs once ------------------------------------------------------------

async def test_same_msgid_three_times_sequentially(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="一次")
    app, _ = bare_app(sessions, clock, handler)
    body = text_message("o-seq", "hi", msg_id=1001, create_time=1)
    async with http(app) as client:
        replies = [(await client.post("/wechat", params=signed(clock, f"n{i}"), content=body)).text
                   for i in range(3)]
    assert len(handler.seen) == 1
    assert len(set(replies)) == 1 and content_of(replies[0]) == "一次"


async def test_same_msgid_three_times_concurrently(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="一次", delay_s=0.05)
    app, _ = bare_app(sessions, clock, handler)
    body = text_message("o-con", "hi", msg_id=1002, create_time=1)
    async with http(app) as client:
        rs = await asyncio.gather(*(client.post("/wechat", params=signed(clock, f"n{i}"), content=body)
                                    for i in range(3)))
    assert len(handler.seen) == 1
    assert all(r.status_code == 200 for r in rs)
    assert sorted(r.text == "success" for r in rs) == [False, True, True]


async def test_two_app_instances_on_one_database_run_the_handler_once(database_url: str, engine: object,
                                                                      clock: FrozenClock) -> None:
    engines = [create_engine(database_url) for _ in range(2)]
    handlers = [RecordingHandler(reply="一次", delay_s=0.05) for _ in range(2)]
    apps = [bare_app(session_factory(e), clock, h)[0] for e, h in zip(engines, handlers, strict=True)]
    body = text_message("o-two", "hi", msg_id=1003, create_time=1)
    try:
        async with http(apps[0]) as a, http(apps[1]) as b:
            rs = await asyncio.gather(*(c.post("/wechat", params=signed(clock, f"n{i}"), content=body)
                                        for i, c in enumerate([a, b, a, b, a, b])))
            later = await b.post("/wechat", params=signed(clock, "late"), content=body)
    finally:
        for e in engines:
            await e.dispose()
    assert sum(len(h.seen) for h in handlers) == 1
    assert all(r.status_code == 200 for r in rs)
    assert content_of(later.text) == "一次"  # a retry after completion gets the stored reply


async def test_events_deduplicate_on_sender_time_event_and_key(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        for key in ("TODAY", "TODAY", "WEEK"):
            await client.post("/wechat", params=signed(clock),
                              content=event_message("o-evt", "CLICK", create_time=10, key=key))
    assert [m.content for m in handler.seen] == ["今天有什么安排", "这周有什么安排"]


# --- slow handler: success now, answer through the outbox -------------------------------------

async def test_slow_handler_acknowledges_and_queues_the_answer(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler(reply="慢慢想好的答案", delay_s=0.5)
    async with FakeWeChatAPI() as api:
        client = WeChatClient(app_id=api.app_id, app_secret=api.app_secret, sessions=sessions, clock=clock,
                              api_base=api.base_url)
        app, router = bare_app(sessions, clock, handler, client=client, reply_budget_s=0.2)
        body = text_message("o-slow", "帮我规划一下", msg_id=2001, create_time=1)
        loop = asyncio.get_running_loop()
        async with http(app) as http_client:
            started = loop.time()
            r = await http_client.post("/wechat", params=signed(clock), content=body)
            elapsed = loop.time() - started
            assert (r.status_code, r.text) == (200, "success")
            assert elapsed < 0.45
            retry = await http_client.post("/wechat", params=signed(clock, "r"), content=body)
            assert retry.text == "success"
            await router.dispatcher.drain()
            again = await http_client.post("/wechat", params=signed(clock, "r2"), content=body)
            assert again.text == "success"
        await client.aclose()
        assert [c.body for c in api.calls_to("message/custom/typing")] == [{"touser": "o-slow", "command": "Typing"}]
    assert len(handler.seen) == 1
    async with sessions() as session:
        rows = (await session.scalars(select(OutboundMessageRow))).all()
        inbound = await session.scalar(select(InboundMessageRow).where(InboundMessageRow.dedupe_key == "msg:2001"))
    assert [(row.kind, row.payload["text"], row.idempotency_key) for row in rows] == \
        [("agent_reply", "慢慢想好的答案", "reply:msg:2001")]
    assert inbound is not None and inbound.status == "done"


async def test_long_reply_passive_first_part_rest_queued(sessions: Sessions, clock: FrozenClock) -> None:
    long_text = "这是一条很长的行程说明。\n" * 200
    app, _ = bare_app(sessions, clock, RecordingHandler(reply=long_text))
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=text_message("o", "x", msg_id=9, create_time=1))
    first = content_of(r.text)
    assert len(first.encode("utf-8")) <= 2048
    async with sessions() as session:
        queued = (await session.scalars(select(OutboundMessageRow))).one()
    assert first + queued.payload["text"] == long_text.strip()


# --- events and other message types -----------------------------------------------------------

async def test_subscribe_greets_and_opens_a_click_window(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock),
                              content=event_message("o-sub", "subscribe", create_time=20))
    assert content_of(r.text) == GREETING and not handler.seen
    async with sessions() as session:
        user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-sub"))
    assert user is not None and user.subscribed and user.window_kind == "click"
    assert user.window_opened_at == to_ms(clock.now())


async def test_unsubscribe_forgets_the_user(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        await client.post("/wechat", params=signed(clock), content=text_message("o-bye", "x", msg_id=31, create_time=1))
        async with sessions.begin() as session:
            uid = await session.scalar(select(UserRow.id).where(UserRow.wechat_openid == "o-bye"))
            session.add(ScheduleItemRow(user_id=uid, kind="task", title="t", timezone="Asia/Shanghai",
                                        created_at=0, updated_at=0))
        r = await client.post("/wechat", params=signed(clock),
                              content=event_message("o-bye", "unsubscribe", create_time=30))
    assert (r.status_code, r.text) == (200, "success")
    async with sessions() as session:
        user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-bye"))
        items = await session.scalar(select(func.count()).select_from(ScheduleItemRow))
    assert user is not None and not user.subscribed and items == 0


async def test_text_message_updates_the_window(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        await client.post("/wechat", params=signed(clock), content=text_message("o-w", "x", msg_id=41, create_time=1))
    async with sessions() as session:
        user = await session.scalar(select(UserRow).where(UserRow.wechat_openid == "o-w"))
    assert user is not None and user.last_user_message_at == to_ms(clock.now()) and user.window_kind == "message"


SAMPLES = {s["id"]: s["xml"] for s in VECTORS["sample_inbound_xml"]["messages"]}


@pytest.mark.parametrize(("sample", "expect"), [
    ("image", TEXT_ONLY), ("event_view", "success"), ("event_subscribe_msg_popup", "success"),
    ("event_scan", GREETING), ("event_subscribe_qrscene", GREETING),
])
async def test_samples_answered(sessions: Sessions, clock: FrozenClock, sample: str, expect: str) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=SAMPLES[sample])
    assert r.status_code == 200 and not handler.seen
    assert (r.text if expect == "success" else content_of(r.text)) == expect


async def test_voice_with_recognition_goes_to_the_handler(sessions: Sessions, clock: FrozenClock) -> None:
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    xml = SAMPLES["voice"].replace("</xml>", "<Recognition><![CDATA[明天开会]]></Recognition></xml>")
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=xml)
    assert content_of(r.text) == "收到" and handler.seen[0].content == "明天开会"


async def test_template_job_finish_is_recorded(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=SAMPLES["event_templatesendjobfinish"])
    assert r.text == "success"
    async with sessions() as session:
        log_row = (await session.scalars(select(DeliveryLogRow))).one()
    assert (log_row.channel, log_row.status, log_row.provider_message_id) == ("wechat_template", "success", "200163836")
