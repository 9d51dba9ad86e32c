"""Character normalisation that keeps offsets: every input char maps to exactly one char."""

from __future__ import annotations

import re

_PAIRS = {
    **{chr(0xFF10 + i): str(i) for i in range(10)},
    "：": ":", "～": "~", "－": "-", "／": "/", "．": ".", "　": " ", "〜": "~",
    "後": "后", "點": "点", "個": "个", "週": "周", "禮": "礼", "鐘": "钟", "〇": "零",
    "兩": "两", "號": "号", "，": ",", "—": "-", "–": "-", "時": "时", "這": "这", "當": "当", "現": "现",
    "節": "节", "聖": "圣", "誕": "诞", "婦": "妇", "勞": "劳", "動": "动", "兒": "儿", "軍": "军", "國": "国",
    "慶": "庆", "萬": "万", "陽": "阳", "曆": "历", "過": "过", "還": "还", "內": "内", "農": "农", "臘": "腊",
    "間": "间", "樹": "树", "愛": "爱", "師": "师", "親": "亲", "誌": "志", "頭": "头", "歲": "岁",
    "晝": "昼", "陰": "阴", "舊": "旧", "來": "来",
}
_TABLE = str.maketrans(_PAIRS)


_CJK = re.compile(r"(?<=[0-9\u4e00-\u9fff]) {1,2}(?=[0-9\u4e00-\u9fff])")
_NEXT_CLOCK = re.compile(r"[0-9零一二两三四五六七八九十]{1,3}[点时:]")


def squeeze(text: str) -> tuple[str, list[int]]:
    """Drop spaces between Chinese and digits (每天早上 7 点 → 每天早上7点), keeping an index map back.

    Spaces between two digits (2010 01 29) stay, and so do those before 月/日 unless a month came
    earlier (10 月 and 五 日 alone are durations in Duckling; 6 月 20 到 25 日 is a date range).
    """
    if " " not in text:
        return text, list(range(len(text)))
    drop: set[int] = set()
    for m in _CJK.finditer(text):
        a, z = text[m.start() - 1], text[m.end()]
        if (a.isdigit() and z.isdigit()) or (z in "月日" and "月" not in text[:m.start()]) \
                or (a in "点时半刻" and _NEXT_CLOCK.match(text, m.end())):
            continue  # (三点 四点半: two clock times, not 三点四 and a stray 点半)
        drop.update(range(m.start(), m.end()))
    where = [i for i in range(len(text)) if i not in drop]
    return "".join(text[i] for i in where), where


def normalise(text: str) -> str:
    """Full-width digits and punctuation to ASCII, a few traditional forms to simplified."""
    return text.translate(_TABLE)
