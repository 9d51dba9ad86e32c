"""The one-time hint about subscription messages (issue 30): a reminder set beyond WeChat's 48-hour window."""

from __future__ import annotations

HINT = ("提示：这条提醒在两天以后。若那时你 48 小时内没有给我发过消息，微信只允许我用“订阅通知”找你："
        "打开行程页点“接收提醒通知”并选择允许，就能准时收到。")
