"""Follow-ups that name no item (the focus; corrections): a correction, or a bare time, day, place, length,
note or repeat said about the item the conversation is about (the *focus*, described by a `FocusHint`).

A correction (不对 / 不是 / 错了 / 应该是 / 我说错了 …) is always an update of an item already there, never a
new item: without anything in focus it asks which. The bare forms ("在3楼", "那天上午十点", "十一点吧") are
follow-ups only when something is in focus; otherwise the usual rules read them. The result is an
`UpdateIntent` without target words (`needs_clarification` holds "target"): the conversation applies it to the
focus. Pure: the focus arrives as a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from intent import clarify
from intent.model import CancelIntent, Changes, CompleteIntent, Intent, Missing, Recurrence, UpdateIntent
from intent.slots import collect, hour_said
from intent.title import clean

if TYPE_CHECKING:
    from intent.timex.types import TimeMention


@dataclass(frozen=True, slots=True)
class FocusHint:
    """What the parser may know of the item in focus: its local day and, when timed, its local start."""

    on: date | None = None
    at: datetime | None = None
    digest: bool = False  # the conversation is about the digest subscription (digest changes in words), not an item
    title: str | None = None  # its title: words of it said again name it, not a new activity


_CORRECTION = re.compile(
    r"^(?:不对+|不是的?|(?:我)?(?:搞|弄|说|打|写|记)?错(?=了|啦|咯|喽)|(?:我)?(?:搞|弄|说|记|听|看)(?:岔|混|反)(?=了|啦|咯|喽)|"
    r"口误|更正(?:一下)?|纠正(?:一下)?|"
    r"应该是|准确地?说是|哦不|不不+|还是(?=那天|当天|[0-9零一二两三四五六七八九十]|[上下]午|晚上|早上|中午|明天|后天|周|星期|下周|改))"
    r"(?:了|啦|呀|哦)?(?:[,.!~ ]|(?=[^,.!~ ]))*"
)
_IS = re.compile(r"(?:其实|应该|实际上|准确地?说)(?:是|在|改成|改为|改到|换成|挪到)?|是|在|改成|改为|改到|换成|挪到")
_IS_INSIDE = re.compile(r"(?:而是|应该是|其实是|是|改成|改到|换成)")
# 在3楼 / 地点在国贸 / 地址是… : the place of the focus
_PLACE = re.compile(r"^(?P<who>[^\d,!?]{0,4}?)(?:地点|地址|位置|地方|集合点|碰头点|见面点|会合点)(?:就)?"
                    r"(?:在|是|为|:|改成|改为|换成|改到|换到|改在|换在|挪到|定在|放在)?[: ]*(?P<a>[^,!?]{1,30})$"
                    r"|^(?:就|改|换)?在(?P<b>[^,!?吗呢嘛]{1,20}?)(?:吧|哈|哦|啊)?$")
_PLACE_NOT = re.compile(
    r"^(?:地点|地址|位置|地方)(?:不是|不在)[^,!?]{1,20}?[, ]*(?:而)?(?:是|在|改成)(?P<a>[^,!?]{1,30})$")
_NOTE = re.compile(r"^(?:记得|帮我|再)?(?:加个|加一个|添个|加|写个)?(?:备注|补充|附注|说明|注意|note|备忘(?=:))"
                   r"(?:一下)?[: ]*(?P<n>.{1,200})$")
_PLACE_WORD = re.compile(
    r"(?:会议室|号楼|楼|室|厅|门|口|店|馆|中心|大厦|广场|公园|医院|学校|酒店|餐厅|座|层|站|路|街|号院)$")
_DONE = re.compile(
    r"^(?:我)?(?:已经)?[\u4e00-\u9fff](?:完|好|掉|过|上)?(?:了|啦|咯|喽)$|^(?:已经)?(?:弄|做|搞|办)完了?$"
    r"|^(?:搞定|搞掂|弄妥|办妥|做完|办完)(?:了|啦|咯|喽|哈+)?[!~✅✔]*$|^(?:ok|OK|done|完成)(?:了|啦|咯|喽)[!~✅✔]*$")
_NOT_NEEDED = re.compile(r"^(?:那就|就|这个|那个)?(?:不用了|不需要了|不要了|不去了|不做了|不办了|取消了?吧?|取消掉|"
                         r"免了|甭去了|甭弄了|甭了|不用了,?取消掉?)(?:吧|哈|啊)?$")
# 再加一个提前10分钟的提醒: a second reminder, the first one kept
# 不用提醒我了 / 取消这个提醒 / 提醒就不用了: the item stays, only its reminders go.
_NO_REMIND = re.compile(
    r"^(?:那就|就|那|这个|那个)?(?:不用|不要|别|不需要|无需|甭|用不着)(?:再)?(?:提醒|通知|叫醒|叫|喊)(?:我|你)?(?:一声)?(?:了|啦|吧|啊|哈)*$"
    r"|^(?:取消|关掉|关闭|去掉|删掉|删除)(?:这个|那个|它的|这条的?)?提醒(?:吧|了|啦)*$"
    r"|^提醒(?:就|也)?(?:不用|不要|不需要|算了|取消|免了)(?:了|吧|啦)*$"
)
_ANOTHER = re.compile(r"^(?:再|还|另外|也)(?:帮我)?(?:加|添|设|定|来)(?:上)?(?:一个|一条|个|条)")
_ALSO_REMIND = re.compile(r"^再.{0,8}?也(?=提醒|叫|喊|通知)|^另外")
_ON_TIME = re.compile(r"^(?:到点|到时候?|准时|按时)(?:了)?(?:再)?(?:提醒|叫|喊|通知)(?:我)?(?:一下|一声)?$")
_DAILY = re.compile(r"(?:以后|之后|往后|今后)?(?:也)?(?:天天|每日)(?:都|也)?(?:这样|这个时间|如此|一样|照旧|要|去|来)")
_LENGTH_WORDS = re.compile(
    r"^(?:大概|大约|预计|估计|差不多|应该|一共|总共|全程|前后)?(?:需要|要花|得花|要|会|得|花)?"
    r"(?:开|持续|进行|弄|忙|[\u4e00-\u9fff])?(?:个)?$")
_END_WORDS = re.compile(
    r"^(?:大概|大约|预计|估计|差不多|可能)?(?:开到|到|持续到|弄到|忙到|一直到|搞到|玩到|聊到|吃到)?$"
    r"|^(?:结束|散会|完事|开完)$")
_TRAILING = re.compile(r"(?:左右|吧|哈|哦|啊|呀|就行|就好|好了|的样子|结束|散会|完事|开完)+$")
_REPEAT = re.compile(
    r"(?:以后|之后|往后|今后|从此)?(?:也)?(?:每.{1,6}?)(?:都|也)?(?:这样|这个时间|如此|一样|照旧|照此|重复|要|来一次|一次)"
    r"|(?:以后|之后|往后|今后|从此)(?:也)?每.{1,6}?(?:都|也)[\u4e00-\u9fff]?(?:吧|的)?$"
    r"|^(?:改成|变成|设成|设为)?每.{1,6}?(?:重复)?(?:吧)?$")
_LEAD_WORDS = re.compile(r"提醒|提前|叫|喊|通知|我|改成|改为|换成|设成|设为|的|一声|一下")
_SHIFT = re.compile(r"^(?:再)?(?P<way>早|提早|晚|推迟|延后|往后挪?|往前挪?|往后推|往前推|挪后|挪前|推后|后挪|前挪)"
                    r"(?:点|些|了)?$")
# 以后工作日都去 / 以后每天这个点都提醒我: from now on, the same thing on those days
_FROM_NOW = re.compile(r"^(?:以后|之后|往后|今后|从此|从今天起)")
_FROM_NOW_WORDS = re.compile(r"以后|之后|往后|今后|从此|从今天起|都|也|这个点|这个时间|同一时间|提醒|叫|我|一下|吧|"
                             r"[去来要有的]|这样|照旧|一样|[,.!~ ]")
_FILLER = re.compile(r"[吧啊呀哈哦了的呢嘛,.!~ ]|就行|就好|就可以|就|那就|好")
# Verbs that restate what the item in focus is about (是三点开始的, 七点出发, 九点开赛, 三点到): no new activity.
RESTATE = re.compile(r"(?:才|再)?(?:开始|开[赛场播打考踢唱讲演席饭课拍跑]|出发|动身|启程|起飞|到达|到场|集合|碰头|"
                     r"见面|碰面|报到|签到|开|到|见|走)(?:的|吧|哈|啊|呢|呀|了)*$")
# 是四点开打 / 其实是五点: the copula before the time says what the focus's time is, no activity of its own.
_COPULA = re.compile(r"^[\s,]*(?:其实|应该|就|那就)?是")
_THAT_DAY = re.compile(r"那天|当天|那一天|同一天|同一天的")


def with_that_day(norm: str, focus: FocusHint | None) -> str:
    """那天 / 当天 → the focus's date, written out so the time rules read it (那天晚上 → 2026年12月4日晚上)."""
    if focus is None or focus.on is None or not _THAT_DAY.search(norm):
        return norm
    day = focus.on
    return _THAT_DAY.sub(f"{day.year}年{day.month}月{day.day}日", norm)


