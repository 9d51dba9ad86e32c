"""Questions about one item: 跟王总吃饭是哪天 / 体检几点 / 周会在哪开 ask for that item's time or place.

The question word (哪天 / 几点 / 什么时候 / 在哪 …) at the end is the marker; what comes before it, without
fillers, names the item. A day or time said there (春节是哪天, 明天几点) is a question about the calendar, left
to the other rules.
"""

from __future__ import annotations

import re

from intent.model import QueryIntent
from intent.slots import Slots
from intent.title import clean

_WHEN = re.compile(r"(?:是|在)?(?:哪天|哪一天|几号|几月几号|几月几日|什么时候|啥时候|几点钟?|星期几|周几|礼拜几|啥时)"
                   r"(?:开始|开|举行|出发|到|见|见面)?(?:来着)?[吗呢啊呀?]*$")
_WHERE = re.compile(r"(?:是)?(?:在|去)?(?:哪里|哪儿|哪|什么地方|啥地方|哪个地方)(?:开|举行|见|见面|集合|办|进行|上课)?"
                    r"(?:来着)?[吗呢啊呀?]*$")
_NOT_AN_ITEM = re.compile(r"^(?:你|您|我|他|她|它|这|那|现在|今天|明天|后天|最近|天气|快递|外卖)$"
                          r"|^(?:下一个|第一个|最早|最后一个|最近)")  # 下一个会是几点: the query rules


def read(text: str, slots: Slots, *, focus: bool = False) -> QueryIntent | None:
    """The question about one item's time or place, or None. With an item in focus, the question word alone
    (几点来着 / 在哪) asks about that item (`about` is empty)."""
    for asked, marker in (("when", _WHEN), ("where", _WHERE)):
        m = marker.search(text)
        if m is not None and m.start() == 0 and focus and not slots.spans:
            return QueryIntent(about="", asked=asked, rule=f"question.focus_{asked}", confidence=0.8)
        if m is None or m.start() == 0:
            continue
        if any(b < m.start() for b, _e in slots.spans):
            return None  # 春节是哪天 / 明天几点: a day said, a question about the calendar
        about = clean(re.sub(r"^(?:请问|问一下|问下|我想问|帮我查(?:一下|下)?|查一下|查下)", "", text[:m.start()]))
        about = re.sub(r"(?:的|呢|是|那个|这个)+$", "", about)
        if not about or _NOT_AN_ITEM.match(about) or len(about) > 20:
            return None
        return QueryIntent(about=about, asked=asked, rule=f"question.{asked}", confidence=0.8)
    return None
