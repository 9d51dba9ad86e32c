"""Requests the bot runs later: 每天早上8点告诉我今天的天气, 明早8点帮我看看今天有什么会, and the
words that list or cancel them (早上的天气不用发了). Pure: the time comes from the engine's mentions.

A request is a clock time (and maybe a series) said first, then an ask for information (告诉我 / 帮我看看 / 列出 …).
Asking the user to do something (提醒我吃药) stays a reminder; a digest (每天7点发待办) stays a digest.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from intent.model import Lunar, Recurrence, RequestIntent, RequestQuery

if TYPE_CHECKING:
    from intent.slots import Slots
    from intent.timex.types import TimeMention

_ASK = (r"告诉我|跟我说|给我(?:说说|讲讲|说|讲|发|列|报|汇报|总结|整理)|发(?:给)?我|"
        r"帮我(?:看看|看一下|看下|查查|查一下|查下|查|搜一下|总结|整理|列出|列一下|汇总|盘点|统计)|"
        r"列出|列一下|汇报|播报|汇总|总结|查一下|查查|看看")
# 提醒我写周报并列出这周完成的事: a reminder first, then the request, joined by 并 / 然后 / a comma
_REQUEST = re.compile(rf"^(?:提醒我(?P<remind>[^，,。；;并]+?)(?:，|,|并且|并|然后|顺便|同时|再)+)?"
                      rf"(?P<ask>{_ASK})(?P<what>.+)$")
_LEAD_IN = re.compile(r"^[，,。\s的]*(?:请|麻烦|你|就|都|再|准时|按时)*")
_SCHEDULE = re.compile(r"会议?|例会|周会|安排|日程|行程|待办|任务|要做的|完成的|完成了|做完的|做了什么|做了哪些|提醒")
_WORLD = re.compile(r"天气|下雨|气温|温度|新闻|股|汇率|油价|热搜|资讯|路况|空气|限行|比赛|星座|运势|邮件|快递")
_WEEK = re.compile(r"这周|本周|这个星期|这星期|这礼拜|本星期|下周|下个星期|上周")
_DONE = re.compile(r"完成|做完|做了|干了|搞定")
_TAIL = re.compile(r"[。！!？?~～\s]+$")
# cancelling: 早上的天气不用发了 / 别再给我发天气了 / 取消天气推送
_VERB = r"(?:发|推|推送|告诉我|播报|汇报)"
_STOP_AFTER = re.compile(rf"^(?P<what>.+?)(?:就|也|都)?(?:不用|不要|别|无需|不必|不需要)(?:再)?(?:给我)?{_VERB}(?:了)?"
                         r"(?:吧|啦|了)?[。！!~～\s]*$")
_STOP_BEFORE = re.compile(rf"^(?:以后)?(?:别|不要|不用|不必)(?:再)?(?:给我)?{_VERB}(?P<what>.+?)(?:了)?(?:吧|啦)?"
                          r"[。！!~～\s]*$")
_STOP_NAMED = re.compile(r"^(?:帮我)?(?:取消|停掉|关掉|关闭|停止)(?:掉)?(?P<what>.+?)(?:的)?"
                         r"(?:推送|定时任务|定时请求|播报)(?:吧|了)?[。！!~～\s]*$")
_LIST = re.compile(r"定时(?:任务|请求|推送|消息|发送)|(?:你|您)(?:会|都会|每天|定时|定期)+(?:都)?(?:给我)?"
                   r"(?:发|推送|告诉我)(?:些|哪些)?(?:什么|啥|哪些)")
_PERIOD = re.compile(r"凌晨|早上|早晨|清晨|上午|中午|下午|傍晚|晚上|夜里|每天|每周.|每个工作日|工作日")
_POINTER = re.compile(r"那个|这个")
_DAY_WORDS = re.compile(r"^(?:今天|今日|当天|每天)(?:的)?")


_CHANGE = re.compile(r"^(?:把|将)?(?P<what>.+?)(?:的)?(?:改成|改到|换成|换到|挪到|调到|调整到|改为)(?P<rest>.+)$")
_SEND_END = re.compile(r"(?:发|推送|推|告诉我|播报|发给我|发我)(?:吧|了|呢)?[。！!~～\s]*$")
_DIGEST = re.compile(r"待办|早报|日报|晚报|日程|行程|安排|每日|提醒|第二天|次日|当天|明天的|今天的推送")
_SENDING = re.compile(r"推送|定时|播报|消息")


def change(text: str, slots: Slots) -> RequestIntent | None:
    """天气改成早上7点发 / 天气推送改到7点半: a new time for a request (read before the digest's 推送改到8点)."""
    m = _CHANGE.match(text)
    if m is None:
        return None
    when = slots.recur if slots.recur is not None and slots.recur.has_clock else slots.when
    if when is None or when.start is None or not when.has_clock or when.span[0] < m.start("rest"):
        return None
    what = m.group("what")
    words = _POINTER.sub("", _DAY_WORDS.sub("", _PERIOD.sub("", _SENDING.sub("", what)))).strip("的，, ")
    if not words or _DIGEST.search(what):
        return None
    if not (_SEND_END.search(m.group("rest")) or _SENDING.search(what) or _WORLD.search(words)):
        return None
    return RequestIntent(op="update", target_text=words, first_at=when.start, recurrence=_recurrence(slots.recur),
                         period=when.period, rule="request.update", confidence=0.8)


def read(text: str, slots: Slots, mentions: list[TimeMention], *, action: str) -> RequestIntent | None:
    """A request to run later, or a list / cancel of those; None when the text is neither."""
    if action in ("query", "none") and _LIST.search(text):
        return RequestIntent(op="list", rule="request.list", confidence=0.85)
    if action in ("none", "cancel"):
        stop = _stop(text, strict=action != "none")
        if stop is not None:
            return stop
    if action == "subscribe_digest":  # 每周日晚上8点告诉我下周的安排: a week, or what was done, is no digest
        asked = _create(text, slots, mentions)
        return asked if asked is not None and asked.query is not None and (
            asked.query.span == "week" or asked.query.done) else None
    if action not in ("create", "query", "none"):
        return None
    return _create(text, slots, mentions)


def _create(text: str, slots: Slots, mentions: list[TimeMention]) -> RequestIntent | None:
    anchor = slots.recur if slots.recur is not None and slots.recur.has_clock else slots.when
    if anchor is None or anchor.start is None or not anchor.has_clock or anchor.lead:
        return None
    if any(m.span[0] < anchor.span[0] and m.has_clock for m in mentions):
        return None
    rest = _LEAD_IN.sub("", text[anchor.span[1]:])
    m = _REQUEST.match(rest)
    if m is None:
        return None
    what = _TAIL.sub("", m.group("what")).removeprefix("一下")
    if not what or len(what) < 2:
        return None
    ask = _TAIL.sub("", rest[m.start("ask"):])
    schedule = _SCHEDULE.search(what) is not None and _WORLD.search(what) is None
    query = _query(what) if schedule else None
    remind = m.group("remind")
    return RequestIntent(op="create", text=ask, title=_title(what), remind=remind.strip() if remind else None,
                         first_at=anchor.start, recurrence=_recurrence(slots.recur), query=query,
                         rule="request.agenda" if schedule else "request.free", confidence=0.85)


def _query(what: str) -> RequestQuery:
    span: Literal["day", "week"] = "week" if _WEEK.search(what) else "day"
    shift = 0
    if "下周" in what or "下个星期" in what or "明天" in what or "明日" in what:
        shift = 1
    elif "上周" in what:
        shift = -1
    elif "后天" in what:
        shift = 2
    kind: Literal["task", "event"] | None = None
    if re.search(r"会议?|例会|周会", what):
        kind = "event"
    elif re.search(r"待办|任务", what):
        kind = "task"
    return RequestQuery(span=span, shift=shift, filter_kind=kind, done=_DONE.search(what) is not None)


def _title(what: str) -> str:
    return what.strip("的，, ")[:40]


def _recurrence(m: TimeMention | None) -> Recurrence | None:
    if m is None or not m.rrule:
        return None
    lunar = Lunar(month=m.lunar.month, day=m.lunar.day, leap=m.lunar.leap) if m.lunar else None
    return Recurrence(rrule=m.rrule, workdays="cn" if m.workdays == "cn" else None, lunar=lunar)


def _stop(text: str, *, strict: bool) -> RequestIntent | None:
    """早上的天气不用发了: the words naming the request and the part of the day said. `strict`: another rule
    already read the text as a change of an item, so only words about sending count."""
    patterns = (_STOP_AFTER, _STOP_BEFORE) if strict else (_STOP_AFTER, _STOP_BEFORE, _STOP_NAMED)
    for pattern in patterns:
        m = pattern.match(text)
        if m is None:
            continue
        what = m.group("what")
        period = _PERIOD.search(what)
        words = _POINTER.sub("", _DAY_WORDS.sub("", _PERIOD.sub("", what))).strip("的，, ")
        if not words and period is None:
            return None
        return RequestIntent(op="cancel", target_text=words or None, period=period.group(0) if period else None,
                             rule="request.cancel", confidence=0.8)
    return None
