"""`schedbot wechat menu|template`: set up the service account through the WeChat API.

Account calls are rare and interactive: they go through the bot's one WeChat client with a token kept for
the process (`account_client`), so they need no database and never invalidate the token the bot uses.
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from pathlib import Path
from typing import Any, TextIO

from bot.settings import Settings
from bot.wechat import subscribe_templates
from bot.wechat.client import WeChatClient
from bot.wechat.errors import WeChatAPIError, WeChatError, WeChatTransportError, whitelist_ip
from schedule.clock import SystemClock

# 今日/本周/行程页 are the CLICK keys the webhook turns into questions; HELP asks what the bot can do.
DEFAULT_MENU: dict[str, Any] = {"button": [
    {"type": "click", "name": "今日", "key": "TODAY"},
    {"type": "click", "name": "本周", "key": "WEEK"},
    {"name": "更多", "sub_button": [
        {"type": "click", "name": "行程页", "key": "PAGE"},
        {"type": "click", "name": "帮助", "key": "HELP"},
    ]},
]}
REMINDER_FIELDS = {"thing1": "事项（≤20 字）", "time2": "时间"}  # what WeChatTemplateChannel fills
ADVICE = {
    40164: "add this host's IP to the IP whitelist (公众号后台 → 设置与开发 → 基本配置 → IP白名单)",
    40013: "WECHAT_APP_ID is not a valid AppID",
    40125: "WECHAT_APP_SECRET is wrong (reset it in 基本配置 and update the variable)",
    48001: "the account lacks this API permission (a verified service account is needed)",
    46003: "the account has no custom menu",
}


def describe(exc: WeChatError, *, api_base: str | None = None) -> str:
    """One line for the owner: the error and what to do about it."""
    if isinstance(exc, WeChatAPIError):
        advice = ADVICE.get(exc.errcode or 0, "")
        if exc.errcode == 40164 and (ip := whitelist_ip(exc.errmsg)):
            advice = f"add {ip} to the IP whitelist (公众号后台 → 设置与开发 → 基本配置 → IP白名单)"
        return f"{exc} — {advice}" if advice else str(exc)
    if isinstance(exc, WeChatTransportError) and api_base:
        return f"{exc} reaching {api_base}"
    return str(exc)


def account_client(settings: Settings, *, timeout: float = 10.0) -> WeChatClient:
    """The WeChat client for a command: no database, its token kept for the process and never forced (a plain
    stable_token returns the token the bot already uses; it does not invalidate it)."""
    return WeChatClient.over_http(app_id=settings.WECHAT_APP_ID, app_secret=settings.WECHAT_APP_SECRET,
                                  clock=SystemClock(), sessions=None, api_base=settings.WECHAT_API_BASE,
                                  timeout=timeout)


def load_menu(path: str | None) -> dict[str, Any]:
    """The default menu, or one read from a .toml or .json file (`[[button]]` tables)."""
    if path is None:
        return DEFAULT_MENU
    text = Path(path).read_text(encoding="utf-8")
    menu = tomllib.loads(text) if path.endswith(".toml") else json.loads(text)
    if not isinstance(menu, dict):
        raise ValueError("the menu file must hold an object with a `button` list")
    return menu


def menu_problems(menu: dict[str, Any]) -> list[str]:
    """WeChat's menu limits, checked before the call so the owner gets names, not errcodes."""
    buttons = menu.get("button")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
        return ["`button` must list 1–3 top-level buttons"]
    problems: list[str] = []
    for button in buttons:
        if not isinstance(button, dict):
            problems.append("each button must be a table/object")
            continue
        subs = button.get("sub_button") or []
        problems += _button_problems(button, top=True, has_subs=bool(subs))
        if not isinstance(subs, list) or len(subs) > 5:
            problems.append(f"{button.get('name')!r}: sub_button must list at most 5 buttons")
            continue
        for sub in subs:
            problems += _button_problems(sub, top=False, has_subs=False) if isinstance(sub, dict) else \
                [f"{button.get('name')!r}: each sub-button must be a table/object"]
    return problems


def _button_problems(button: dict[str, Any], *, top: bool, has_subs: bool) -> list[str]:
    name = str(button.get("name", ""))
    limit = 16 if top else 60
    problems = [] if 1 <= len(name.encode()) <= limit else [f"{name!r}: a name is 1–{limit} bytes (UTF-8)"]
    if has_subs:
        return problems
    kind = button.get("type")
    if kind == "click" and not 1 <= len(str(button.get("key", "")).encode()) <= 128:
        problems.append(f"{name!r}: a click button needs a key of 1–128 bytes")
    elif kind == "view" and not str(button.get("url", "")).startswith(("http://", "https://")):
        problems.append(f"{name!r}: a view button needs an http(s) url")
    elif kind not in ("click", "view"):
        problems.append(f"{name!r}: type must be click or view (or give sub_button)")
    return problems


