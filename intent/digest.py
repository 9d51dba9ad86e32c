"""Digest subscribe / unsubscribe, changes to it in words (docs/conversation.md#digests) and snooze."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from intent import clarify
from intent.model import Missing, Recurrence, Reminder, SnoozeIntent, SubscribeDigestIntent
from intent.slots import Slots, day_start
from intent.title import remove_spans

_WORKDAY = re.compile(r"工作日|上班的?(?:日子|时候|那几天)")
_WEEKDAYS = re.compile(r"周一到周五|星期一到星期五|礼拜一到礼拜五")
_WEEK_AHEAD = re.compile(r"下周|下个星期|一周|本周|这周")
_NEXT_DAY = re.compile(r"第二天|次日|明天|明日|隔天")  # 每晚9点发第二天的安排: the next day's agenda
_SAME_DAY = re.compile(r"当天|今天|今日|当日")
# A period with no clock: the snooze default hour (明早 is one of the offered answers).
_SNOOZE_HOURS = (("凌晨", 6), ("早", 8), ("上午", 9), ("中午", 12), ("下午", 15), ("傍晚", 18), ("晚", 20))
MON_TO_FRI = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"

# Digest changes in words. Each names the push (发/推/推送/早报/待办 …) besides what changes.
_PUSH = r"(?:发送?|推送?|送)"
_AGENDA = r"(?:待办|安排|日程|行程|推送|早报|晚报|日报|清单|提醒)"
_VERB = r"(?:改成|改到|改为|改在|换成|换到|换在|调到|调成|调整到|调整为|挪到|变成)"
_AND = r"(?:和|跟|、|与)?"
_WEEKEND = rf"(?:周末|双休日?|周六{_AND}周[日天]|周六日|星期六{_AND}星期[日天]|礼拜六{_AND}礼拜[日天])"
# 周末就别发了 / 周六周日不用推送 / 周末的早报不用发了 / 周末不要给我发待办: not on Saturday and Sunday
_NO_WEEKEND = re.compile(
    rf"{_WEEKEND}(?:的话)?(?:休息|放假|的时候)?(?:的)?{_AGENDA}?(?:就|也|都|先|可以)?(?:不用|不要|别|不必|甭|停|免|不需要)(?:再)?(?:给我)?"
    rf"(?:{_PUSH}{_AGENDA}?|{_AGENDA})?(?:了|啦|吧|哈|啊|哦)*(?=$|[,.!;])"
    rf"|(?:取消|停掉|停了|关掉)(?:掉)?{_WEEKEND}的?(?:{_AGENDA}|{_PUSH})")
# 以后只在工作日发 / 工作日发就行 / 改成周一到周五推送 / 只要工作日推: working days only
_ONLY_WORKDAYS = re.compile(
    rf"(?:只|仅)(?:在|有|要|需要)?(?:{_WORKDAY.pattern}|{_WEEKDAYS.pattern})(?:的时候)?(?:才|再)?(?:给我)?{_PUSH}"
    rf"|(?:{_WORKDAY.pattern}|{_WEEKDAYS.pattern})(?:才|再)?(?:给我)?{_PUSH}(?:{_AGENDA})?(?:就行|就好|就可以|就够)"
    rf"|^(?:以后|之后|往后|今后)?{_VERB}(?:只在|只有|只要)?(?:每个?)?(?:{_WORKDAY.pattern}|{_WEEKDAYS.pattern})"
    rf"(?:才|再)?(?:给我)?{_PUSH}(?:{_AGENDA})?(?:吧|了)*(?=$|[,.!;])")
# 每天都发 / 周末也发 / 周末也要推送: every day again
_EVERY_DAY = re.compile(rf"(?:每天|天天)都(?:要)?{_PUSH}|{_WEEKEND}也(?:要|照常|照样)?(?:给我)?{_PUSH}")
# A new time or agenda for the push: 推送改成早上8点 / 早报改到7点半 / 换到晚上九点发第二天的 /
# 改成每晚8点发明天的 / 改成每天早上8点发 (the push named, or a daily time, or the agenda said after 发)
_RETIME = re.compile(
    rf"(?:推送|早报|晚报|日报|每日待办|待办推送|日程推送|每日推送)(?:的)?(?:时间)?{_VERB}"
    rf"|^(?:以后|之后|那就|就)?(?:把)?(?:推送|时间)?{_VERB}"
    rf"(?:(?:每天|每日|每早|每晚|每个?工作日|工作日)[^,]{{0,8}}?{_PUSH}(?:给我)?"
    rf"|[^,]{{0,8}}?{_PUSH}(?:给我)?(?:{_NEXT_DAY.pattern}|{_SAME_DAY.pattern})的?{_AGENDA}?)"
    rf"(?:吧|给我|过来|就行|就好)?(?=$|[,.!;])")
_KIND_PHRASE = re.compile(rf"{_PUSH}(?:给我)?(?:{_NEXT_DAY.pattern}|{_SAME_DAY.pattern})|"
                          rf"(?:{_NEXT_DAY.pattern}|{_SAME_DAY.pattern})的")
_DAY_WORD = re.compile(r"[天日号周月年]|星期|礼拜")
_PUSH_NAME = re.compile(r"每日待办(?:推送)?|每日推送")
_KIND_SAID = re.compile(rf"(?:{_NEXT_DAY.pattern}|{_SAME_DAY.pattern}|{_WEEK_AHEAD.pattern})")


def without_days_off(text: str) -> str:
    """The text without the days it says the push is off (周末不用发): what is left may still stop it."""
    return _NO_WEEKEND.sub("", text)


def changes_push(text: str, slots: Slots) -> bool:
    """A change to the digest the user has: a new time, agenda or days for it, said in words."""
    if _RETIME.search(text) is not None and _daily_clock(slots, text):
        return True
    if not (_NO_WEEKEND.search(text) or _ONLY_WORKDAYS.search(text)):
        return False
    # 每天早上7点发待办，周末不用发: a new subscription that names its days, not a change
    return not _daily_clock(slots, text) or re.search(_VERB, text) is not None


# What may be left of a change that names nothing, once its time words are gone (改到晚上9点半 → 改到).
_BARE_LEFT = re.compile(rf"^(?:那就|那|就|还是|嗯|好|我想|帮我)*(?:把)?(?:时间)?{_VERB}?(?:每天|每日|每早|每晚)?"
                        rf"(?:给我)?(?:{_PUSH}(?:给我)?)?(?:{_NEXT_DAY.pattern}|{_SAME_DAY.pattern})?的?{_AGENDA}?"
                        r"(?:吧|好了|就行|就好|可以吗|行吗|哈|啊|呀)*$")


def after_digest(text: str, slots: Slots) -> SubscribeDigestIntent | None:
    """Right after a digest reply, a change that names nothing (改到晚上9点半 / 8点吧 / 换成发第二天的) is
    about that push (digest changes in words): the change, or None when the text is something else. The caller knows the
    conversation was about the digest (the focus); this only reads the words."""
    if changes_push(text, slots):
        return subscribe(text, slots, retime=True)
    left = re.sub(r"[ ,.!?]+", "", remove_spans(text, slots.spans))
    if not _BARE_LEFT.match(left):
        return None
    clocked = any(m is not None and m.has_clock for m in (slots.when, slots.second, slots.recur))
    if clocked and not _daily_clock(slots, text):
        return None  # 改到明天下午3点: a day, so an item's time, not the push's
    changed = subscribe(text, slots, retime=True)
    if changed.kind_said and not _KIND_PHRASE.search(text):  # 改到明天: not 发明天的
        changed = changed.model_copy(update={"kind_said": False})
    return changed if changed.time is not None or changed.kind_said else None


def _daily_clock(slots: Slots, text: str) -> bool:
    """A time of day for a daily push: a recurrence's clock, or a clock said without a day of its own."""
    if slots.recur is not None and slots.recur.has_clock:
        return True
    when = slots.when
    if when is None:
        return False
    if when.has_clock and not when.has_date:
        return True
    if when.has_clock and _KIND_PHRASE.search(text) and not _DAY_WORD.search(when.text):
        return True  # 第二天的推送改到晚上10点: the day the clock took names the agenda, not a date
    # 改成晚上9点发第二天的: 第二天 is the agenda, the clock is the later mention
    second = slots.second
    return bool(second is not None and second.has_clock and not second.has_date)


