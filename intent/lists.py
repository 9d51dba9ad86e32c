"""Lists of to-dos in one message: "day: a, b, c" or a to-do lead-in (要买的：/待办事项：/出差要准备的：,
a day optional) gives one task per thing; "每天上午10点、下午3点提醒我喝水" gives one request per clock."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from intent.model import CreateIntent, Intent
from intent.pipeline import parse
from intent.runon import entries
from intent.timex import TimeMention

# 明天要做的事：买菜、取快递、交电费 / 周五要办:续签合同,交社保 — a day, a colon, then several things to do.
_LIST_HEAD = re.compile(r"^(?P<day>[^:,]{1,10}?)(?:的|要|需要|得)?"
                        r"(?:要做的事情?|要办的事情?|要做的|要办的?|待办事项|待办|的?事情?|任务|清单|安排)?"
                        r"(?:有|是)?:(?P<items>.+)$")
# 要买的：… / 出差要准备的东西：… / 待办事项：… / 这周末要做的：… — a lead-in that says the things are to-dos;
# an optional day (and other context, 出差) before it.
_LEAD_IN = re.compile(
    r"^(?P<head>[^:,]{0,12}?)的?(?:"
    r"(?:要|需要|得|该)(?P<verb>买|带|准备|拿|交|寄|还|取|做|办|干|处理|完成|搞定|弄)的?(?:几件|几样|这些)?"
    r"(?:事情?|事儿|事项|东西|物品)?"
    r"|(?P<noun>待办事项|待办清单|待办列表|待办|待做|待处理|todo|购物清单|采购清单|购物单|任务清单|任务列表|任务)"
    r")(?:有|是|如下)?:(?P<items>.+)$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"\s*(?:\d{1,2}[.)、]|[①-⑩])?\s*")  # 1. / 2) / ① numbering
_LIST_CUT = re.compile(r"[,;]|(?<=[^\x00-\x7f])\s+(?=[^\x00-\x7f])|\s+(?=[A-Za-z\d])")
# The verb of the lead-in that names what is done with each thing (要买的：牛奶 → 买牛奶).
_THING_VERB = frozenset({"买", "带", "准备", "拿", "交", "寄", "还", "取"})
_SHOPPING = re.compile(r"购物|采购|要带|要买")  # a list of things to buy or take, not of errands
# A run with time words is requests said together, not a list to cut (周报 / 点奶茶 are no time words).
_TIME_WORD = re.compile(r"\d|[零一二两三四五六七八九十][点时号]|[今明后]天|[今明][早晚]|"
                        r"(?:周|星期|礼拜)[一二三四五六日天]|凌晨|早上|上午|中午|下午|傍晚|晚上")
_NOT_A_THING = re.compile(r"提醒|叫我|提前|地点|结束|顺便|另外|然后")  # a clause of a request, not a list entry


def todo_list(norm: str, now: datetime, tz: ZoneInfo | str, offset: int) -> list[Intent] | None:
    """One task per thing of a list (lists of to-dos): "day: a, b, c" or a to-do lead-in (要买的：/待办：) with an
    optional day; None for any other text."""
    lead = _LEAD_IN.match(norm)
    if lead is not None:
        day = _LIST_DAY.match(lead.group("head"))
        verb = lead.group("verb") if lead.group("verb") in _THING_VERB else ""
        items = _list_items(lead.group("items"), least=1, things=bool(verb) or _SHOPPING.search(lead.group(0)[:16])
                            is not None)
        if items is None:
            return None
        return [_thing(day.group(0) if day else "", item, verb, now, tz, offset) for item in items]
    m = _LIST_HEAD.match(norm)
    if m is None or not _DAY_ONLY.fullmatch(m.group("day")):
        return None
    items = _list_items(m.group("items"), least=2, things=False)
    if items is None:
        return None
    return [_thing(m.group("day"), item, "", now, tz, offset) for item in items]


def _list_items(text: str, *, least: int, things: bool) -> list[str] | None:
    items = [_LIST_ITEM.sub("", part, count=1).strip() for part in _LIST_CUT.split(text)]
    items = [item for item in items if item]
    if len(items) == 1 and not _NOT_A_THING.search(items[0]) and not _TIME_WORD.search(items[0]):
        # 换灯泡取快递剪头发: said with no separator at all
        items = entries(items[0], things=things) or items
    if not least <= len(items) <= 10 or any(len(item) > 20 or _NOT_A_THING.search(item) for item in items):
        return None
    return items


def _thing(day: str, item: str, verb: str, now: datetime, tz: ZoneInfo | str, offset: int) -> Intent:
    """One entry of a list: a request of its own when it says a clock time (9点还书), else a task due on the
    list's day (all day) or undated, titled by the thing (买 + 牛奶 for 要买的)."""
    said = parse(f"{day}{item}", now=now, tz=tz, meeting_offset_minutes=offset)
    if isinstance(said, CreateIntent) and not said.all_day and not said.needs_clarification \
            and (said.start_at or said.due_at) is not None:
        return said
    thing = verb + item if verb and not item.startswith(verb) else item
    noted = parse(f"记一下{day}{thing}", now=now, tz=tz, meeting_offset_minutes=offset)
    if not isinstance(noted, CreateIntent):
        return noted
    when = (noted.due_at or noted.start_at) if noted.all_day else None
    return noted.model_copy(update={
        "kind": "task", "title": noted.title or thing, "start_at": None, "end_at": None, "due_at": when,
        "all_day": when is not None, "needs_clarification": [], "question": None, "pending": None, "confidence": 0.9,
        "reminder": noted.reminder if when is None or noted.reminder is None else None,
        "rule": f"{noted.rule}+list"})


