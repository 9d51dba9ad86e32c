"""The one-time hint about subscription messages: a reminder set beyond WeChat's 48-hour window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HINT = ("提示：这条提醒在两天以后。若那时你 48 小时内没有给我发过消息，微信只允许我用“订阅通知”找你："
        "打开行程页点“接收提醒通知”并选择允许，就能准时收到。")


@dataclass(frozen=True, slots=True)
class SubscribeButton:
    """WeChat's consent button on the private page: the template, the signed `wx.config`, the script nonce
    the page's Content-Security-Policy allows."""

    template_id: str
    wx_config: dict[str, Any]
    script_nonce: str