def _clock(text: str, slots: Slots) -> str | None:
    anchor = slots.anchor
    if anchor is not None and not anchor.has_clock and slots.second is not None and slots.second.has_clock:
        anchor = slots.second  # 发第二天的…晚上9点: the date names the agenda, not the time
    if anchor is None or anchor.start is None or not anchor.has_clock:
        return None
    hour = anchor.start.hour
    if anchor.type != "set" and anchor.period is None and 18 <= hour <= 23 and "晚" not in text:
        hour -= 12  # a bare 7点半 for a daily push is the morning, not "the next 7:30 from now"
    return f"{hour:02d}:{anchor.start.minute:02d}"


def _days(text: str, slots: Slots) -> tuple[Recurrence, bool]:
    """The days the push goes out, and whether the text said so (a change keeps the push's days otherwise)."""
    if _NO_WEEKEND.search(text) or _WEEKDAYS.search(text):
        return Recurrence(rrule=MON_TO_FRI), True  # 周末 is Saturday and Sunday (weeks start on Monday)
    if _WORKDAY.search(text):
        return Recurrence(rrule="FREQ=DAILY", workdays="cn"), True  # 工作日: the official calendar, 调休 included
    rec = slots.recur
    if rec is not None and rec.rrule and rec.rrule != "FREQ=DAILY":
        return Recurrence(rrule=rec.rrule, workdays="cn" if rec.workdays == "cn" else None), True
    return Recurrence(rrule="FREQ=DAILY"), _EVERY_DAY.search(text) is not None


