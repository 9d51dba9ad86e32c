"""XML screening and reply building: `]]>`, control characters, entities, size limits."""

from __future__ import annotations

import itertools

import pytest
import xmltodict
from hypothesis import given
from hypothesis import strategies as st

from bot.wechat import messages, xml
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


# --- the flat-body fast path gives what the hardened parser gives, and only for flat bodies ----------

def _parsed_by_expat(text: str) -> dict[str, object]:
    """parse_fields with the flat fast path off: the defusedxml answer (or the rejection)."""
    from unittest import mock

    with mock.patch("bot.wechat.xml._flat", return_value=None):
        return xml.parse_fields(text)


_PIECES = st.sampled_from(["a", " ", "\r\n", "\r", "\n", "]]>", "]]", "]", ">", "<", "&", "&amp;", "明天",
                           "<![CDATA[", "<!DOCTYPE x>", "<B>1</B>", "\u3000", "\t"])
_TEXT = st.lists(_PIECES, max_size=8).map("".join)
_LEAF = st.tuples(st.sampled_from(["A", "B", "Content", "x_1", "a.b-c"]), _TEXT, st.booleans()).map(
    lambda t: f"<{t[0]}>" + (f"<![CDATA[{t[1]}]]>" if t[2] else t[1]) + f"</{t[0]}>")
_BODY = st.tuples(st.lists(st.tuples(_LEAF, st.sampled_from(["", "\n", " ", "\r\n", "\u3000"])), max_size=6),
                  st.sampled_from(["", "\n"])).map(lambda t: "<xml>" + t[1] + "".join(a + b for a, b in t[0]) + "</xml>")


@given(_BODY)
def test_flat_fast_path_agrees_with_the_parser(body: str) -> None:
    fast = xml._flat(body)
    try:
        expected: object = _parsed_by_expat(body)
    except XmlRejected:
        expected = XmlRejected
    if expected is XmlRejected:
        assert fast is None  # never accepts what the parser refuses
    else:
        assert fast in (None, expected)  # when taken, the parser's very fields
        assert xml.parse_fields(body) == expected


@pytest.mark.parametrize("body", [
    "<xml><A><![CDATA[a]]]]><![CDATA[>b]]></A></xml>",  # a split "]]>": two sections, one value
    "<xml><A x='1'>v</A></xml>",
    "<xml><A>&amp;</A></xml>",
    "<xml><A><B>1</B></A></xml>",
    "<xml><A/></xml>",
    "<xml><!-- c --><A>1</A></xml>",
    "<?xml version='1.0'?><xml><A>1</A></xml>",
])
def test_other_shapes_take_the_parser(body: str) -> None:
    assert xml._flat(body) is None
    assert xml.parse_fields(body) == _parsed_by_expat(body)


def test_flat_fast_path_is_taken_for_wechats_bodies() -> None:
    from fakes.wechat import text_message

    body = text_message("o-1", "明天<b>三点</b> & ]]> 开会", msg_id="42", create_time=1700000000)
    assert xml._flat(body) is None or xml._flat(body) == _parsed_by_expat(body)
    plain = text_message("o-1", "明天下午三点开会", msg_id="42", create_time=1700000000)
    assert xml._flat(plain) == _parsed_by_expat(plain)
    assert xml._flat(plain)["Content"] == "明天下午三点开会"  # type: ignore[index]


def test_flat_body_fields_repeat_and_normalise_line_ends() -> None:
    body = "<xml>\n<A><![CDATA[ x\r\ny ]]></A>\r\n<A>2</A>\n<B></B>\n<A><![CDATA[]]></A></xml>"
    assert xml._flat(body) == {"A": ["x\ny", "2", None], "B": None}
    assert _parsed_by_expat(body) == xml._flat(body)


def test_doctype_still_refused_on_a_flat_looking_body() -> None:
    with pytest.raises(XmlRejected):
        xml.parse_fields('<!DOCTYPE xml [<!ENTITY e "x">]><xml><A>&e;</A></xml>')


@pytest.mark.parametrize("emoji", ["👨\u200d👩\u200d👧\u200d👦", "👍🏽", "❤\ufe0f", "🏳\ufe0f\u200d🌈", "e\u0301"])
def test_split_never_cuts_an_emoji_sequence_in_two(emoji: str) -> None:
    """Long texts: a family emoji is 7 code points joined by ZWJ; a cut inside shows two broken glyphs."""
    for pad in range(12):  # every offset of the sequence against the part boundary
        text = "会" * (660 + pad // 3) + "a" * (pad % 3) + emoji * 40
        parts = split_utf8(text)
        assert "".join(parts) == text
        assert all(len(p.encode()) <= MAX_TEXT_BYTES for p in parts)
        for left, right in itertools.pairwise(parts):
            assert right[0] not in "\u200d\ufe0f\u0301" and left[-1] != "\u200d", (pad, left[-3:], right[:3])
            assert not 0x1F3FB <= ord(right[0]) <= 0x1F3FF
