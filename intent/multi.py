"""Several requests in one message (SPEC §3 rule 16): `parse_all` → one intent per request, in order.

How a message is cut:
- Clauses are separated by , . ; ! ? (normalised), by a space between Chinese characters, and before
  the connectives 顺便/另外/同时/并且/然后.
- A clause *stands alone* when it is a request by itself: a query (看看…安排), a digest request, a
  create with its own words and its own time (or 记一下 + words), or a cancel/complete/update naming
  its own target. A new request starts at a clause that stands alone when the request so far already
  stands alone; every other clause belongs to the request before it (提前半小时提醒我, 地点在三楼,
  4点结束, context such as 老板说了 …).
- A clause asking for a reminder at a bare clock time before the previous item's time on the same day
  is that item's reminder (明天三点开会，两点半提醒我出发), not a new request.

What carries over:
- Date: a request whose time words name a clock but no day (下午3点), or a query naming no time at all,
  takes the day of the nearest earlier request that named one (明天9点…，下午3点… → tomorrow 15:00).
  Recurrences, relative times (半小时后) and rolled clock times give no day to carry.
- Subject: a request with its own time but no words of its own, marked 也/同样/一样/照旧 (晚上8点也要),
  takes the previous request's title (and its 提醒我).

One request gives `[parse(text, …)]` exactly. With `pending`, a first clause that answers it is merged
with it (as `parse` would) and comes first. Never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from intent.followup import FocusHint, corrects, with_that_day
from intent.model import CreateIntent, Intent
from intent.normalise import normalise
from intent.pipeline import analyse, parse, parse_prepared
from intent.slots import DAY_BEFORE

if TYPE_CHECKING:
    from intent.slots import Slots
    from intent.timex.types import TimeMention

_CLAUSE = re.compile(r"[,!?.]+|(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])|(?=顺便|另外|同时|并且|然后)")
_CONNECTIVE = re.compile(r"^(?:顺便|另外|同时|并且|然后|还有就是|再就是|还有|再)?(?:帮我)?")
# Cheap gate: a clause that might hold a request of its own (a time word, a request or query word).
_CUE = re.compile(r"[0-9零一二两三四五六七八九十]点|:[0-5][0-9]|[今明后]天|[今明]早|[今明]晚|周|星期|礼拜|号|每|"
                  r"记一下|记下|备忘|记个|看看|查|安排|行程|日程|待办|取消|完成|搞定|改到")
_GENERIC = frozenset({"", "提醒", "闹钟", "事", "个事", "件事", "一件事", "一个事", "事情", "一下", "会议", "记个事",
                      "记件事"})
_LEADING = re.compile(r"^(?:顺便|另外|同时|并且|然后|还有就是|再就是)")
_UNTIL_ONLY = frozenset({"到", "开到", "一直到", "至", "忙到", "持续到"})  # 开到五点半: the previous item's end
_EXTENT = re.compile(r"^(?:结束|散会|散|完|为止|截止|收尾|开完|搞完|左右)")
# 记一下 X starts a request of its own; 记得/别忘了 X after an item is a note about that item.
_NOTE = re.compile(r"记一下|记下|记录|记上|帮我记|备忘|记个|加个待办|添加待办")
_ALSO = re.compile(r"也|同样|一样|照旧|照样|再(?:叫|提醒|喊|通知)我?(?:一次|一遍|一下)?|(?:叫|提醒)?(?:一次|一遍)$")
# 明早8点叫我起床，8点半再叫一次: another reminder for the same thing, not a snooze of one delivered
_AGAIN = re.compile(r"再(?:叫|提醒|喊|通知)我?(?:一次|一遍|一下)?")
# 下周四体检，头一天晚上8点提醒我: a reminder clause counted from the previous item's day belongs to it.
_DAY_BEFORE = re.compile(rf"^(?:要|请|记得)?(?:提前[一两二三四五六七1-7]天|{DAY_BEFORE})")


@dataclass(slots=True)
class _Clause:
    begin: int
    end: int
    text: str
    mentions: list[TimeMention]
    alone: bool = False
    title: str = ""
    asks: bool = False  # asks for a reminder (提醒我 …)


def parse_all(
    text: str, *, now: datetime, tz: ZoneInfo | str = "Asia/Shanghai", pending: Intent | None = None,
    meeting_offset_minutes: int = 60, focus: FocusHint | None = None,
) -> list[Intent]:
    """Every request of `text` in order (see the module docstring); one request → `[parse(text, …)]`.
    `focus` describes the item the conversation is about (`intent.followup`)."""
    try:
        zone = tz if isinstance(tz, ZoneInfo) else ZoneInfo(tz)
        local = now.astimezone(zone)
        norm = with_that_day(normalise(text if isinstance(text, str) else str(text)), focus)
        listed = (_todo_list(norm) or _clock_list(norm)) if pending is None else None
        if listed is not None:
            return [parse(line, now=now, tz=tz, meeting_offset_minutes=meeting_offset_minutes) for line in listed]
        parts = _split(norm)
        mentions, degraded = analyse(norm, local, zone, None) if norm else ([], False)
        if corrects(norm):  # 不是后天,是大后天: one correction, however many time words it holds
            return [parse_prepared(norm, mentions, degraded, now=local, tz=zone, pending=pending,
                                   meeting_offset_minutes=meeting_offset_minutes, focus=focus)]
        several = len(parts) >= 2 and sum(1 for b, e in parts if _CUE.search(norm, b, e)) >= 2
        groups = _group(norm, parts, mentions, local.date(), pending) if several and not degraded else []
        if len(groups) < 2:
            return [parse_prepared(norm, mentions, degraded, now=local, tz=zone, pending=pending,
                                   meeting_offset_minutes=meeting_offset_minutes, focus=focus)]
        return _each(groups, norm, local, zone, pending, meeting_offset_minutes)
    except Exception:  # the contract is: never raise; the whole text as one request is the safe reading
        return [parse(text, now=now, tz=tz, pending=pending, meeting_offset_minutes=meeting_offset_minutes,
                      focus=focus)]


# 明天要做的事：买菜、取快递、交电费 / 周五要办:续签合同,交社保 — a day, a colon, then several things to do.
_LIST_HEAD = re.compile(r"^(?P<day>[^:,]{1,10}?)(?:的|要|需要|得)?"
                        r"(?:要做的事情?|要办的事情?|要做的|要办的?|待办事项|待办|的?事情?|任务|清单|安排)?"
                        r"(?:有|是)?:(?P<items>.+)$")
_LIST_ITEM = re.compile(r"\s*(?:\d{1,2}[.)、]|[①-⑩])?\s*")  # 1. / 2) / ① numbering


def _todo_list(norm: str) -> list[str] | None:
    """Each thing of a "day: a, b, c" list as its own request on that day; None for any other text."""
    m = _LIST_HEAD.match(norm)
    if m is None or not _DAY_ONLY.fullmatch(m.group("day")):
        return None
    items = [_LIST_ITEM.sub("", part, count=1).strip() for part in re.split(r"[,;]|\s+(?=\d{1,2}[.)])",
                                                                            m.group("items"))]
    items = [item for item in items if item]
    if not 2 <= len(items) <= 10 or any(len(item) > 20 for item in items):
        return None
    return [f"{m.group('day')}{item}" for item in items]


_DAY_ONLY = re.compile(r"(?:今天|明天|后天|大后天|(?:这|本|下)?(?:周|星期|礼拜)[一二三四五六日天]|"
                       r"\d{1,2}月\d{1,2}[日号]|\d{1,2}[日号])")


_CLOCK = (r"(?:凌晨|早上|上午|中午|下午|傍晚|晚上)?(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
          r"(?::\d{2}|点(?:半|一刻|\d{1,2}分?)?)")
# 每天上午10点、下午3点提醒我喝水: one request per clock, each with the day words and the rest of the sentence.
_CLOCKS = re.compile(rf"^(?P<head>[^,\d]{{0,12}}?)(?P<times>{_CLOCK}(?:(?:,|和|还有){_CLOCK})+)(?P<rest>[^,]{{2,}})$")


def _clock_list(norm: str) -> list[str] | None:
    m = _CLOCKS.match(norm)
    if m is None:
        return None
    times = re.findall(_CLOCK, m.group("times"))
    return [f"{m.group('head')}{clock}{m.group('rest')}" for clock in times] if 2 <= len(times) <= 6 else None


def _split(norm: str) -> list[tuple[int, int]]:
    """Clause spans [begin, end) of the normalised text, separators left out, empty clauses dropped."""
    out: list[tuple[int, int]] = []
    at = 0
    for m in _CLAUSE.finditer(norm):
        if m.start() > at:
            out.append((at, m.start()))
        at = max(at, m.end())
    if at < len(norm):
        out.append((at, len(norm)))
    return [(b, e) for b, e in out if norm[b:e].strip()]


def _clauses(norm: str, parts: list[tuple[int, int]], mentions: list[TimeMention]) -> list[_Clause] | None:
    """Clauses with their own mentions (spans made clause-relative); None if a mention crosses a cut."""
    out: list[_Clause] = []
    for b, e in parts:
        own = [replace(m, span=(m.span[0] - b, m.span[1] - b)) for m in mentions if b <= m.span[0] < e]
        if any(m.span[1] > e - b for m in own):
            return None
        out.append(_Clause(b, e, norm[b:e], own))
    return out


def _group(
    norm: str, parts: list[tuple[int, int]], mentions: list[TimeMention], today: date, pending: Intent | None
) -> list[list[_Clause]]:
    clauses = _clauses(norm, parts, mentions)
    if clauses is None:
        return []
    from intent.slots import collect

    groups: list[list[_Clause]] = []
    standing = False
    for i, c in enumerate(clauses):
        slots = collect(c.mentions, c.text)
        _judge(c, slots, today)
        if i == 0 and pending is not None and pending.needs_clarification:
            from intent.dialogue import is_answer

            c.alone = c.alone or is_answer(c.text, slots)
        if groups and c.alone and standing and not _reminder_for_previous(c, slots, groups[-1]):
            groups.append([c])
        elif groups:
            groups[-1].append(c)
        else:
            groups.append([c])
        standing = c.alone if len(groups[-1]) == 1 else standing or c.alone
    return groups


def _judge(c: _Clause, slots: Slots, today: date) -> None:
    from intent.action import CANCEL, COMPLETE, UPDATE, classify
    from intent.lexicon import REMIND_WORD
    from intent.title import title_of

    c.title = title_of(_AGAIN.sub(lambda m: "," * len(m.group()), c.text), slots.spans)  # 再叫一次 names nothing
    c.asks = bool(REMIND_WORD.search(c.text))
    action = classify(c.text, slots, today).action
    timed = slots.when is not None or slots.recur is not None or slots.relative is not None
    if c.asks and _DAY_BEFORE.match(c.text):
        c.alone = False
    elif _ALSO.sub("", c.title) in _GENERIC and slots.has_clock and _ALSO.search(c.text):
        c.alone = True  # 晚上8点也要: the subject carries over (see _with_subject)
    elif action in ("query", "subscribe_digest", "unsubscribe_digest"):
        c.alone = True
    elif action == "create":
        words = c.title not in _GENERIC and not _EXTENT.match(c.title) and c.title not in _UNTIL_ONLY
        alarm = c.asks and slots.has_clock and slots.when is not None and slots.when.has_date  # 明早8点叫我
        c.alone = (words and (timed or bool(_NOTE.search(c.text)))) or alarm
    elif action in ("cancel", "complete", "update"):
        verb = {"cancel": CANCEL, "complete": COMPLETE, "update": UPDATE}[action]
        c.alone = title_of(verb.sub(",", c.text), slots.spans) not in _GENERIC


def _reminder_for_previous(c: _Clause, slots: Slots, group: list[_Clause]) -> bool:
    """明天三点开会，两点半提醒我出发: a bare clock before the previous item's time is its reminder."""
    at = slots.when
    if not c.asks or at is None or at.has_date or at.start is None or not at.has_clock or slots.recur is not None:
        return False
    before = next((m for g in reversed(group) for m in g.mentions if m.start is not None and m.has_clock), None)
    return before is not None and before.start is not None and at.start.time() < before.start.time()