async def run(settings: Settings, args: argparse.Namespace, out: TextIO) -> int:
    if args.wechat_command == "menu" and args.dry_run:
        return _print_menu(args.file, out)
    missing = [n for n in ("WECHAT_APP_ID", "WECHAT_APP_SECRET") if not getattr(settings, n)]
    if missing:
        out.write(f"✘ set {', '.join(missing)} first (公众号后台 → 设置与开发 → 基本配置)\n")
        return 2
    api = account_client(settings)
    try:
        if args.wechat_command == "template":
            reminder = await _template(settings, api, out)
            return max(reminder, await subscribe_templates.check(settings, api, out))  # 订阅通知
        return await _menu(args, api, out)
    except WeChatError as exc:
        out.write(f"✘ {describe(exc, api_base=settings.WECHAT_API_BASE)}\n")
        return 1
    finally:
        await api.aclose()


def _print_menu(path: str | None, out: TextIO) -> int:
    try:
        menu = load_menu(path)
    except (OSError, ValueError) as exc:
        out.write(f"✘ cannot read the menu file: {exc}\n")
        return 2
    problems = menu_problems(menu)
    out.write(json.dumps(menu, ensure_ascii=False, indent=2) + "\n")
    for problem in problems:
        out.write(f"✘ {problem}\n")
    return 1 if problems else 0


async def _menu(args: argparse.Namespace, api: WeChatClient, out: TextIO) -> int:
    if args.delete:
        await api.get("menu/delete")
        out.write("✔ menu deleted\n")
        return 0
    if args.show:
        try:
            data = await api.get("menu/get")
        except WeChatAPIError as exc:
            if exc.errcode != 46003:
                raise
            out.write("the account has no custom menu; create one with `schedbot wechat menu`\n")
            return 0
        out.write(json.dumps(data.get("menu", data), ensure_ascii=False, indent=2) + "\n")
        return 0
    try:
        menu = load_menu(args.file)
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError and JSONDecodeError are ValueErrors
        out.write(f"✘ cannot read the menu file: {exc}\n")
        return 2
    problems = menu_problems(menu)
    if problems:
        out.write("".join(f"✘ {p}\n" for p in problems))
        return 2
    await api.post("menu/create", menu)
    names = [b.get("name") for b in menu["button"]]
    out.write(f"✔ menu created: {' | '.join(map(str, names))} (users see it after re-entering the chat)\n")
    return 0


async def _template(settings: Settings, api: WeChatClient, out: TextIO) -> int:
    out.write("The reminder template fallback fills: "
              + ", ".join(f"{{{{{k}.DATA}}}} {v}" for k, v in REMINDER_FIELDS.items()) + "\n")
    templates = (await api.get("template/get_all_private_template")).get("template_list") or []
    fitting = [t for t in templates if not _missing_fields(t)]
    wanted = settings.WECHAT_TEMPLATE_ID_REMINDER
    if not wanted:
        out.write("✘ WECHAT_TEMPLATE_ID_REMINDER is not set: reminders outside the 48 h window wait in the "
                  "in-app queue\n")
        _list(fitting, out, "templates on this account with those fields" if fitting else
              "no template on this account has those fields: add one in 模板消息 → 模板库 (e.g. 日程提醒)")
        return 1
    found = next((t for t in templates if t.get("template_id") == wanted), None)
    if found is None:
        out.write(f"✘ WECHAT_TEMPLATE_ID_REMINDER={wanted} is not among the account's {len(templates)} templates\n")
        _list(fitting, out, "templates that would work")
        return 1
    missing = _missing_fields(found)
    if missing:
        out.write(f"✘ template {wanted} ({found.get('title')}) lacks "
                  + ", ".join(f"{{{{{m}.DATA}}}}" for m in missing) + "\n")
        _list(fitting, out, "templates that would work")
        return 1
    out.write(f"✔ WECHAT_TEMPLATE_ID_REMINDER={wanted} ({found.get('title')}) has every field the bot fills\n")
    return 0


def _missing_fields(template: dict[str, Any]) -> list[str]:
    present = set(re.findall(r"\{\{(\w+)\.DATA\}\}", str(template.get("content", ""))))
    return [name for name in REMINDER_FIELDS if name not in present]


def _list(templates: list[dict[str, Any]], out: TextIO, heading: str) -> None:
    out.write(f"  {heading}\n" if not templates else f"  {heading}:\n")
    for t in templates:
        out.write(f"    {t.get('template_id')}  {t.get('title')}\n")
