"""Alarms, wake-ups and countdowns are reminders: 闹钟 / 叫我起床 / 叫醒我 / 倒计时 read as markers over the time slots.

A message about alarms is read as markers (alarm, wake, countdown, look, stop, every) plus the time slots plus
what is left. When what is left holds no activity, the message is about the alarms themselves: look at them
(a listing of pending reminders), switch them off (a cancel of reminder items), or set one (a reminder titled
闹钟, or the activity said: 起床). A bare hour with a wake word means the next morning; a duration with a
countdown or an alarm means now + that long. Anything else goes on to the general rules.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from intent.action import SNOOZE
from intent.action import UPDATE as CHANGE
from intent.lexicon import NO_REMINDER
from intent.model import CancelIntent, CreateIntent, Intent, QueryIntent, Reminder
from intent.slots import Slots

ALARM = re.compile(r"闹钟|闹铃")
WAKE = re.compile(r"(?:叫|喊|闹)我?(?:起床|起来)|(?:叫|喊)醒我?")
COUNTDOWN = re.compile(r"倒计时|计时|到点(?:了)?(?:叫|喊|提醒)我?")
# 叫我 / 喊我一声 with nothing after it: an alarm (起床 in the morning), not 叫我去开会.
CALL = re.compile(r"(?:叫|喊)我(?:一下|一声|下)?(?=$|[,.!?~ ]|吧|哈|啊|呀|了|哦|噢|嗷)")
REMINDERS = re.compile(r"提醒(?:事项)?(?!我|你|他|她|一下|一声)")  # the noun, in 看看我的提醒 / 清空提醒
_LOOK = re.compile(r"看看|看下|看一下|瞧瞧|查看|查一下|查查|查询|列出|列一下|显示|有哪些|有几个|有什么|有啥|"
                   r"哪些|多少个?|几个|还有|是什么|是?(?:几点|什么时候|哪天)")
_STOP = re.compile(r"关掉|关闭|关上|关了|关|取消|删掉|删了|删除|删|清空|清掉|清除|去掉|撤掉|不要了|不用了|停掉|停了|停|"
                   r"不用|不要|别")
_EVERY = re.compile(r"都|全部|全|所有|一切|清空|清掉|清除")
_SETTING = re.compile(r"设置|设定|设|定|订|加|添加|新建|建")
_SET = re.compile(r"(?:设置|设定|设|定|订|调)(?:在|为|成|到)?|开|加|添加|新建|建|弄|帮我|给我|来(?!着)")
_WANT = re.compile(r"^(?:我|要|想|得|准备|打算|记得)+")  # 我要午睡: the activity is 午睡
# Words that carry no activity: fillers, particles, pronouns, measure words, 那个 and such.
_FILLER = re.compile(r"[啊哎嗯哦噢呃哈吧呗啦呢呀嘛喔咯了的个一下我你帮请麻烦给把那这它就先再好们上]|那个|这个|一下|"
                     r"来着|"
                     r"[,.!?~ 、。，！？；;：:]|[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001F000-\U0001FAFF\ufe0f]")
_CLOCK = re.compile(r"[0-9零一二两三四五六七八九十][点时]|[0-9]:[0-5][0-9]")
_ALARM_TITLE = "闹钟"
_ACTIVITY = re.compile(r"[\u4e00-\u9fff]+")
MORNING_ENDS = 10  # 明天九点叫我: before ten in the morning a call is a wake-up


def read(text: str, slots: Slots, *, now: datetime, tz: ZoneInfo) -> Intent | None:
    """The intent of a message about alarms, reminders as such or countdowns; None when it is not one."""
    alarm, wake, countdown = ALARM.search(text), WAKE.search(text), COUNTDOWN.search(text)
    call = CALL.search(text) if not (alarm or wake or SNOOZE.search(text)) else None
    noun = alarm or (REMINDERS.search(text) if not (wake or countdown or call) else None)
    if not (noun or wake or countdown or call):
        return None
    markers = [m for m in (alarm, wake, countdown, noun, call) if m is not None]
    if (wake or call) and not alarm and _STOP.search(text):
        return _wake_off(text, slots, markers)
    if noun is not None and not (wake or countdown):
        about = _about_alarms(text, slots, markers)
        if about is not None:
            return about
    if not (alarm or wake or countdown or call) or CHANGE.search(text) or slots.lead_minutes is not None:
        return None  # 明早的闹钟改到6点 / 开会的提醒: the general rules' update and create
    return _set(text, slots, markers, now=now, tz=tz, wake=wake is not None, call=call is not None,
                countdown=countdown is not None or alarm is not None)


def _day_of(slots: Slots) -> date | None:
    when = slots.when
    return when.start.date() if when is not None and when.start is not None and when.has_date else None


def _wake_off(text: str, slots: Slots, markers: list[re.Match[str]]) -> Intent | None:
    """明天早上不用叫我了 / 周六别叫醒我: the wake-ups of that day are off."""
    stop = _STOP.search(text)
    said = [m.span() for m in markers] + ([stop.span()] if stop is not None else [])
    if _rest(text, slots, said) or slots.when is None:
        return None  # 不用叫我了 alone: the focus's reminder, for the follow-up rules
    return CancelIntent(reminders=True, every=True, target_date=_day_of(slots), rule="alarm.off", confidence=0.9)


def _about_alarms(text: str, slots: Slots, markers: list[re.Match[str]]) -> Intent | None:
    """看看我的闹钟 / 我有哪些提醒 (a listing) and 关掉闹钟 / 清空提醒 / 取消明早的闹钟 (a cancel), when nothing
    else is left."""
    stop, look = _STOP.search(text), _LOOK.search(text)
    first = min(m.start() for m in markers)
    cut = max(text.rfind(",", 0, first), text.rfind(" ", 0, first))
    why = cut > 0 and look is None and ALARM.search(text, cut + 1) is not None \
        and _STOP.search(text, cut + 1) is not None and not _CLOCK.search(text, 0, cut)  # (周五两点例会 闹钟就不用了)
    if why:  # 明天不用上班，帮我把闹钟取消了: the clause before the alarm's says why, not what
        stop = _STOP.search(text, cut + 1)
    said = [m.span() for m in markers] + [m.span() for m in (stop, look) if m is not None]
    said += [(0, cut + 1)] if why else []
    every = _EVERY.search(text)
    if every is not None:
        said.append(every.span())
    if _rest(text, slots, said, drop_set=True):
        return None  # 取消开会的提醒: about an item, for the general rules
    when = slots.when
    if stop is not None and (look is None or stop.start() > look.start()):
        if every is None and when is None and not ALARM.search(text):
            return None  # 取消提醒 alone: the reminder of the item in focus, for the follow-up rules
        return CancelIntent(reminders=True, every=every is not None, target_date=_day_of(slots), rule="alarm.off",
                            confidence=0.9)
    if look is not None or (when is None and not slots.spans and not _SETTING.search(text)):
        start = when.start if when is not None and when.has_date else None
        end = when.end if when is not None and when.end is not None and when.has_date else None
        if start is not None and end is None:
            end = start.replace(hour=0, minute=0) + timedelta(days=1)
        return QueryIntent(reminders=True, range_start=start, range_end=end, rule="alarm.list", confidence=0.9)
    return None


def _set(text: str, slots: Slots, markers: list[re.Match[str]], *, now: datetime, tz: ZoneInfo, wake: bool,
         call: bool, countdown: bool) -> Intent | None:
    """帮我定一个明早七点的闹钟 / 七点叫我起床 / 倒计时10分钟 / 设个20分钟的闹钟 / 明早六点叫我: a reminder at that
    instant, titled with the activity said beside it (午睡半小时 到点叫我 → 午睡) or else 起床 / 倒计时 / 闹钟."""
    at = _instant(slots, now=now, tz=tz, wake=wake, countdown=countdown or call)
    if at is None:
        return None  # no time said: the general rules ask for it
    if NO_REMINDER.search(text) or _STOP.search(text):
        return None  # 例会 闹钟就算了: for the general rules
    activity = _WANT.sub("", _rest(text, slots, [m.span() for m in markers], drop_set=True))
    if activity and (wake or len(activity) > 6 or not _ACTIVITY.fullmatch(activity)):
        return None  # 七点叫我起床去跑步: an activity said with it, for the general rules
    if activity:
        title = activity
    elif wake or (call and at.hour < MORNING_ENDS):
        title = "起床"
    else:
        title = "倒计时" if COUNTDOWN.search(text) and not ALARM.search(text) else _ALARM_TITLE
    return CreateIntent(kind="task", title=title, due_at=at, reminder=Reminder(remind_at=at),
                        rule="alarm.set", confidence=0.9)


def _instant(slots: Slots, *, now: datetime, tz: ZoneInfo, wake: bool, countdown: bool) -> datetime | None:
    when = slots.when
    if when is not None and when.start is not None and when.has_clock and when.end is None:
        at = when.start.astimezone(tz)
        if wake and when.period is None and at.hour >= 12 and at.hour - 12 in range(1, 12):
            morning = at.replace(hour=at.hour - 12)  # 七点叫我起床: seven in the morning, the next one ahead
            at = morning if morning > now else morning + timedelta(days=1)
        return at
    if slots.relative is not None and slots.relative.start is not None:
        return slots.relative.start.astimezone(tz)
    if countdown and len(slots.durations) == 1 and slots.durations[0].seconds and when is None:
        seconds = slots.durations[0].seconds
        return (now + timedelta(seconds=seconds)).replace(second=0, microsecond=0)
    return None


def _rest(text: str, slots: Slots, said: list[tuple[int, int]], *, drop_set: bool = False) -> str:
    """What is left of the text without the time words, the markers said and words that carry no activity."""
    keep = [True] * len(text)
    for b, e in [*slots.spans, *said]:
        for i in range(b, min(e, len(text))):
            keep[i] = False
    rest = "".join(c if k else " " for c, k in zip(text, keep, strict=True))
    if drop_set:
        rest = _SET.sub(" ", rest)
    return _FILLER.sub("", rest).strip()
