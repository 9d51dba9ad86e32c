"""Official WeChat vectors: URL/msg signatures, AES decrypt, encrypted reply, negatives, sample XML."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.wechat import messages, signature
from bot.wechat.crypto import DecryptError, InvalidSignature, MessageCrypto

VECTORS: dict[str, Any] = json.loads(Path("/work/shared/eval/external/wechat_vectors.json").read_text("utf-8"))
DOC = VECTORS["official_doc_AAAAA"]
SPAM = VECTORS["official_wxbizmsgcrypt_sample_spamtest"]
WECOM = VECTORS["official_wecom_sample_QDG6eK"]
SUITE = VECTORS["wechatpy_suite"]
NEG = {case["id"]: case for case in VECTORS["derived_negative"]}


def sender_keyed(key: str, openid: str) -> str:
    """A vector's dedupe key with the sender: (openid, MsgId) for messages, events with MsgID appended."""
    if key.startswith("msg:"):
        return f"msg:{openid}:{key.removeprefix('msg:')}"
    return key + ":"  # no MsgID on these events


def fixed(random: str) -> Callable[[], str]:
    return lambda: random


def test_url_verify_signature() -> None:
    v = DOC["url_verify_get"]
    assert signature.check_url_signature(DOC["token"], v["signature"], v["timestamp"], v["nonce"])


def test_plain_post_signature() -> None:
    v = DOC["plain_post"]
    assert signature.check_url_signature(DOC["token"], v["signature"], v["timestamp"], v["nonce"])


def test_aes_post_signature_and_decrypt() -> None:
    v = DOC["aes_post"]
    crypto = MessageCrypto(DOC["token"], DOC["encoding_aes_key"], DOC["appid"])
    assert signature.check_url_signature(DOC["token"], v["signature"], v["timestamp"], v["nonce"])
    plaintext = crypto.decrypt(v["body_json"]["Encrypt"], v["msg_signature"], v["timestamp"], v["nonce"])
    assert plaintext == v["expected_decrypt"]["msg"]
    parsed = messages.parse(plaintext)  # JSON data format
    assert parsed.event == "debug_demo"
    assert parsed.openid == v["openid"]


def test_aes_reply_reproduced_with_fixed_random() -> None:
    r = DOC["aes_reply"]
    crypto = MessageCrypto(DOC["token"], DOC["encoding_aes_key"], DOC["appid"], random=fixed(r["random"]))
    assert crypto.encrypt(r["plaintext"]) == r["expected_encrypt"]
    xml = crypto.encrypt_reply(r["plaintext"], nonce=r["nonce"], timestamp=r["timestamp"])
    assert xml == r["expected_reply_xml"]
    assert signature.compute(DOC["token"], r["timestamp"], r["nonce"], r["expected_encrypt"]) \
        == r["expected_msg_signature"]


def test_spamtest_sample_decrypts_and_parses() -> None:
    d = SPAM["decrypt"]
    crypto = MessageCrypto(SPAM["token"], SPAM["encoding_aes_key"], SPAM["appid"])
    assert signature.check_url_signature(SPAM["token"], d["url_signature_for_same_timestamp_nonce"],
                                         d["timestamp"], d["nonce"])
    for body in (d["post_body_xml_safe_mode"], d["post_body_xml_compat_mode_as_in_sample"]):
        encrypt = messages.parse_body(body)["Encrypt"]
        plaintext = crypto.decrypt(encrypt, d["msg_signature"], d["timestamp"], d["nonce"])
        assert plaintext == d["expected_plaintext_xml"]
    message = messages.parse(d["expected_plaintext_xml"])
    exp = d["expected_parsed"]
    assert (message.msg_type, message.to_user, message.openid) == (exp["MsgType"], exp["ToUserName"],
                                                                   exp["FromUserName"])
    assert (str(message.create_time), message.content, message.msg_id) == (exp["CreateTime"], exp["Content"],
                                                                           exp["MsgId"])