def _each(
    groups: list[list[_Clause]], norm: str, now: datetime, tz: ZoneInfo, pending: Intent | None, offset: int
) -> list[Intent]:
    out: list[Intent] = []
    day: date | None = None
    for i, group in enumerate(groups):
        b, e = group[0].begin, group[-1].end
        text = norm[b:e]
        own = [m for c in group for m in c.mentions]
        dated = next((m for m in own if m.start is not None and (m.has_date or m.type == "set")), None)
        if dated is not None:
            day = dated.start.date() if dated.type != "set" and dated.start is not None else None
        elif day is not None:
            text = _with_day(text, group, day)
        lead = _LEADING.match(text)
        text = text[lead.end():] if lead is not None and i > 0 else text
        answer = pending if i == 0 else None
        intent = parse(text, now=now, tz=tz, pending=answer, meeting_offset_minutes=offset)
        if i > 0 and out:
            intent = _with_subject(intent, group, out[-1], text, now, tz, offset)
        out.append(intent)
    return out


def _with_day(text: str, group: list[_Clause], day: date) -> str:
    """Put the carried day before the first clock or day period (or, for a query, before the clause)."""
    first = group[0]
    clock = next((m for c in group for m in c.mentions if (m.has_clock or m.period) and not m.relative
                  and m.type != "set"), None)
    stamp = f"{day.year}年{day.month}月{day.day}日"
    if clock is not None:
        owner = next(c for c in group if clock in c.mentions)
        at = owner.begin - first.begin + clock.span[0]
        return text[:at] + stamp + text[at:]
    if not any(c.mentions for c in group):
        lead = _CONNECTIVE.match(text)
        at = lead.end() if lead is not None else 0
        return text[:at] + stamp + text[at:]
    return text


def _with_subject(
    intent: Intent, group: list[_Clause], previous: Intent, text: str, now: datetime, tz: ZoneInfo, offset: int
) -> Intent:
    """晚上8点也要: a request with a time but no words takes the previous request's title."""
    if not isinstance(previous, CreateIntent) or not previous.title \
            or any(_ALSO.sub("", c.title) not in _GENERIC for c in group):
        return intent
    if isinstance(intent, CreateIntent) and intent.title not in _GENERIC:
        return intent
    ask = "提醒我" if previous.reminder is not None and not any(c.asks for c in group) else ""
    text = _AGAIN.sub("提醒我", text) if _AGAIN.search(text) and previous.reminder is not None else text
    carried = parse(f"{text},{ask}{previous.title}", now=now, tz=tz, meeting_offset_minutes=offset)
    return carried.model_copy(update={"rule": f"{carried.rule}+subject"})
