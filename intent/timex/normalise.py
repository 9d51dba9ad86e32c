"""Character normalisation that keeps offsets: every input char maps to exactly one char."""

from __future__ import annotations

_PAIRS = {
    **{chr(0xFF10 + i): str(i) for i in range(10)},
    "：": ":", "～": "~", "－": "-", "／": "/", "．": ".", "　": " ", "〜": "~",
    "後": "后", "點": "点", "個": "个", "週": "周", "禮": "礼", "鐘": "钟", "〇": "零",
    "兩": "两", "號": "号", "晚": "晚", "，": ",", "—": "-", "–": "-",
}
_TABLE = str.maketrans(_PAIRS)


def normalise(text: str) -> str:
    """Full-width digits and punctuation to ASCII, a few traditional forms to simplified."""
    return text.translate(_TABLE)