def test_spamtest_encrypt_roundtrip() -> None:
    r = SPAM["encrypt_roundtrip_input"]
    crypto = MessageCrypto(SPAM["token"], SPAM["encoding_aes_key"], SPAM["appid"])
    encrypt = crypto.encrypt(r["to_xml"])
    sig = signature.compute(SPAM["token"], "1409735669", r["nonce"], encrypt)
    assert crypto.decrypt(encrypt, sig, "1409735669", r["nonce"]) == r["to_xml"]


def test_wecom_sample_decrypts_with_corpid() -> None:
    crypto = MessageCrypto(WECOM["token"], WECOM["encoding_aes_key"], WECOM["receive_id"])
    v, d = WECOM["verify_url"], WECOM["decrypt"]
    assert crypto.decrypt(v["echostr"], v["msg_signature"], v["timestamp"], v["nonce"]) == v["expected_plaintext"]
    assert crypto.decrypt(d["encrypt"], d["msg_signature"], d["timestamp"], d["nonce"]) == d["expected_plaintext_xml"]


def test_wechatpy_suite_vectors() -> None:
    crypto_fixed = MessageCrypto(SUITE["token"], SUITE["encoding_aes_key"], SUITE["receive_id"],
                                 random=fixed(SUITE["encrypt_fixed_random"]["random"]))
    ok = SUITE["check_signature_ok"]
    assert crypto_fixed.decrypt(ok["echostr"], ok["msg_signature"], ok["timestamp"], ok["nonce"]) \
        == ok["expected_plaintext"]
    bad = SUITE["check_signature_bad_nonce"]
    with pytest.raises(InvalidSignature):
        crypto_fixed.decrypt(ok["echostr"], bad["msg_signature"], bad["timestamp"], bad["nonce"])
    enc = SUITE["encrypt_fixed_random"]
    assert crypto_fixed.encrypt(enc["plaintext"]) == enc["expected_encrypt"]
    assert signature.compute(SUITE["token"], enc["timestamp"], enc["nonce"], enc["expected_encrypt"]) \
        == enc["expected_msg_signature"]
    d = SUITE["decrypt"]
    plaintext = crypto_fixed.decrypt(d["encrypt"], d["msg_signature"], d["timestamp"], d["nonce"])
    assert plaintext == d["expected_plaintext_xml"]
    message = messages.parse(plaintext)
    assert (message.content, message.openid) == (d["expected_content"], d["expected_from"])


@pytest.mark.parametrize("case_id", ["neg_url_sig_tampered_nonce", "neg_url_sig_wrong_token",
                                     "neg_url_sig_uppercase_hex", "neg_url_sig_missing_param"])
def test_url_signature_negatives_rejected(case_id: str) -> None:
    c = NEG[case_id]
    assert not signature.check_url_signature(c["token"], c["signature"], c["timestamp"], c["nonce"])