def corrects(norm: str) -> bool:
    return _CORRECTION.match(norm) is not None and len(norm) > 0


def read(norm: str, mentions: list[TimeMention], focus: FocusHint | None) -> Intent | None:
    """The follow-up `norm` is, or None when it is not one (the usual rules then read it)."""
    marker = _CORRECTION.match(norm)
    if marker is not None and marker.end() > 0:
        rest_at = _last_clause(norm, marker.end())
        own = [m for m in mentions if m.span[0] >= rest_at]
        changes = _changes(norm[rest_at:], own, focus, rest_at)
        if changes is None and own == [] and rest_at > marker.end():  # 不是后天,是… with nothing usable after
            changes = _changes(norm[marker.end():], [m for m in mentions if m.span[0] >= marker.end()], focus,
                               marker.end())
        if changes is None and norm.startswith("不是"):
            return None  # 不是很急,明天交就行: 不是 alone does not make a correction
        return _update(changes, "followup.correction")
    if _place_then_request(norm, mentions):
        return None  # 地点三楼会议室 明天下午三点开会: a new request that names its place first
    if _DONE.match(norm) and not mentions:  # 交了 / 浇好了: done, about the focus or the reminder just sent
        return CompleteIntent(needs_clarification=["target"], rule="followup.done", confidence=0.7,
                              question=clarify.question(["target"]))
    if focus is None:  # a place or a note said about nothing in focus: ask which item (never a new one)
        place = _PLACE.match(norm)
        bare_place = place is not None and place.group("b") and _PLACE_WORD.search(place.group("b"))
        if (place is not None and place.group("a") and not place.group("who")) or bare_place \
                or (_NOTE.match(norm) and not mentions and "备忘" not in norm):
            return _update(_bare(norm, mentions, FocusHint()), "followup.unfocused")
        return None
    if _NO_REMIND.match(norm):
        return _update(Changes(no_reminder=True), "followup.no_reminder")
    if _NOT_NEEDED.match(norm):
        return CancelIntent(needs_clarification=["target"], rule="followup.not_needed", confidence=0.7,
                            question=clarify.question(["target"]))
    changes = _bare(norm, mentions, focus)
    if changes is None:
        return None
    place = _PLACE.match(norm)
    named = place.group("who") if place is not None and changes.location else ""
    if named:  # 体检地点改成人民医院: the item named, or else the one in focus (集合地点改成… about it)
        return UpdateIntent(target_text=named, changes=changes, or_focus=True, rule="followup.place", confidence=0.8)
    return _update(changes, "followup.bare")


