"""Several requests in one message: `parse_all` → one intent per request, in order.

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

Lists (`intent.lists`): "day: a, b, c" or a to-do lead-in (要买的：/待办事项：/出差要准备的：/今天的待办：, a day
optional) give one task per thing, titled by the thing (要买的：牛奶 → 买牛奶), due on the list's day (all day) or
undated; a thing with its own clock time stays a request of its own.

Order (questions last): a request that needs a question (its hour, a reminder time) comes after the others, so they are
done first and the question ends the reply.

One request gives `[parse(text, …)]` exactly. With `pending`, a first clause that answers it is merged
with it (as `parse` would) and comes first. Never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from itertools import pairwise
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from intent.contact import pull
from intent.course import read as read_course
from intent.followup import RESTATE, FocusHint, corrects, with_that_day
from intent.lists import clock_list, day_list, todo_list
from intent.model import CreateIntent, Intent, NoneIntent
from intent.normalise import ascii_forms, normalise, with_clock_now
from intent.pipeline import analyse, parse, parse_prepared
from intent.slots import DAY_BEFORE, at_noon, noon_only
from intent.title import WHICH_ONE

if TYPE_CHECKING:
    from intent.slots import Slots
    from intent.timex.types import TimeMention

_CLAUSE = re.compile(r"[,!?.]+|(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])|(?=顺便|顺带|顺道|另外|同时|并且|然后)")
_CONNECTIVE = re.compile(r"^(?:顺便|顺带|顺道|另外|同时|并且|然后|还有就是|再就是|还有|再)?(?:帮我)?")
# Cheap gate: a clause that might hold a request of its own (a time word, a request or query word).
_CUE = re.compile(r"[0-9零一二两三四五六七八九十]点|:[0-5][0-9]|[今明后]天|[今明]早|[今明]晚|周|星期|礼拜|号|每|"
                  r"凌晨|早上|上午|中午|下午|傍晚|晚上|"
                  r"记一下|记下|备忘|记个|看看|查|安排|行程|日程|待办|取消|完成|搞定|改到")
_GENERIC = frozenset({"", "提醒", "闹钟", "事", "个事", "件事", "一件事", "一个事", "事情", "一下", "会议", "记个事",
                      "记件事", *WHICH_ONE})  # (七点半的场 / 八点那班: which showing or train, no item)
# 顺便… / 再加一个…: words that only join a request to the one before.
_LEADING = re.compile(r"^(?:顺便|顺带|顺道|另外|同时|并且|然后|还有就是|再就是)?(?:帮我)?"
                      r"(?:(?:再|还)?(?:加|添|添加|新建)(?:一个|一条|个|条))?")
# 要加班到十点 / 今天忙到很晚: being busy until a time, said as the context of a request
_BUSY_UNTIL = re.compile(r"(?:加班|忙|工作|上班|值班|上课|开会|应酬|干活|写代码)[^\s,]{0,3}?(?:到|至)[^\s,]{1,6}$")
_UNTIL_ONLY = frozenset({"到", "开到", "一直到", "至", "忙到", "持续到"})  # 开到五点半: the previous item's end
_EXTENT = re.compile(r"^(?:结束|散会|散|完|为止|截止|收尾|开完|搞完|左右)")
# 记一下 X starts a request of its own; 记得/别忘了 X after an item is a note about that item.
_NOTE = re.compile(r"记一下|记下|记录|记上|帮我记|备忘|记个|加个待办|添加待办")
_ALSO = re.compile(r"也|同样|一样|照旧|照样|再(?:叫|提醒|喊|通知)我?(?:一次|一遍|一下)?|(?:叫|提醒)?(?:一次|一遍)$")
# 明早8点叫我起床，8点半再叫一次: another reminder for the same thing, not a snooze of one delivered
# 以后每天都这样 / 每天都要 / 天天如此: the request before it repeats, nothing new
_REPEAT_ONLY = re.compile(r"^(?:以后|今后|往后|之后|从此)?"
                          r"(?:每天|天天|每周|每星期|每个?礼拜|每个?月|每年|每个?工作日|工作日)"
                          r"(?:都|也)?(?:这样|如此|照此|照旧|一样|要|得)?(?:提醒我?|叫我)?(?:吧|哈|啊|哦)?$")
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
    said = ascii_forms(text if isinstance(text, str) else str(text))  # a phone number in ３ is still one
    text, note = pull(_request_in(said))
    if note is not None and len(_WORDLESS.sub("", text)) <= 6 and focus is not None:
        return [_noted(said)]  # 师傅电话138…: a number or link said about the item in focus is its note
    found = _parse_all(text, now, tz, pending, meeting_offset_minutes, focus)
    if len(said) > _LONG and _venting(said) and not any(i.rule.endswith("+list") for i in found):
        return [NoneIntent(rule="none.venting", confidence=0.6)]  # a long message holding no request: the agent's
    if note is None:
        return found
    return [i.model_copy(update={"note": note}) if isinstance(i, CreateIntent) else i for i in found]


_LONG = 30  # characters: a message this long is talk unless it asks for something in so many words
_WORDLESS = re.compile(r"[\W_]|电话|手机|号码|联系方式|链接|网址|是|的|师傅|会议号|密码")
IMPERATIVE_OR_DEADLINE = re.compile(r"提醒|叫我|喊我|记一下|帮我记|记下|记得|别忘|帮我|之前|以前|截止|前把|前要|前交|"
                                    r"安排|预约|开会|会议|约了|有个|看看|查查|取消|完成")
# 正事：… / 言归正传 … : what comes after such words is the request; what comes before is talk.
_TO_BUSINESS = re.compile(r"(?:正事|说正经的|言归正传|回到正题|重点是|正题|哦对了|对了)(?:是|儿)?[:：,，]?")
# 老婆说“周末别忘了交燃气费”，帮我记一下…: a quoted sentence is what someone said, not a request of its own.
_QUOTED = re.compile(r"[^，。,.!！?？\s]{0,6}(?:说|讲|提醒我说|问)?[:：]?[“\"「『][^”\"」』]{1,80}[”\"」』][，,]?")


def _venting(said: str) -> bool:
    """A long message that asks for nothing in so many words (English read in Chinese words too)."""
    plain = normalise(said)
    return len(plain) > _LONG and not _NOTE.search(plain) and not IMPERATIVE_OR_DEADLINE.search(plain)


def _request_in(text: str) -> str:
    """The part of a long or quoting message that holds the request (all of it, when no such marker is there)."""
    marked = None
    for found in _TO_BUSINESS.finditer(text):
        marked = found  # the last such marker
    if marked is not None and len(text) > _LONG and text[marked.end():].strip():
        return _first_request(text[marked.end():])
    unquoted = _QUOTED.sub("", text)
    return unquoted if unquoted != text and unquoted.strip() and _NOTE.search(unquoted) else text


_CLAUSE_END = re.compile(r"[，。,.!！？?;；]|\s+(?=[\u4e00-\u9fff])")
_GOES_WITH = re.compile(r"提醒|提前|叫我|地点|地址|记得|别忘")


def _first_request(text: str) -> str:
    """What follows 正事：/对了: its first clause, and the clauses after it that belong to it (提前一天提醒我),
    not the talk that goes on after (不然又要被催 …)."""
    parts = [p for p in _CLAUSE_END.split(text.strip()) if p and p.strip()]
    kept = parts[:1] + [p for p in parts[1:] if _GOES_WITH.search(p)]
    return "，".join(kept) if kept else text


def _noted(text: str) -> Intent:
    from intent import clarify
    from intent.model import Changes, UpdateIntent

    return UpdateIntent(changes=Changes(note=text.strip()[:500]), needs_clarification=["target"],
                        rule="followup.contact", confidence=0.8, question=clarify.question(["target"]))


def _parse_all(
    text: str, now: datetime, tz: ZoneInfo | str, pending: Intent | None, meeting_offset_minutes: int,
    focus: FocusHint | None,
) -> list[Intent]:
    try:
        zone = tz if isinstance(tz, ZoneInfo) else ZoneInfo(tz)
        local = now.astimezone(zone)
        norm = with_that_day(with_clock_now(normalise(text), local), focus)
        course = read_course(norm, now=local, tz=zone, pending=pending, meeting_offset=meeting_offset_minutes,
                             focus=focus)
        if course is not None:  # 每天两次… / 还12期 / 每隔两小时 / 早上那次改到八点: one series
            return [course]
        things = todo_list(norm, now, tz, meeting_offset_minutes) if pending is None else None
        if things is not None:
            return things
        listed = clock_list(norm) if pending is None else None
        if listed is not None:
            return [parse(line, now=now, tz=tz, meeting_offset_minutes=meeting_offset_minutes) for line in listed]
        mentions, degraded = analyse(norm, local, zone, None) if norm else ([], False)
        busy = _busy_context_dropped(norm, mentions) if pending is None else None
        if busy is not None:  # 今晚要加班到十点，九点半提醒我订车: the request, on the day said
            return _parse_all(busy, now, tz, pending, meeting_offset_minutes, focus)
        days = day_list(norm, mentions) if pending is None and not degraded \
            and not (focus is not None and focus.digest) else None
        each = [i for line in days for i in _parse_all(line, now, tz, None, meeting_offset_minutes, None)] \
            if days is not None else []
        if each and all(isinstance(i, CreateIntent) and not i.needs_clarification for i in each):
            return each  # 周二周四下午五点半接孩子: one item per day (周六周日就不用推了 is no such thing)
        parts = _cut_at_times(norm, _split(norm), mentions)
        if corrects(norm):  # 不是后天,是大后天: one correction, however many time words it holds
            return [parse_prepared(norm, mentions, degraded, now=local, tz=zone, pending=pending,
                                   meeting_offset_minutes=meeting_offset_minutes, focus=focus)]
        several = len(parts) >= 2 and sum(1 for b, e in parts if _CUE.search(norm, b, e)) >= 2
        if several and focus is not None:  # 以后每年这天都要去 设成每年吧: one follow-up about the focus, said twice
            whole = parse_prepared(norm, mentions, degraded, now=local, tz=zone, pending=pending,
                                   meeting_offset_minutes=meeting_offset_minutes, focus=focus)
            if whole.rule.startswith("followup."):
                return [whole]
        groups = _group(norm, parts, mentions, local.date(), pending) if several and not degraded else []
        if len(groups) < 2:
            return [parse_prepared(norm, mentions, degraded, now=local, tz=zone, pending=pending,
                                   meeting_offset_minutes=meeting_offset_minutes, focus=focus)]
        return _asked_last(_one_push(_each(groups, norm, local, zone, pending, meeting_offset_minutes)))
    except Exception:  # the contract is: never raise; the whole text as one request is the safe reading
        return [parse(text, now=now, tz=tz, pending=pending, meeting_offset_minutes=meeting_offset_minutes,
                      focus=focus)]


def _busy_context_dropped(norm: str, mentions: list[TimeMention]) -> str | None:
    """今晚要加班到十点，九点半提醒我订车: how long the user is busy is context for the reminder asked after it,
    neither an item nor words of its title; the text without it (its day and part of the day kept for the
    request's clock), or None when the message is not so."""
    from intent.lexicon import REMIND_WORD

    parts = _split(norm)
    if len(parts) < 2:
        return None
    (b, e), at = parts[0], parts[1][0]
    busy = _BUSY_UNTIL.search(norm, b, e)
    if busy is None or REMIND_WORD.search(norm, b, e) or not REMIND_WORD.search(norm, at) \
            or not any(m.has_clock and m.span[0] >= at for m in mentions) \
            or any((m.has_clock and b <= m.span[0] < busy.start()) or (m.type == "range" and m.has_clock)
                   for m in mentions if m.span[0] < e):
        return None  # (明天下午三点开会到五点,…: a meeting with its own time is an item)
    day = "".join(m.text for m in mentions if b <= m.span[0] < e and not m.has_clock and (m.has_date or m.period))
    return f"{day} {norm[at:]}".strip()


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


_CJK = re.compile(r"[\u4e00-\u9fff]")
_JOINS_TIMES = re.compile(r"(?:到|至|-|~|和|或|或者|、|提前|前|之前|以前|再|也|还|看看|看下|看一下|查查|查一下|"
                          r"查下|告诉我|列出|列一下|发给我|发我|汇总|整理|说说|讲讲|问问|发|推|推送|发送|给我|推我|发我|一下|"
                          r"改成|改到|改为|改在|挪到|换到|换成|调到|推迟到|推到|提前到|延后到)$")


_THEN_LOOK = re.compile(r"(?:再|然后|顺便|顺带|另外|还有)(?:帮我)?(?:看看|看下|看一下|查查|查一下|查下)$")


def _cut_at_times(norm: str, parts: list[tuple[int, int]], mentions: list[TimeMention]) -> list[tuple[int, int]]:
    """Clauses said without punctuation (明天9点提醒我交物业费下午4点提醒我拿衣服): a clause is also cut before a
    time that follows words said after an earlier time of that clause; the grouping then decides what belongs
    together (a reminder time for the item before it, 3点到5点 as one range)."""
    out: list[tuple[int, int]] = []
    for b, e in parts:
        at = b
        inside = [m for m in mentions if b <= m.span[0] < e]
        for before, m in pairwise(inside):
            words = norm[before.span[1]:m.span[0]]
            # 周日上午十点去洗车下午陪爸爸钓鱼: a part of the day after a clock and words opens a request too
            new_part = m.has_clock or m.has_date or (m.period is not None and before.has_clock)
            if new_part and not m.relative and not m.lead and len(_CJK.findall(words)) >= 2 \
                    and not _JOINS_TIMES.search(words) and m.span[0] > at:
                out.append((at, m.span[0]))
                at = m.span[0]
                continue
            look = _THEN_LOOK.search(words)  # 后天下午2点开会再看下后天都有什么: a look after the request's words
            if look is not None and m.has_date and len(_CJK.findall(words[:look.start()])) >= 2:
                cut = before.span[1] + look.start()
                if cut > at:
                    out.append((at, cut))
                    at = cut
        out.append((at, e))
    return out


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
        elif groups and _time_only(c, slots) and _timed_and_worded(groups[-1], slots):
            groups.append([c])  # 后天早上九点。去社区医院。下午。去接孙子。: a new time opens the next request
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
    if (c.asks and _DAY_BEFORE.match(c.text)) or _REPEAT_ONLY.match(c.text):
        c.alone = False  # 前一天提醒我 / 以后每天都这样: about the request before it
    elif _ALSO.sub("", c.title) in _GENERIC and slots.has_clock and _ALSO.search(c.text):
        c.alone = True  # 晚上8点也要: the subject carries over (see _with_subject)
    elif action in ("query", "subscribe_digest", "unsubscribe_digest"):
        c.alone = True
    elif action == "create" and RESTATE.fullmatch(c.title):
        c.alone = False  # 周六去杭州玩 早上8点出发: the departure is the trip's time, not an item of its own
    elif action == "create":
        words = c.title not in _GENERIC and not _EXTENT.match(c.title) and c.title not in _UNTIL_ONLY
        alarm = c.asks and slots.has_clock and slots.when is not None and slots.when.has_date  # 明早8点叫我
        c.alone = (words and (timed or bool(_NOTE.search(c.text)))) or alarm
    elif action in ("cancel", "complete", "update"):
        verb = {"cancel": CANCEL, "complete": COMPLETE, "update": UPDATE}[action]
        c.alone = title_of(verb.sub(",", c.text), slots.spans) not in _GENERIC


def _time_only(c: _Clause, slots: Slots) -> bool:
    """A clause of a new day, part of day or clock and nothing else (下午 / 周日下午三点), not a reminder or an
    end of the request before it."""
    when = slots.when
    return (when is not None and not c.asks and slots.lead_minutes is None and slots.recur is None
            and not slots.durations and c.title in _GENERIC and not _EXTENT.match(c.text)
            and not any(c.text.startswith(u) for u in _UNTIL_ONLY))


def _timed_and_worded(group: list[_Clause], slots: Slots) -> bool:
    """The request so far has words and a time of its own that the clause cannot complete (a clock, or a day
    when the clause names another day): the clause's time is another request's. 下周三家长会，下午2点半 is one."""
    when = slots.when
    clocks = [m for c in group for m in c.mentions if m.has_clock]
    if when is not None and clocks and all(noon_only(m) for m in clocks) and at_noon(when):
        return False  # 明天中午吃饭，12点半: the clock says which minute of noon
    day = any(m.has_date for c in group for m in c.mentions) and when is not None and when.has_date
    return (bool(clocks) or day) and any(c.title not in _GENERIC for c in group)


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
        out.append(_unstamped(intent, day) if dated is None and day is not None else intent)
    return out


def _unstamped(intent: Intent, day: date) -> Intent:
    """The question of a request that took a carried day names it as people do (12月3日下午, not 2026年…)."""
    if not isinstance(intent, CreateIntent) or intent.question is None:
        return intent
    stamp, said = f"{day.year}年{day.month}月{day.day}日", f"{day.month}月{day.day}日"
    pending = intent.pending.model_copy(update={"label": intent.pending.label.replace(stamp, said)}) \
        if intent.pending is not None else None
    return intent.model_copy(update={"question": intent.question.replace(stamp, said), "pending": pending})


def _one_push(intents: list[Intent]) -> list[Intent]:
    """改成每晚8点发明天的，周末不用发: clauses about the same push are one change of it (one reply, one row);
    what a later clause names (its days, its agenda, its time) is added to what the earlier one said."""
    from intent.model import SubscribeDigestIntent

    out: list[Intent] = []
    for intent in intents:
        last = out[-1] if out else None
        if isinstance(intent, SubscribeDigestIntent) and isinstance(last, SubscribeDigestIntent) \
                and intent.retime and not intent.needs_clarification:
            update: dict[str, object] = {"retime": last.retime}
            if intent.time is not None:
                update["time"] = intent.time
            if intent.days_said:
                update.update(recurrence=intent.recurrence, days_said=True)
            if intent.kind_said:
                update.update(digest_kind=intent.digest_kind, kind_said=True)
            out[-1] = last.model_copy(update=update)
            continue
        out.append(intent)
    return out


def _asked_last(intents: list[Intent]) -> list[Intent]:
    """Questions last: a request that needs a question (its hour, a reminder time) comes after the others, so they are
    done first and the question ends the reply. Which-item questions stay in place (the focus may answer them)."""
    def asks(intent: Intent) -> bool:
        missing = getattr(intent, "needs_clarification", None) or []
        return any(m != "target" for m in missing)

    return [i for i in intents if not asks(i)] + [i for i in intents if asks(i)]


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
