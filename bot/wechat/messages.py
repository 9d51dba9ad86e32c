"""Inbound WeChat messages and events as one typed value, with the dedupe key WeChat retries share."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.wechat.xml import XmlRejected, parse_fields, screen

Kind = Literal["text", "voice", "image", "location", "event", "other"]

# Menu CLICK keys handed to the handler as the text a user would type.
CLICK_TEXT = {
    "TODAY": "今天有什么安排",
    "WEEK": "这周有什么安排",
    "PAGE": "用页面展示我的行程",
    "HELP": "帮助",
}


class InboundMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Kind
    msg_type: str
    openid: str
    to_user: str
    create_time: int
    msg_id: str | None = None
    content: str | None = None  # text, voice Recognition, or the text a CLICK stands for
    media_id: str | None = None
    event: str | None = None  # as sent (subscribe, unsubscribe, CLICK, VIEW, SCAN, …)
    event_key: str | None = None
    scene: str | None = None  # qrscene_ / SCAN scene value
    status: str | None = None  # TEMPLATESENDJOBFINISH
    accepted_template_ids: tuple[str, ...] = ()
    rejected_template_ids: tuple[str, ...] = ()
    grants: tuple[str, ...] = ()  # a grant event's list as sent (template, status, MsgID): part of its identity
    user_id: int | None = None

    @property
    def dedupe_key(self) -> str:
        """(openid, MsgId) for messages; (openid, CreateTime, Event, EventKey, MsgID) for events: a
        MsgId is not unique across users, and one user's events of one second differ by MsgID (two
        TEMPLATESENDJOBFINISH). A grant event adds a digest of its list: two popups answered in one second,
        or a `success` and a `failed:user block` sent in one second, are different events."""
        if self.kind != "event" and self.msg_id:
            key = f"msg:{self.openid}:{self.msg_id}"
        else:
            key = f"evt:{self.openid}:{self.create_time}:{self.event or ''}:{self.event_key or ''}:{self.msg_id or ''}"
            if self.grants:
                key += ":g" + hashlib.sha1("\n".join(self.grants).encode("utf-8")).hexdigest()[:16]
        if len(key) > 191:  # the column's limit: keep it unique with a digest of the whole key
            key = key[:150] + ":" + hashlib.sha1(key.encode("utf-8")).hexdigest()
        return key

    @property
    def event_lower(self) -> str:
        return (self.event or "").lower()

    @property
    def is_user_text(self) -> bool:
        return self.content is not None and self.kind in ("text", "voice", "event")


def _s(fields: dict[str, Any], name: str) -> str | None:
    value = fields.get(name)
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


_GRANT_BLOCKS = ("SubscribeMsgPopupEvent", "SubscribeMsgChangeEvent", "SubscribeMsgSentEvent")


def _grant_items(fields: dict[str, Any]) -> list[dict[str, Any]]:
    """A grant event's list: inside its block in XML (`<SubscribeMsgPopupEvent><List>…`), at the top level in
    the JSON data format (`"List": [...]`, or one object when a single template was answered)."""
    found: list[Any] = []
    for name in _GRANT_BLOCKS:
        block = fields.get(name)
        if isinstance(block, dict):
            found.append(block.get("List"))
    if "List" in fields:
        found.append(fields["List"])
    items: list[dict[str, Any]] = []
    for entry in found:
        for item in entry if isinstance(entry, list) else [entry]:
            if isinstance(item, dict) and item.get("TemplateId"):
                items.append(item)
    return items


def _popup(fields: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Templates accepted and refused: the popup's answers, a consent changed in settings, or a subscription
    message the user blocks (the sent event's `failed:user block`; a success changes nothing); and the list
    itself, each entry as (template, status, MsgID), for the event's dedupe key."""
    accepted: list[str] = []
    rejected: list[str] = []
    seen: list[str] = []
    for item in _grant_items(fields):
        status = str(item.get("SubscribeStatusString") or item.get("ErrorStatus") or "")
        seen.append(f"{item['TemplateId']}|{status}|{item.get('MsgID') or item.get('MsgId') or ''}")
        if status == "accept":
            accepted.append(str(item["TemplateId"]))
        elif status == "reject" or "user block" in status:
            rejected.append(str(item["TemplateId"]))
    return tuple(accepted), tuple(rejected), tuple(seen)


def from_fields(fields: dict[str, Any]) -> InboundMessage:
    """Build the message from the <xml> children (or the JSON object in JSON data format)."""
    msg_type = (_s(fields, "MsgType") or "").strip()
    openid = _s(fields, "FromUserName")
    if not msg_type or not openid:
        raise XmlRejected("MsgType or FromUserName missing")
    if len(openid) > 128 or len(_s(fields, "ToUserName") or "") > 128 or len(msg_type) > 64:
        raise XmlRejected("FromUserName, ToUserName or MsgType too long")
    try:
        create_time = int(_s(fields, "CreateTime") or 0)
    except ValueError:
        raise XmlRejected("CreateTime is not an integer") from None
    base: dict[str, Any] = {
        "msg_type": msg_type, "openid": openid, "to_user": _s(fields, "ToUserName") or "",
        "create_time": create_time, "msg_id": _s(fields, "MsgId") or _s(fields, "MsgID"),
        "media_id": _s(fields, "MediaId"),
    }
    lowered = msg_type.lower()
    if lowered == "text":
        return InboundMessage(kind="text", content=_s(fields, "Content") or "", **base)
    if lowered == "voice":
        recognition = (_s(fields, "Recognition") or "").strip()
        return InboundMessage(kind="voice", content=recognition or None, **base)
    if lowered in ("image", "location"):
        return InboundMessage(kind=lowered, **base)
    if lowered != "event":
        return InboundMessage(kind="other", **base)
    event = _s(fields, "Event") or ""
    key = _s(fields, "EventKey")
    scene = None
    if event.lower() == "subscribe" and key and key.startswith("qrscene_"):
        scene = key[len("qrscene_"):]
    elif event.lower() == "scan":
        scene = key
    content = CLICK_TEXT.get(key or "") if event.upper() == "CLICK" else None
    accepted, rejected, listed = _popup(fields)
    return InboundMessage(
        kind="event", event=event, event_key=key, scene=scene, content=content, status=_s(fields, "Status"),
        accepted_template_ids=accepted, rejected_template_ids=rejected, grants=listed, **base,
    )


def parse_body(text: str) -> dict[str, Any]:
    """The fields of a screened body: XML, or a JSON object when the account uses the JSON data format."""
    text = screen(text)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the interpreter's stack
            raise XmlRejected("malformed JSON") from None
        if not isinstance(data, dict):
            raise XmlRejected("JSON body is not an object")
        return data
    return parse_fields(text)


def parse(text: str) -> InboundMessage:
    return from_fields(parse_body(text))
