"""The agent boundary (docs/conversation.md#agent): questions about the bot or the world go to the agent even
when they hold schedule words; casual questions about the user's own items are queries."""

from __future__ import annotations

import re

from intent.lexicon import is_activity
from intent.slots import Slots

# A look-up verb + a thing of the world (timetables, tickets, weather, prices …): the agent answers it,
# unless the user says it is theirs (我的航班, 我明天的高铁).
_LOOKUP = re.compile(r"查|搜|找一?下|看看|看一下|问一下|有没有")
_WORLD = re.compile(
    r"航班(?!.*我)|机票|车票|高铁票|火车票|动车票|余票|票价|班次|时刻表|天气|路况|堵不堵|新闻|股票|股价|汇率|油价|"
    r"电影票|排片|比分|赛程|菜谱|攻略|酒店|餐厅|景点|物流|快递到哪|限行|高铁|火车|动车|地铁|公交|航班"
)
_HELPER = re.compile(r"帮我|给我|替我|让我|麻烦")
_MINE = re.compile(r"我|咱")

# Ability questions: 你能提醒我吗 / 你可以帮我记事吗 — no time, no item of their own.
_ABILITY = re.compile(r"(?:你|您)?(?:能|会|可以|能不能|可不可以|能否|支持|是否)")
_ABILITY_END = re.compile(r"(?:吗|嘛|么|不|没有?|呢)[?!.]*$")
_ABILITY_WORDS = re.compile(r"你|您|我|能不能|可不可以|能否|支持|是否|可以|能|会|帮我|给我|提醒|记事情?|记东西|记录|"
                            r"设置?|定|闹钟|做|干|事情?|什么|啥|嘛|吗|么|不|没有?|呢|一下|[,.!? ]")

# A question about one of the user's own items: 后天的会在哪开来着 / 明天的面试是几点.
_OWN_ASK = re.compile(
    r"几点|在哪|哪儿|哪里|什么时候|啥时候|来着|多久|什么地方|(?:地点|地址)(?:是|在)?(?:哪|什么|啥|多少)|地址呢|地址[?]?$")


def asks_the_world(text: str) -> bool:
    """帮我查一下明天去杭州的航班: a look-up of something that is not in the user's schedule."""
    if not (_LOOKUP.search(text) and _WORLD.search(text)):
        return False
    return not _MINE.search(_HELPER.sub("", text))


def asks_about_bot(text: str, slots: Slots) -> bool:
    """你能提醒我吗: asks what the bot can do; a time or an item of its own makes it a request."""
    if not (_ABILITY.search(text) and _ABILITY_END.search(text)) or slots.spans:
        return False
    return not _ABILITY_WORDS.sub("", text)


# 看看周五还有什么 / 明天有啥: what else a day holds.
_WHAT_ELSE = re.compile(r"(?:还|另外|别的)?有(?:什么|啥|哪些)(?:别的|其他|事|事情|事儿)?[?!.吗呢啊呀]*$")


def asks_own_item(text: str, slots: Slots) -> bool:
    """明天的会几点开来着: a dated question about an activity of the user's is a query of that day; so is
    看看周五还有什么."""
    if slots.when is not None and _WHAT_ELSE.search(text):
        return True
    return slots.when is not None and bool(_OWN_ASK.search(text)) and (is_activity(text) or "的会" in text)
