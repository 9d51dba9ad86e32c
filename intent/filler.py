"""Fillers that open a message and carry no request (SPEC §3 rule 20): 哎 / 嗯 / 哦对 / 算了 / 那个 …

"哎算了 那个聚餐取消吧" is "聚餐取消吧" to every rule after this; a filler alone ("算了吧", "嗯") is left as it
is, for the rules that read it as an answer.
"""

from __future__ import annotations

import re

_LEADING = re.compile(
    r"^(?:(?:哦+对了?|噢对了?|哎呀|哎哟|哎|唉|诶|欸|唔+|嗯+|哦+|噢|喔|呃+|额|啊|哈+|嘿|emm+|对了|算了|好吧|那就|那么|"
    r"那个(?![月星周礼])|这个(?![月星周礼]))[,.!~ ]*)+"
)
_NOTHING_LEFT = re.compile(r"^[吧啊呀了哈嘛呢,.!?~ ]*$")


def strip(text: str) -> str:
    """`text` without its opening fillers, unless nothing but particles would be left."""
    m = _LEADING.match(text)
    if m is None or m.end() == 0:
        return text
    rest = text[m.end():]
    return text if _NOTHING_LEFT.match(rest) else rest