def _place_then_request(norm: str, mentions: list[TimeMention]) -> bool:
    """A place said first, then, after a space, a clause with its own time and more words than the time:
    the place of a new request, not a follow-up about the focus (地点三楼会议室 明天下午三点开会)."""
    place = _PLACE.match(norm)
    if place is None or not place.group("a") or " " not in place.group("a"):
        return False
    rest_at = place.start("a") + place.group("a").index(" ") + 1
    own = [m for m in mentions if m.span[1] > rest_at]  # (人民路8号 周六…: 8号 may join the time)
    words = norm[rest_at:]
    for m in own:
        words = words.replace(norm[max(m.span[0], rest_at):m.span[1]], "")
    return bool(own) and len(words.strip(" ,.!~")) >= 2


def _update(changes: Changes | None, rule: str) -> UpdateIntent:
    missing: list[Missing] = ["target"]
    if changes is None:
        missing.append("changes")
    return UpdateIntent(changes=changes, needs_clarification=missing, rule=rule, confidence=0.8,
                        question=clarify.question(missing))


def _last_clause(norm: str, start: int) -> int:
    """Where what the user meant begins: after the last comma (不是后天,是大后天 → 大后天), past 是/改成; without a
    comma, after the last 是 (不是周四是周六中午 → 周六中午)."""
    cut = max(norm.rfind(",", start), norm.rfind(" ", start))
    at = cut + 1 if cut >= start else start
    lead = _IS.match(norm, at)
    if lead is not None:
        return lead.end()
    if _PLACE.match(norm[at:]) or _NOTE.match(norm[at:]):
        return at  # 不对 地点改成2号楼: the place clause as a whole
    inner = [m for m in _IS_INSIDE.finditer(norm, at) if norm[m.end():].strip()]
    return inner[-1].end() if inner else at