def subscribe(text: str, slots: Slots, *, retime: bool = False) -> SubscribeDigestIntent:
    """`retime`: a change to the push the user has (推送改到8点, 周末就别发了, 换到晚上九点发第二天的): the
    intent then says what the text named (`kind_said`, `days_said`, a `time` or none), and the conversation
    keeps the rest of the subscription as it is."""
    hhmm = _clock(text, slots)
    recurrence, days_said = _days(text, slots)
    kind = "todo_week" if _WEEK_AHEAD.search(text) else "todo_next_day" if _NEXT_DAY.search(text) else "todo_day"
    if retime:
        said = _PUSH_NAME.sub("", text)  # 每日待办推送 names the push, not its agenda
        kind_said = _KIND_SAID.search(said) is not None
        changed = hhmm is not None or kind_said or days_said
        rule = "rule22.change" + ("" if changed else ".nothing")
        return SubscribeDigestIntent(
            time=hhmm, recurrence=recurrence, digest_kind=kind, retime=True, kind_said=kind_said,
            days_said=days_said, rule=rule, confidence=0.9 if changed else 0.6)
    missing: list[Missing] = [] if hhmm else ["digest_time"]
    return SubscribeDigestIntent(
        time=hhmm, recurrence=recurrence, digest_kind=kind, days_said=days_said, needs_clarification=missing,
        question=clarify.question(missing) if missing else None,
        rule="rule6.digest" + ("" if hhmm else ".ask_time"), confidence=0.9 if hhmm else 0.8,
    )


def snooze(text: str, slots: Slots, *, now: datetime) -> SnoozeIntent:
    at, rule = _snooze_at(text, slots, now)
    if at is None:
        return SnoozeIntent(needs_clarification=["snooze_duration"], question=clarify.question(["snooze_duration"]),
                            rule="rule12.ask_duration", confidence=0.8)
    return SnoozeIntent(reminder=Reminder(remind_at=at), rule=rule, confidence=0.9)


def _snooze_at(text: str, slots: Slots, now: datetime) -> tuple[datetime | None, str]:
    if slots.relative is not None and slots.relative.start is not None:
        return slots.relative.start, "rule12.relative"
    if slots.durations and slots.durations[0].seconds:
        later = (now.astimezone(UTC) + timedelta(seconds=slots.durations[0].seconds)).astimezone(now.tzinfo)
        return later.replace(second=0, microsecond=0), "rule12.duration"  # elapsed time, also across DST
    when = slots.when
    if when is not None and when.start is not None:
        if when.has_clock:
            return when.start, "rule12.clock"
        for word, hour in _SNOOZE_HOURS:
            if word in when.text or word in text:
                return day_start(when.start).replace(hour=hour), "rule12.period_default"
    return None, ""