_DAY_ONLY = re.compile(r"(?:今天|明天|后天|大后天|(?:这|本|下)?(?:周|星期|礼拜)[一二三四五六日天]|"
                       r"\d{1,2}月\d{1,2}[日号]|\d{1,2}[日号])")
# The day that starts a lead-in's head (这周末要做的 / 周日要买的东西 / 今天的待办 / 今晚要做的).
_LIST_DAY = re.compile(rf"(?:{_DAY_ONLY.pattern}|(?:这|本|下)?周末|[今明](?:早|晚))"
                       r"(?:凌晨|早上|上午|中午|下午|傍晚|晚上)?")


_CLOCK = (r"(?:凌晨|早上|上午|中午|下午|傍晚|晚上)?(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
          r"(?::\d{2}|点(?:半|一刻|\d{1,2}分?)?)")
# 每天上午10点、下午3点提醒我喝水: one request per clock, each with the day words and the rest of the sentence.
_CLOCKS = re.compile(rf"^(?P<head>[^,\d]{{0,12}}?)(?P<times>{_CLOCK}(?:(?:,|和|还有){_CLOCK})+)(?P<rest>[^,]{{2,}})$")


def clock_list(norm: str) -> list[str] | None:
    m = _CLOCKS.match(norm)
    if m is None or m.group("head").endswith(("到", "至")):
        return None  # 今晚加班到十点,九点半提醒我: the first clock ends something, it is no second reminder
    times = re.findall(_CLOCK, m.group("times"))
    return [f"{m.group('head')}{clock}{m.group('rest')}" for clock in times] if 2 <= len(times) <= 6 else None


# 周二周四下午五点半接孩子 / 明天和后天上午十点练车: two days said for one thing, one request per day.
_DAY_JOIN = re.compile(r"^\s*(?:和|跟|与|及|还有|以及|、|,|/)?\s*$")
_NOT_CREATE = re.compile(r"[?]|吗|有没有|有什么|有啥|安排了|空不空|有空|忙不忙|取消|不去|改到|改成|推迟|提前到|完成|每"
                         r"|不用|不要|别|不必|推送|发送")
_DAY_WORD = re.compile(r"^(?:大?后天|明天|今天|明日|今日|明儿"
                       r"|(?:下下|下|这|本)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天1-7]"
                       r"|\d{1,2}月\d{1,2}[日号]|\d{1,2}[日号])")
_WEEKDAYS = re.compile(r"^((?:(?:周|星期|礼拜)[一二三四五六日天1-7](?:和|跟|与|及|、|,|/|\s)?){2,})")
_ONE_WEEKDAY = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天1-7]")


def day_list(norm: str, mentions: list[TimeMention]) -> list[str] | None:
    """The text once per day when two or more days are said side by side for one request (周二周四下午五点半接孩子
    → 周二下午五点半接孩子, 周四下午五点半接孩子); None otherwise (a question, a change or a series names its days
    itself)."""
    if _NOT_CREATE.search(norm):
        return None
    days = [m for m in mentions if m.type in ("point", "range") and m.has_date and m.rrule is None]
    for i, first in enumerate(days):
        b, e = first.span
        joined = _WEEKDAYS.match(first.text) if first.rule.startswith("weekday+weekday") else None
        if joined is not None:  # 周二周四下午五点半: one mention holding both days
            rest = first.text[joined.end():]
            words = _ONE_WEEKDAY.findall(joined.group(1))
            return _each_day(norm[:b], words, rest, norm[e:])
        run = [first]
        for later in days[i + 1:]:
            if run[-1].has_clock or not _DAY_JOIN.match(norm[run[-1].span[1]:later.span[0]]):
                break
            run.append(later)
        if len(run) < 2:
            continue
        last = run[-1]
        said = _DAY_WORD.match(last.text)
        if said is None:
            return None
        words = [m.text for m in run[:-1]] + [said.group(0)]
        return _each_day(norm[:b], words, last.text[said.end():], norm[last.span[1]:])
    return None


def _each_day(head: str, words: list[str], rest: str, tail: str) -> list[str] | None:
    if not tail.strip(" ,") or any(not _DAY_WORD.match(w) for w in words):
        return None  # 周二和周四: nothing said for them
    return list(dict.fromkeys(f"{head}{word}{rest}{tail}" for word in words))  # 明天明天下午三点: a stutter, once
