"""Test doubles for the WeChat edge: a fake WeChat API served over real loopback HTTP, and signing helpers.

`FakeWeChatAPI` runs uvicorn in a background thread (usable from sync benches and async tests),
implements stable_token, custom/send, custom/typing, template/send, menu/create|get|delete,
template/get_all_private_template and get_api_domain_ip with the official JSON shapes, records every
call, and can be scripted per endpoint with errcodes and latency. It also plays web OAuth (`snsapi_base`):
`GET /connect/oauth2/authorize` (open.weixin.qq.com) redirects straight back with a one-time code for
whoever `web_user` names (the person holding the phone), and `GET /sns/oauth2/access_token` exchanges it
for that openid (40029 an unknown code, 40163 a code used already, 40125 a wrong secret). `FakeLLM` (the
OpenAI-compatible chat-completions fake for the agent) lives in `fakes/llm.py` and is re-exported here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.types import Receive, Scope, Send

from bot.pages.links import PageLinks
from bot.pages.visitor import SESSION_COOKIE, SESSION_TTL_S, seal
from bot.wechat import signature
from bot.wechat.crypto import MessageCrypto
from bot.wechat.xml import cdata
from fakes.llm import FakeLLM as FakeLLM
from fakes.loopback import LoopbackServer

ENDPOINTS = ("stable_token", "message/custom/send", "message/custom/typing", "message/template/send",
             "menu/create", "template/get_all_private_template", "menu/get", "menu/delete", "get_api_domain_ip",
             "message/subscribe/bizsend", "ticket/getticket", "wxaapi/newtmpl/gettemplate")
GET_ENDPOINTS = frozenset({"menu/get", "menu/delete", "template/get_all_private_template", "get_api_domain_ip",
                           "ticket/getticket", "wxaapi/newtmpl/gettemplate"})
# What every access token and JS-SDK ticket the fake issues starts with: the suite's log check looks for them.
TOKEN_PREFIX, TICKET_PREFIX = "FAKE_TOKEN_", "FAKE_TICKET_"
# The `time` keyword of template and subscription messages: a 24-hour time, with a date before it
# ("2019年10月1日 15:01"); `thing`: 1–20 characters. Anything else is refused with 47003.
TIME_VALUE = re.compile(r"(\d{4}年\d{1,2}月\d{1,2}日 )?([01]\d|2[0-3]):[0-5]\d")
# errmsg WeChat sends with a scripted errcode, where its wording matters to the caller.
ERRMSG = {40164: "invalid ip {ip} ipv6 ::ffff:{ip}, not in whitelist", 46003: "menu no exist",
          48001: "api unauthorized", 40018: "invalid button name size"}


@dataclass(frozen=True)
class Call:
    endpoint: str
    access_token: str | None
    body: dict[str, Any]
    answer: dict[str, Any] = field(default_factory=dict)
    raw: bytes = b""  # the request body as it arrived


class FakeWeChatAPI:
    def __init__(self, *, app_id: str = "wxtestappid", app_secret: str = "testsecret", expires_in: int = 7200,
                 custom_msgid: bool = False) -> None:
        self.app_id, self.app_secret, self.expires_in = app_id, app_secret, expires_in
        self.custom_msgid = custom_msgid  # custom/send documents no msgid; opt in to return one
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._scripts: dict[str, deque[int]] = defaultdict(deque)
        self._latency: dict[str, float] = {}
        self._stalls: dict[str, deque[float]] = defaultdict(deque)
        self._token: str | None = None
        self._valid: set[str] = set()
        self._serial = itertools.count(1)
        self._templates: dict[tuple[str, str], int] = {}
        self.menu: dict[str, Any] | None = None  # as last created through menu/create
        self.private_templates: list[dict[str, str]] = []  # answered by template/get_all_private_template
        self.refusing: set[str] = set()  # openids whose bizsend WeChat refuses (43101: the user blocks it)
        self.tickets = 0  # jsapi tickets issued by ticket/getticket
        self.subscribe_templates: list[dict[str, Any]] = []  # answered by /wxaapi/newtmpl/gettemplate
        self.web_user = "alice"  # the openid WeChat's browser is signed in as (web OAuth)
        self.snapshot = False  # the page opens in 朋友圈's snapshot mode: a virtual user (is_snapshotuser)
        self._codes: dict[str, str | None] = {}  # OAuth code → openid (None once exchanged)
        self._loopback: LoopbackServer | None = None
        self.port = 0

    # --- scripting ------------------------------------------------------------------------
    def script(self, endpoint: str, *errcodes: int) -> None:
        """Queue errcodes answered by the next calls to `endpoint` (0 = a normal answer)."""
        with self._lock:
            self._scripts[endpoint].extend(errcodes)

    def set_latency(self, endpoint: str, seconds: float) -> None:
        self._latency[endpoint] = seconds

    def stall(self, endpoint: str, seconds: float, *, calls: int = 1) -> None:
        """The next `calls` calls to `endpoint` are carried out at once (recorded, a message delivered) and
        answered only after `seconds`: a caller whose timeout is shorter never learns that they worked."""
        with self._lock:
            self._stalls[endpoint].extend([seconds] * calls)

    def revoke_tokens(self) -> None:
        """Invalidate every issued token (the next business call gets 40001)."""
        with self._lock:
            self._valid.clear()
            self._token = None

    def calls_to(self, endpoint: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.endpoint == endpoint]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- the API ----------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A bare ASGI app (no framework per request: benches push a thousand sends a second through it)."""
        if scope["type"] != "http":
            return
        if scope["path"] == "/connect/oauth2/authorize":
            await self._authorize(scope, send)
            return
        if scope["path"] == "/sns/oauth2/access_token":
            answer = self._exchange(parse_qs(scope.get("query_string", b"").decode("latin-1")))
            payload = json.dumps(answer, ensure_ascii=False).encode("utf-8")
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json; charset=utf-8"),
                                    (b"content-length", str(len(payload)).encode())]})
            await send({"type": "http.response.body", "body": payload})
            return
        status, answer = await self._endpoint(scope, receive)
        payload = json.dumps(answer, ensure_ascii=False).encode("utf-8")
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json; charset=utf-8"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    async def _endpoint(self, scope: Scope, receive: Receive) -> tuple[int, dict[str, Any]]:
        path, method = str(scope["path"]), scope["method"]
        endpoint = path[1:] if path.startswith("/wxaapi/") else path.removeprefix("/cgi-bin/")
        if not path.startswith(("/cgi-bin/", "/wxaapi/")) or endpoint not in ENDPOINTS \
                or (method == "GET") != (endpoint in GET_ENDPOINTS):
            return 404, {"errcode": 404, "errmsg": "not found"}
        chunks = []
        while True:  # the body, even of a GET (an ASGI app reads what it is given)
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return 200, {"errcode": 47001, "errmsg": "data format error"}
        client_ip = scope["client"][0] if scope.get("client") else "127.0.0.1"
        delay = self._latency.get(endpoint, 0.0)
        if delay:
            await asyncio.sleep(delay)
        token = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("access_token", [None])[0]
        with self._lock:
            answer = self._answer(endpoint, token, body, client_ip)
            self.calls.append(Call(endpoint, token, body, answer, raw))
            stall = self._stalls[endpoint].popleft() if self._stalls[endpoint] else 0.0
        if stall:
            await asyncio.sleep(stall)
        return 200, answer

    async def _authorize(self, scope: Scope, send: Send) -> None:
        """WeChat's authorize page for `snsapi_base`: silent, straight back to redirect_uri with code and state
        (redirect_uri must be on the account's 网页授权域名; an unknown appid or scope is an error page)."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        target = query.get("redirect_uri", [""])[0]
        with self._lock:
            self.calls.append(Call("connect/oauth2/authorize", None, {k: v[0] for k, v in query.items()}))
            good = (query.get("appid", [""])[0] == self.app_id and query.get("response_type", [""])[0] == "code"
                    and query.get("scope", [""])[0] in ("snsapi_base", "snsapi_userinfo")
                    and target.startswith(("http://", "https://")))
            code = f"FAKE_CODE_{next(self._serial)}"
            if good:
                self._codes[code] = self.web_user
        if not good:
            body = "redirect_uri 参数错误".encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/html; charset=utf-8")]})
            await send({"type": "http.response.body", "body": body})
            return
        location = target + ("&" if "?" in target else "?") + urlencode(
            {"code": code, "state": query.get("state", [""])[0]})
        await send({"type": "http.response.start", "status": 302,
                    "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    def _exchange(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """`sns/oauth2/access_token`: a code is good once, for ten minutes in WeChat (here: until used)."""
        args = {k: v[0] for k, v in query.items()}
        with self._lock:
            scripted = self._scripts["sns/oauth2/access_token"].popleft() \
                if self._scripts["sns/oauth2/access_token"] else 0
            if scripted:
                answer: dict[str, Any] = {"errcode": scripted,
                                          "errmsg": f"scripted error rid: fake-{next(self._serial)}"}
            elif args.get("appid") != self.app_id:
                answer = {"errcode": 40013, "errmsg": "invalid appid"}
            elif args.get("secret") != self.app_secret:
                answer = {"errcode": 40125, "errmsg": "invalid appsecret"}
            elif args.get("grant_type") != "authorization_code":
                answer = {"errcode": 40002, "errmsg": "invalid grant_type"}
            elif args.get("code", "") not in self._codes:
                answer = {"errcode": 40029, "errmsg": "invalid code"}
            elif self._codes[args["code"]] is None:
                answer = {"errcode": 40163, "errmsg": "code been used"}
            else:
                openid = self._codes[args["code"]]
                self._codes[args["code"]] = None
                answer = {"access_token": f"FAKE_WEB_TOKEN_{next(self._serial)}", "expires_in": 7200,
                          "refresh_token": f"FAKE_REFRESH_{next(self._serial)}", "openid": openid,
                          "scope": "snsapi_base"}
                if self.snapshot:
                    answer["is_snapshotuser"] = 1
            self.calls.append(Call("sns/oauth2/access_token", None, {k: v for k, v in args.items()
                                                                      if k != "secret"}, answer))
        return answer

    def _answer(self, endpoint: str, token: str | None, body: dict[str, Any], client_ip: str) -> dict[str, Any]:
        scripted = self._scripts[endpoint].popleft() if self._scripts[endpoint] else 0
        if scripted:
            meaning = ERRMSG.get(scripted, "scripted error").format(ip=client_ip)
            return {"errcode": scripted, "errmsg": f"{meaning} rid: fake-{next(self._serial)}"}
        if endpoint == "stable_token":
            return self._stable_token(body)
        if token not in self._valid:
            return {"errcode": 40001, "errmsg": "invalid credential, access_token is invalid or not latest"}
        if endpoint == "message/custom/send":
            content = str(body.get("text", {}).get("content", ""))
            if len(content.encode("utf-8")) > 2048:
                return {"errcode": 45002, "errmsg": "content size out of limit"}
            answer: dict[str, Any] = {"errcode": 0, "errmsg": "ok"}
            if self.custom_msgid:
                answer["msgid"] = next(self._serial)
            return answer
        if endpoint in ("message/template/send", "message/subscribe/bizsend") and (bad := _bad_data(body)):
            return {"errcode": 47003, "errmsg": f"argument invalid! data.{bad}.value invalid"}
        if endpoint == "message/template/send":
            key = (str(body.get("touser")), str(body.get("client_msg_id") or next(self._serial)))
            msgid = self._templates.setdefault(key, 1_000_000 + next(self._serial))
            return {"errcode": 0, "errmsg": "ok", "msgid": msgid}
        if endpoint == "message/subscribe/bizsend":  # subscription message: 订阅通知
            if str(body.get("touser")) in self.refusing:
                return {"errcode": 43101, "errmsg": "user refuse to accept the msg"}
            return {"errcode": 0, "errmsg": "ok", "msgid": 2_000_000 + next(self._serial)}
        if endpoint == "wxaapi/newtmpl/gettemplate":
            return {"errcode": 0, "errmsg": "ok", "data": list(self.subscribe_templates)}
        if endpoint == "ticket/getticket":
            self.tickets += 1
            return {"errcode": 0, "errmsg": "ok", "ticket": f"{TICKET_PREFIX}{self.tickets}", "expires_in": 7200}
        if endpoint.startswith(("menu/", "template/get_all", "get_api")):
            return self._account_api(endpoint, body)
        return {"errcode": 0, "errmsg": "ok"}

    def _account_api(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        if endpoint == "menu/create":
            buttons = body.get("button")
            if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
                return {"errcode": 40016, "errmsg": "invalid button size"}
            for button in buttons:
                if not isinstance(button, dict) or not 1 <= len(str(button.get("name", "")).encode()) <= 16:
                    return {"errcode": 40018, "errmsg": "invalid button name size"}
                if len(button.get("sub_button") or []) > 5:
                    return {"errcode": 40023, "errmsg": "invalid sub button size"}
            self.menu = {"button": buttons}
            return {"errcode": 0, "errmsg": "ok"}
        if endpoint == "menu/get":
            if self.menu is None:
                return {"errcode": 46003, "errmsg": "menu no exist"}
            return {"menu": {**self.menu, "menuid": 100}}
        if endpoint == "menu/delete":
            self.menu = None
            return {"errcode": 0, "errmsg": "ok"}
        if endpoint == "get_api_domain_ip":
            return {"ip_list": ["101.89.47.18", "101.91.34.103"]}
        return {"template_list": list(self.private_templates)}

    def _stable_token(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("grant_type") != "client_credential" or body.get("appid") != self.app_id:
            return {"errcode": 40013, "errmsg": "invalid appid"}
        if body.get("secret") != self.app_secret:
            return {"errcode": 40125, "errmsg": "invalid appsecret"}
        if body.get("force_refresh") or self._token is None:
            if body.get("force_refresh"):
                self._valid.clear()
            self._token = f"{TOKEN_PREFIX}{next(self._serial)}"
            self._valid.add(self._token)
        return {"access_token": self._token, "expires_in": self.expires_in}

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeWeChatAPI:
        self._loopback = LoopbackServer(self, "fake WeChat API")
        self.port = self._loopback.start()
        return self

    def stop(self) -> None:
        if self._loopback is not None:
            self._loopback.stop()

    def __enter__(self) -> FakeWeChatAPI:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeWeChatAPI:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *_exc: object) -> None:
        await asyncio.to_thread(self.stop)


def _bad_data(body: dict[str, Any]) -> str | None:
    """The first keyword whose value WeChat refuses (a `time` that is no time, an empty or long `thing`)."""
    data = body.get("data")
    for name, field_ in (data.items() if isinstance(data, dict) else []):
        value = str(field_.get("value", "")) if isinstance(field_, dict) else ""
        if name.startswith("time") and not TIME_VALUE.fullmatch(value):
            return str(name)
        if name.startswith("thing") and not 1 <= len(value) <= 20:
            return str(name)
    return None


# --- signing helpers for tests and benches ----------------------------------------------------

async def signed_in(links: PageLinks, openid: str, *, now_ms: int) -> dict[str, str]:
    """The Cookie header of a browser WeChat's web OAuth has named `openid` (the page's owner when it is theirs):
    what the silent sign-in leaves behind, for tests that are about something else."""
    value = seal(await links.session_key(), openid, now_s=now_ms // 1000, ttl_s=SESSION_TTL_S)
    return {"cookie": f"{SESSION_COOKIE}={value}"}


def sign_request(token: str, *, timestamp: int | str, nonce: str) -> dict[str, str]:
    """Query parameters of a plaintext-mode callback."""
    ts = str(timestamp)
    return {"signature": signature.compute(token, ts, nonce), "timestamp": ts, "nonce": nonce}


def encrypt_message(crypto: MessageCrypto, plaintext: str, *, timestamp: int | str, nonce: str,
                    to_user: str = "gh_test") -> tuple[dict[str, str], str]:
    """(query, body) of a safe-mode callback carrying `plaintext`."""
    ts = str(timestamp)
    encrypt = crypto.encrypt(plaintext)
    query = sign_request(crypto.token, timestamp=ts, nonce=nonce)
    query.update(encrypt_type="aes", msg_signature=signature.compute(crypto.token, ts, nonce, encrypt))
    body = f"<xml><ToUserName>{cdata(to_user)}</ToUserName><Encrypt>{cdata(encrypt)}</Encrypt></xml>"
    return query, body


def text_message(openid: str, content: str, *, msg_id: int | str, create_time: int,
                 to_user: str = "gh_test") -> str:
    return (f"<xml><ToUserName>{cdata(to_user)}</ToUserName><FromUserName>{cdata(openid)}</FromUserName>"
            f"<CreateTime>{create_time}</CreateTime><MsgType><![CDATA[text]]></MsgType>"
            f"<Content>{cdata(content)}</Content><MsgId>{msg_id}</MsgId></xml>")


def event_message(openid: str, event: str, *, create_time: int, key: str | None = None,
                  to_user: str = "gh_test") -> str:
    key_xml = f"<EventKey>{cdata(key)}</EventKey>" if key is not None else ""
    return (f"<xml><ToUserName>{cdata(to_user)}</ToUserName><FromUserName>{cdata(openid)}</FromUserName>"
            f"<CreateTime>{create_time}</CreateTime><MsgType><![CDATA[event]]></MsgType>"
            f"<Event>{cdata(event)}</Event>{key_xml}</xml>")


_GRANT_BLOCK = {"subscribe_msg_popup_event": "SubscribeMsgPopupEvent", "subscribe_msg_change_event":
                "SubscribeMsgChangeEvent", "subscribe_msg_sent_event": "SubscribeMsgSentEvent"}


def _grant_entries(event: str, grants: list[tuple[str, str]], msg_ids: list[str] | None) -> list[dict[str, str]]:
    sent = event == "subscribe_msg_sent_event"
    entries = []
    for index, (template, status) in enumerate(grants):
        entry = {"TemplateId": template, "ErrorStatus" if sent else "SubscribeStatusString": status}
        if sent:
            entry["MsgID"] = (msg_ids or [])[index] if msg_ids and index < len(msg_ids) else str(1000 + index)
            entry["ErrorCode"] = "0" if status == "success" else "20004"
        entries.append(entry)
    return entries


def grant_event(openid: str, event: str, grants: list[tuple[str, str]], *, create_time: int,
                to_user: str = "gh_test", msg_ids: list[str] | None = None) -> str:
    """A subscription-message event as WeChat posts it: `subscribe_msg_popup_event` and
    `subscribe_msg_change_event` with (template id, accept|reject), `subscribe_msg_sent_event` with
    (template id, ErrorStatus such as success or failed:user block) and each send's MsgID."""
    block = _GRANT_BLOCK[event]
    items = "".join("<List>" + "".join(f"<{k}>{cdata(v)}</{k}>" for k, v in entry.items()) + "</List>"
                    for entry in _grant_entries(event, grants, msg_ids))
    return (f"<xml><ToUserName>{cdata(to_user)}</ToUserName><FromUserName>{cdata(openid)}</FromUserName>"
            f"<CreateTime>{create_time}</CreateTime><MsgType><![CDATA[event]]></MsgType>"
            f"<Event>{cdata(event)}</Event><{block}>{items}</{block}></xml>")


def grant_event_json(openid: str, event: str, grants: list[tuple[str, str]], *, create_time: int,
                     to_user: str = "gh_test", msg_ids: list[str] | None = None) -> str:
    """The same event in the JSON data format: `List` at the top level, not inside a block, and one object
    rather than an array when a single template was answered (as WeChat sends it)."""
    entries = _grant_entries(event, grants, msg_ids)
    return json.dumps({"ToUserName": to_user, "FromUserName": openid, "CreateTime": str(create_time),
                       "MsgType": "event", "Event": event, "List": entries[0] if len(entries) == 1 else entries},
                      ensure_ascii=False)
