"""Fillers that open a message and carry no request (SPEC §3 rule 20): 哎 / 嗯 / 哦对 / 算了 / 那个 …

"哎算了 那个聚餐取消吧" is "聚餐取消吧" to every rule after this; a filler alone ("算了吧", "嗯") is left as it
is, for the rules that read it as an answer.
"""

from __future__ import annotations

import re

_LEADING = re.compile(
    r"^(?:(?:哦+对了?|噢对了?|sorry|sry|抱歉|不好意思|谢谢您?|多谢|那啥|那什么|您|呜+|哎呀|哎哟|哎|唉|诶|欸|唔+|嗯+|哦+|噢|喔|呃+|额|啊|哈+|嘿|em+|对了|算了|好吧|那就|那么|太早了啦?|太晚了啦?|不行|"
    r"那个(?![月星周礼])|这个(?![月星周礼]))[,.!~ ]*)+"
)
_NOTHING_LEFT = re.compile(r"^[吧啊呀了哈嘛呢,.!?~ ]*$")


_THANKS = re.compile(r"[,. ]*(?:谢谢您?|谢谢你|多谢|谢啦|麻烦了|麻烦您了|辛苦了|辛苦啦)[!.~ ]*$")


def strip(text: str) -> str:
    """`text` without its opening fillers (and a closing thank-you), unless nothing but particles would be left."""
    thanked = _THANKS.sub("", text)
    text = thanked if thanked.strip() and thanked != text and not _NOTHING_LEFT.match(thanked) else text
    m = _LEADING.match(text)
    if m is None or m.end() == 0:
        return text
    rest = text[m.end():]
    return text if _NOTHING_LEFT.match(rest) else rest
