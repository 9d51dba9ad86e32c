"""`schedbot wechat template`, the subscription-message part: the account's 订阅通知 templates
(`GET /wxaapi/newtmpl/gettemplate`) and whether WECHAT_SUBSCRIBE_TEMPLATE_ID is one the bot can fill."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol, TextIO

from bot.settings import Settings
from bot.wechat.errors import WeChatAPIError

FIELDS = {"thing1": "事项（≤20 字）", "time2": "时间"}  # what WeChatSubscribeChannel fills
LONG_TERM = 3  # gettemplate's `type`: 2 one-time (一次性订阅), 3 long-term (长期订阅)
GETTEMPLATE = "/wxaapi/newtmpl/gettemplate"


class Account(Protocol):
    """What the check needs of the WeChat client: one authenticated GET."""

    async def get(self, api: str, params: Mapping[str, str] | None = None) -> dict[str, Any]: ...


def _missing(template: dict[str, Any]) -> list[str]:
    present = set(re.findall(r"\{\{(\w+)\.DATA\}\}", str(template.get("content", ""))))
    return [name for name in FIELDS if name not in present]


async def check(settings: Settings, api: Account, out: TextIO) -> int:
    """0 when WECHAT_SUBSCRIBE_TEMPLATE_ID is unset (it is optional) or fits; 1 when it does not."""
    wanted = settings.WECHAT_SUBSCRIBE_TEMPLATE_ID
    out.write("The subscription-message (订阅通知) rung fills: "
              + ", ".join(f"{{{{{k}.DATA}}}} {v}" for k, v in FIELDS.items()) + "\n")
    try:
        templates = (await api.get(GETTEMPLATE)).get("data") or []
    except WeChatAPIError as exc:
        if not wanted:
            out.write(f"– 订阅通知 is not available on this account (errcode {exc.errcode}); it is optional\n")
            return 0
        raise
    fitting = [t for t in templates if not _missing(t)]
    if not wanted:
        out.write("– WECHAT_SUBSCRIBE_TEMPLATE_ID is not set (optional): without it the ladder skips 订阅通知\n")
        _list(fitting, out)
        return 0
    found = next((t for t in templates if t.get("priTmplId") == wanted), None)
    if found is None:
        out.write(f"✘ WECHAT_SUBSCRIBE_TEMPLATE_ID={wanted} is not among the account's {len(templates)} "
                  "subscription templates\n")
        _list(fitting, out)
        return 1
    if _missing(found):
        out.write(f"✘ subscription template {wanted} ({found.get('title')}) lacks "
                  + ", ".join(f"{{{{{m}.DATA}}}}" for m in _missing(found)) + "\n")
        _list(fitting, out)
        return 1
    long_term = found.get("type") == LONG_TERM
    if long_term != settings.WECHAT_SUBSCRIBE_LONG_TERM:
        out.write(f"✘ subscription template {wanted} is {'long-term' if long_term else 'one-time'}: set "
                  f"WECHAT_SUBSCRIBE_LONG_TERM={int(long_term)}\n")
        return 1
    out.write(f"✔ WECHAT_SUBSCRIBE_TEMPLATE_ID={wanted} ({found.get('title')}, "
              f"{'long-term' if long_term else 'one-time'}) has every field the bot fills\n")
    return 0


def _list(templates: list[dict[str, Any]], out: TextIO) -> None:
    if not templates:
        out.write("  no subscription template with those fields: 选用 one in 订阅通知 → 公共模板库 (e.g. 日程提醒)\n")
        return
    out.write("  subscription templates that would work:\n")
    for t in templates:
        kind = "long-term" if t.get("type") == LONG_TERM else "one-time"
        out.write(f"    {t.get('priTmplId')}  {t.get('title')}  ({kind})\n")