def _changes(rest: str, own: list[TimeMention], focus: FocusHint | None, offset: int) -> Changes | None:
    """What a correction changes: the time or day, the lead, the place, the length, or else the title."""
    if not rest.strip(" ,.!~"):
        return None
    bare = _bare(rest, [_shifted(m, offset) for m in own], focus or FocusHint())
    if bare is not None:
        return bare
    slots = collect([_shifted(m, offset) for m in own], rest)
    if own or slots.lead_minutes is not None:
        return None
    title = clean(rest)
    words = re.search(r"[\w]", title) is not None  # an emoji or punctuation alone never renames the item
    return Changes(title=title[:60]) if words and 1 <= len(title) <= 20 else None


def _restates(rest: str, title: str | None) -> bool:
    """What is left besides the time says nothing new: particles, a copula, a verb restating the item (出发 /
    开始的), maybe with words of its own title before that verb (话剧是两点半开演). The title's words alone are
    another item of the same kind (明天下午五点开会 after 开会), not a correction."""
    plain = _FILLER.sub("", _COPULA.sub("", rest))
    if not _FILLER.sub("", RESTATE.sub("", plain)):
        return True
    bare = _FILLER.sub("", _COPULA.sub("", _without_title(rest, title)))
    return bare != plain and RESTATE.search(bare) is not None and not _FILLER.sub("", RESTATE.sub("", bare))


def _without_title(rest: str, title: str | None) -> str:
    """`rest` without its runs of two or more characters all found in the focus's title (话剧 of 看话剧, 爬山 of
    去爬香山): words of the item said again name it."""
    if not title:
        return rest
    return re.sub(f"[{re.escape(title)}]{{2,}}", "", rest)


def _shifted(m: TimeMention, offset: int) -> TimeMention:
    from dataclasses import replace

    return replace(m, span=(m.span[0] - offset, m.span[1] - offset))