class _NoDecrypt(MessageCrypto):
    """Fails the test if decryption is attempted (negatives must be rejected before it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._keys = [b"\0" * 32]


@pytest.mark.parametrize("case_id", ["neg_msg_sig_uses_url_signature", "neg_encrypt_one_char_flipped"])
def test_msg_signature_negatives_rejected_before_decryption(case_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    c = NEG[case_id]
    crypto = MessageCrypto(c["token"], DOC["encoding_aes_key"], DOC["appid"])
    import bot.wechat.crypto as crypto_module

    def boom(*_a: Any, **_k: Any) -> None:
        raise AssertionError("decryption attempted before the signature check")

    monkeypatch.setattr(crypto_module._Prp, "decrypt", boom)  # the wechatpy cipher, not our logic
    with pytest.raises(InvalidSignature):
        crypto.decrypt(c["Encrypt"], c["msg_signature"], c["timestamp"], c["nonce"])


def test_wrong_appid_rejected() -> None:
    d = SPAM["decrypt"]
    crypto = MessageCrypto(SPAM["token"], SPAM["encoding_aes_key"], NEG["neg_wrong_appid"]["configured_appid"])
    with pytest.raises(DecryptError):
        crypto.decrypt(d["encrypt"], d["msg_signature"], d["timestamp"], d["nonce"])


def test_wrong_aes_key_fails_cleanly_and_previous_key_rescues() -> None:
    v = DOC["aes_post"]
    wrong = NEG["neg_wrong_aes_key"]["encoding_aes_key"]
    with pytest.raises(DecryptError):
        MessageCrypto(DOC["token"], wrong, DOC["appid"]).decrypt(
            v["body_json"]["Encrypt"], v["msg_signature"], v["timestamp"], v["nonce"])
    rotated = MessageCrypto(DOC["token"], wrong, DOC["appid"], previous_key=DOC["encoding_aes_key"])
    assert rotated.decrypt(v["body_json"]["Encrypt"], v["msg_signature"], v["timestamp"], v["nonce"]) \
        == v["expected_decrypt"]["msg"]


def test_aes_key_is_32_bytes() -> None:
    assert len(base64.b64decode(DOC["encoding_aes_key"] + "=")) == 32
    with pytest.raises(ValueError, match="32 bytes"):
        MessageCrypto("t", "QUFB", "wx")


SAMPLES = VECTORS["sample_inbound_xml"]["messages"]


@pytest.mark.parametrize("sample", SAMPLES, ids=[s["id"] for s in SAMPLES])
def test_sample_inbound_xml_parsed(sample: dict[str, Any]) -> None:
    message = messages.parse(sample["xml"])
    exp = sample["expected"]
    fields = messages.parse_body(sample["xml"])
    simple = {"MsgType": message.msg_type, "FromUserName": message.openid, "ToUserName": message.to_user,
              "CreateTime": message.create_time, "MsgId": message.msg_id, "Content": message.content,
              "MediaId": message.media_id, "Event": message.event, "EventKey": message.event_key,
              "MsgID": message.msg_id, "Status": message.status, "scene": message.scene,
              "PicUrl": fields.get("PicUrl"), "Format": fields.get("Format"),
              "dedupe_key": message.dedupe_key,
              "accepted_template_ids": list(message.accepted_template_ids),
              "rejected_template_ids": list(message.rejected_template_ids)}
    for key, value in exp.items():
        if key in ("bot_behaviour", "note"):
            continue
        if key == "dedupe_key":  # the vectors predate the sender in the key: the same parts
            value = sender_keyed(value, message.openid)
        assert simple[key] == value, key


def test_voice_recognition_is_text() -> None:
    xml = ("<xml><ToUserName><![CDATA[gh]]></ToUserName><FromUserName><![CDATA[u]]></FromUserName>"
           "<CreateTime>1</CreateTime><MsgType><![CDATA[voice]]></MsgType><MediaId><![CDATA[m]]></MediaId>"
           "<Format><![CDATA[amr]]></Format><Recognition><![CDATA[明天上午九点提醒我带材料]]></Recognition>"
           "<MsgId>42</MsgId></xml>")
    message = messages.parse(xml)
    assert (message.kind, message.content, message.dedupe_key) == ("voice", "明天上午九点提醒我带材料", "msg:u:42")


def test_click_keys_map_to_text() -> None:
    xml = ("<xml><ToUserName><![CDATA[gh]]></ToUserName><FromUserName><![CDATA[u]]></FromUserName>"
           "<CreateTime>5</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[CLICK]]></Event>"
           "<EventKey><![CDATA[WEEK]]></EventKey></xml>")
    message = messages.parse(xml)
    assert message.content == "这周有什么安排"
    assert message.dedupe_key == "evt:u:5:CLICK:WEEK:"  # (openid, CreateTime, Event, EventKey, MsgID)
