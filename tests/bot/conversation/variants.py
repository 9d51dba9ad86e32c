"""Meaning-preserving rewrites of what a user says, one kind each (after CheckList, Ribeiro et al., ACL 2020).

Each rewrite takes one line the user said and its position in the dialogue, and gives the line in other words,
or None when it does not apply to that line. A dialogue rewritten line by line must leave the same rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Rewrite = Callable[[str, int], "str | None"]

_COMMA = re.compile(r"[，,、；;]\s*")
_END = re.compile(r"[。.！!？?~～]+$")
_ASKS = re.compile(r"[吗呢?？]$")
_CN_DIGIT = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_CLOCK = re.compile(r"(?<![0-9零一二两三四五六七八九十第])(十[一二]?|[一二两三四五六七八九])点(?![点儿])")  # not 一点点
_WEEKDAY = re.compile(r"周(?=[一二三四五六日天])")
_SYNONYMS = (("提醒我", "叫我"), ("改到", "挪到"), ("改成", "换成"))
_MARKERS = ("不对", "不是", "搞错了", "取消")
_REPORTABLE = re.compile(r"改到|改成|挪到|不对|不是|地点|在.{1,8}(?:楼|室|厅|馆|店|院|门|口|中心|广场|大厦)")


def _changed(text: str, new: str) -> str | None:
    return new if new != text else None


def _filler_start(text: str, _turn: int) -> str | None:
    return f"嗯，{text}"


def _particle_end(text: str, _turn: int) -> str | None:
    if _ASKS.search(text) or text.isdigit():
        return None
    return f"{_END.sub('', text)}哈"


def _filler_middle(text: str, _turn: int) -> str | None:
    return _changed(text, _COMMA.sub("，那个，", text, count=1))


def _punct_space(text: str, _turn: int) -> str | None:
    return _changed(text, _COMMA.sub(" ", text))


def _punct_none(text: str, _turn: int) -> str | None:
    return _changed(text, _COMMA.sub("", text))


def _punct_fullstop(text: str, _turn: int) -> str | None:
    return _changed(text, _COMMA.sub("。", text))


def _exclaim(text: str, _turn: int) -> str | None:
    return None if _ASKS.search(text) else f"{_END.sub('', text)}！"


def _doubled_marker(text: str, _turn: int) -> str | None:
    for marker in _MARKERS:
        if text.startswith(marker):
            return f"{marker}{marker}{text[len(marker):]}"
    return None


def _reported(text: str, turn: int) -> str | None:
    return f"他说{text}" if turn > 0 and _REPORTABLE.search(text) else None


def _fullwidth_digits(text: str, _turn: int) -> str | None:
    return _changed(text, text.translate({ord(c): ord(c) + 0xFEE0 for c in "0123456789"}))


def _clock_digits(text: str, _turn: int) -> str | None:
    def digits(m: re.Match[str]) -> str:
        word = m.group(1)
        value = 10 + (_CN_DIGIT[word[1]] if len(word) > 1 else 0) if word.startswith("十") else _CN_DIGIT[word]
        return f"{value}点"

    return _changed(text, _CN_CLOCK.sub(digits, text))


def _weekday_xingqi(text: str, _turn: int) -> str | None:
    return _changed(text, _WEEKDAY.sub("星期", text))


def _weekday_libai(text: str, _turn: int) -> str | None:
    return _changed(text, _WEEKDAY.sub("礼拜", text))


def _verb_synonym(text: str, _turn: int) -> str | None:
    new = text
    for said, other in _SYNONYMS:
        new = new.replace(said, other)
    return _changed(text, new)


def _emoji(text: str, _turn: int) -> str | None:
    return f"{text} 🙂"


def _voice_stops(text: str, _turn: int) -> str | None:
    spoken = re.sub(r"[，,、；;\s]+", "。", _END.sub("", text)).strip("。")
    return None if _ASKS.search(text) else f"{spoken}。"


KINDS: dict[str, Rewrite] = {
    "filler_start": _filler_start,
    "filler_middle": _filler_middle,
    "particle_end": _particle_end,
    "punct_space": _punct_space,
    "punct_none": _punct_none,
    "punct_fullstop": _punct_fullstop,
    "punct_exclaim": _exclaim,
    "doubled_marker": _doubled_marker,
    "reported_speech": _reported,
    "fullwidth_digits": _fullwidth_digits,
    "clock_digits": _clock_digits,
    "weekday_xingqi": _weekday_xingqi,
    "weekday_libai": _weekday_libai,
    "verb_synonym": _verb_synonym,
    "trailing_emoji": _emoji,
    "voice_stops": _voice_stops,
}