def _bare(text: str, mentions: list[TimeMention], focus: FocusHint) -> Changes | None:
    """A time, day, lead, place, length, note or repeat said with no item words."""
    corrected = _PLACE_NOT.match(text)
    if corrected is not None:  # 地点不是国贸，是三里屯
        return Changes(location=corrected.group("a").strip(" ,.\"'")[:60])
    place = _PLACE.match(text)
    if place is not None:
        where = (place.group("a") or place.group("b") or "").strip(" ,.\"'")
        if where and (not mentions or _PLACE_WORD.search(where)):  # 在2号会议室: a room, not the 2nd
            return Changes(location=where[:60])
    if _ON_TIME.match(text):
        return Changes(offset_minutes=0)
    if _DAILY.search(text):
        return Changes(recurrence=Recurrence(rrule="FREQ=DAILY"))
    note = _NOTE.match(text)
    if note is not None and not (mentions and "备忘" in text):  # 备忘：周五交周报 is a request of its own
        return Changes(note=note.group("n").strip()[:500])
    slots = collect(mentions, text)
    rest = _without(text, mentions)
    from_now = _FROM_NOW.match(text) is not None and not _FROM_NOW_WORDS.sub("", rest)
    if slots.recur is not None and slots.recur.rrule and (_REPEAT.search(text) or not rest or from_now):
        m = slots.recur
        workdays = "cn" if m.workdays == "cn" else None
        return Changes(recurrence=Recurrence(rrule=m.rrule, workdays=workdays))
    another = _ANOTHER.match(rest) or _ALSO_REMIND.match(rest)
    bare_lead = rest[another.end():] if another is not None else rest
    if slots.lead_minutes is not None and not _FILLER.sub("", _LEAD_WORDS.sub("", bare_lead)):
        return Changes(offset_minutes=slots.lead_minutes, another_reminder=another is not None)
    durations = [m for m in mentions if m.type == "duration" and m.seconds and not m.lead and not m.relative]
    shift = _SHIFT.match(_TRAILING.sub("", rest.strip(" ,")))
    if durations and shift is not None and not slots.when:  # 早一个小时吧: the item moves, its length stays
        sign = -1 if shift.group("way").startswith(("早", "提早", "往前", "挪前", "前")) else 1
        return Changes(shift_minutes=sign * (durations[0].seconds or 0) // 60)
    if durations and not slots.when and _LENGTH_WORDS.match(_TRAILING.sub("", rest)):
        return Changes(duration_minutes=durations[0].seconds // 60)  # type: ignore[operator]
    when = slots.when
    if when is None or when.start is None or slots.relative is not None:
        return None
    before, after = text[:when.span[0]], text[when.span[1]:]
    lead_in = _TRAILING.sub("", before.strip(" ,"))
    until = re.search(r"(?:开到|到|持续到|弄到|忙到|一直到|搞到|玩到|聊到|吃到)$", lead_in) is not None
    if _END_WORDS.match(lead_in) and (until or re.match(r"^\s*(?:结束|散会|完事|开完)", after)):
        return Changes(end_at=_after_start(_near(when, focus), focus)) if when.has_clock else None
    if from_now:
        rest = _FROM_NOW_WORDS.sub("", rest)  # 以后都八点吧: the series' time from now on
    if not _restates(rest, focus.title):
        return None  # other words: a request of its own, not a bare time
    if when.has_clock:
        return Changes(start_at=_near(when, focus))
    if when.period is not None:
        return None  # 改到上午 with no hour: the usual rules ask which hour
    if when.has_date:
        return Changes(date=when.start.date())
    return None


def _without(text: str, mentions: list[TimeMention]) -> str:
    out = text
    for m in sorted(mentions, key=lambda m: m.span, reverse=True):
        out = out[:m.span[0]] + out[m.span[1]:]
    return out


def _after_start(end: datetime, focus: FocusHint) -> datetime:
    """An end said as a bare hour is after the start (10:00 开到四点 → 16:00, not 04:00)."""
    while focus.at is not None and end <= focus.at and end + timedelta(hours=12) > focus.at:
        end += timedelta(hours=12)
    return end


def _near(when: TimeMention, focus: FocusHint) -> datetime:
    """A clock said without a day is on the focus's day; a bare hour (no 上午/下午) the reading nearer its time."""
    assert when.start is not None
    at = when.start
    if when.has_date or focus.on is None:
        return at
    day_start = at.replace(year=focus.on.year, month=focus.on.month, day=focus.on.day)
    said = hour_said(when.text)
    if when.period is not None or focus.at is None or said is None or said >= 13 or said == 0:
        return day_start
    hour = said % 12
    morning = day_start.replace(hour=hour)
    evening = morning + timedelta(hours=12)
    ref = focus.at.replace(year=focus.on.year, month=focus.on.month, day=focus.on.day)
    return morning if abs(morning - ref) <= abs(evening - ref) else evening
