"""Digest subscription (SPEC §3 rules 6, 13) and snooze (rule 12)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from intent import clarify
from intent.model import Missing, Recurrence, Reminder, SnoozeIntent, SubscribeDigestIntent
from intent.slots import Slots, day_start

_WORKDAY = re.compile(r"工作日")
_WEEKDAYS = re.compile(r"周一到周五|星期一到星期五|礼拜一到礼拜五")
_WEEK_AHEAD = re.compile(r"下周|下个星期|一周|本周|这周")
_NEXT_DAY = re.compile(r"第二天|次日|明天|明日|隔天")  # 每晚9点发第二天的安排: the next day's agenda
# A period with no clock: the snooze default hour (明早 is one of the offered answers).
_SNOOZE_HOURS = (("凌晨", 6), ("早", 8), ("上午", 9), ("中午", 12), ("下午", 15), ("傍晚", 18), ("晚", 20))


_PUSH_NAME = re.compile(r"每日待办(?:推送)?|每日推送")
_DAYS_SAID = re.compile(r"每天|每日|每早|每晚|工作日|周一到周五|星期一到星期五|礼拜一到礼拜五")


def subscribe(text: str, slots: Slots, *, retime: bool = False) -> SubscribeDigestIntent:
    """`retime`: a new time for the push the user has (推送改到8点); the rule then says what the text named
    besides the time (.kind, .days), and the conversation keeps the rest of the subscription as it is."""
    anchor = slots.anchor
    hhmm = None
    if anchor is not None and anchor.start is not None and anchor.has_clock:
        hour = anchor.start.hour
        if anchor.type != "set" and anchor.period is None and 18 <= hour <= 23 and "晚" not in text:
            hour -= 12  # a bare 7点半 for a daily push is the morning, not "the next 7:30 from now"
        hhmm = f"{hour:02d}:{anchor.start.minute:02d}"
    rec = slots.recur
    if rec is not None and rec.rrule:
        recurrence = Recurrence(rrule=rec.rrule, workdays="cn" if rec.workdays == "cn" else None)
    elif _WORKDAY.search(text) and not _WEEKDAYS.search(text):
        recurrence = Recurrence(rrule="FREQ=DAILY", workdays="cn")
    elif _WEEKDAYS.search(text):
        recurrence = Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
    else:
        recurrence = Recurrence(rrule="FREQ=DAILY")
    if recurrence.workdays is None and _WORKDAY.search(text) and not _WEEKDAYS.search(text):
        recurrence = recurrence.model_copy(update={"workdays": "cn"})
    kind = "todo_week" if _WEEK_AHEAD.search(text) else "todo_next_day" if _NEXT_DAY.search(text) else "todo_day"
    missing: list[Missing] = [] if hhmm else ["digest_time"]
    rule = "rule6.digest" + ("" if hhmm else ".ask_time")
    if retime:
        said_kind = bool(_WEEK_AHEAD.search(text) or _NEXT_DAY.search(text) or "当天" in text)
        days = _DAYS_SAID.search(_PUSH_NAME.sub("", text))  # 每日待办推送 names the push, not its days
        rule = "rule6.retime" + (".kind" if said_kind else "") + (".days" if days else "")
    return SubscribeDigestIntent(
        time=hhmm, recurrence=recurrence, digest_kind=kind, needs_clarification=missing,
        question=clarify.question(missing) if missing else None,
        rule=rule, confidence=0.9 if hhmm else 0.8,
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
