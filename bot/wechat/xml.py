"""Defensive XML in and out: strip illegal characters, refuse DTDs/entities, build passive replies.

Inbound bodies are screened before any parser sees them (no DOCTYPE, no ENTITY, no
external references); outbound text is cleaned, `]]>` is split across CDATA sections
and the content is kept within WeChat's 2048-byte limit.
"""

from __future__ import annotations

import re
from typing import Any

import xmltodict  # type: ignore[import-untyped]

MAX_TEXT_BYTES = 2048

# XML 1.0 forbids C0 controls except tab/newline/CR, lone surrogates and U+FFFE/U+FFFF.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)|<!\[\s*(INCLUDE|IGNORE)", re.IGNORECASE)


class XmlRejected(ValueError):
    """A body we refuse to parse (empty, DTD/entity-bearing or malformed)."""


def strip_illegal(text: str) -> str:
    return _ILLEGAL.sub("", text)


def screen(body: bytes | str) -> str:
    """Decode, drop illegal characters and refuse DTDs; returns text safe to hand to a parser."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = strip_illegal(text).strip()
    if not text:
        raise XmlRejected("empty body")
    if _DTD.search(text):
        raise XmlRejected("DOCTYPE/ENTITY declarations are not accepted")
    return text


def parse_fields(text: str) -> dict[str, Any]:
    """The children of <xml> as a dict (xmltodict with entities disabled); raises XmlRejected."""
    try:
        doc = xmltodict.parse(text, disable_entities=True)
    except Exception as exc:  # expat errors, unexpected structure
        raise XmlRejected(f"malformed XML ({type(exc).__name__})") from None
    root = doc.get("xml") if isinstance(doc, dict) else None
    if not isinstance(root, dict):
        raise XmlRejected("root element <xml> missing or empty")
    return root


def cdata(value: str) -> str:
    """A CDATA section holding `value` verbatim, even when it contains `]]>`."""
    return "<![CDATA[" + strip_illegal(value).replace("]]>", "]]]]><![CDATA[>") + "]]>"


def truncate_utf8(text: str, limit: int = MAX_TEXT_BYTES) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def split_utf8(text: str, limit: int = MAX_TEXT_BYTES) -> list[str]:
    """Split into parts of at most `limit` UTF-8 bytes, preferring line breaks, never inside a character."""
    parts: list[str] = []
    rest = text
    while len(rest.encode("utf-8")) > limit:
        head = truncate_utf8(rest, limit)
        cut = head.rfind("\n")
        if cut > len(head) // 2:
            head = head[: cut + 1]
        parts.append(head)
        rest = rest[len(head):]
    if rest or not parts:
        parts.append(rest)
    return parts


def text_reply(*, to_user: str, from_user: str, content: str, create_time: int) -> str:
    """Passive text reply (ToUserName = the user's openid, FromUserName = our gh_ id)."""
    body = truncate_utf8(strip_illegal(content))
    return (
        "<xml>\n"
        f"<ToUserName>{cdata(to_user)}</ToUserName>\n"
        f"<FromUserName>{cdata(from_user)}</FromUserName>\n"
        f"<CreateTime>{int(create_time)}</CreateTime>\n"
        "<MsgType><![CDATA[text]]></MsgType>\n"
        f"<Content>{cdata(body)}</Content>\n"
        "</xml>"
    )
