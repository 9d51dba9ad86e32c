"""`/wechat` over ASGI: verification, plaintext and safe mode, official vectors, rejections (never a 500)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import xmltodict
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from webhook_helpers import (
    AES_KEY,
    APP_ID,
    TOKEN,
    RecordingHandler,
    at,
    bare_app,
    content_of,
    http,
    now_s,
    settings,
    signed,
)

from bot.wechat import signature
from bot.wechat.crypto import MessageCrypto
from fakes.wechat import encrypt_message, sign_request, text_message
from schedule.testing import FrozenClock

VECTORS: dict[str, Any] = json.loads(Path("/work/shared/eval/external/wechat_vectors.json").read_text("utf-8"))
DOC = VECTORS["official_doc_AAAAA"]
NEG = {case["id"]: case for case in VECTORS["derived_negative"]}
Sessions = async_sessionmaker[AsyncSession]


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


async def test_get_verify_with_a_stale_timestamp_is_403(sessions: Sessions, clock: FrozenClock) -> None:
    app, _ = bare_app(sessions, clock, RecordingHandler())
    params = sign_request(TOKEN, timestamp=now_s(clock) - 3600, nonce="n") | {"echostr": "ECHO"}
    async with http(app) as client:
        r = await client.get("/wechat", params=params)
    assert r.status_code == 403 and "ECHO" not in r.text


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
    (b"", 200),
    (b"   ", 200),
    (b"<xml><MsgType>text", 200),
    (b'<!DOCTYPE x [<!ENTITY a "b">]><xml><MsgType>text</MsgType><FromUserName>u</FromUserName></xml>', 200),
    (b"<xml><MsgType>text</MsgType><FromUserName>u</FromUserName><Content>&lol;</Content></xml>", 200),
    (b"\x00\x01\x02", 200),
    (b"\xff\xfe<xml>", 200),
    (b"<xml>" + b"<a>" * 50 + b"</a>" * 50 + b"</xml>", 200),
    (b"<xml>" + b"a" * (64 * 1024) + b"</xml>", 413),
])
async def test_bad_bodies_get_clean_answers(sessions: Sessions, clock: FrozenClock, body: bytes, status: int) -> None:
    """A signed but unreadable body is acknowledged (`success`): a 4xx only makes WeChat retry and show
    the user "该公众号暂时无法提供服务"; the handler never sees it."""
    handler = RecordingHandler()
    app, _ = bare_app(sessions, clock, handler)
    async with http(app) as client:
        r = await client.post("/wechat", params=signed(clock), content=body)
    assert r.status_code == status and not handler.seen
    assert status != 200 or r.text == "success"


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
