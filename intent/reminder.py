"""The reminder plan of a new item: ask a missing time, no-remind, meeting default, else none; explicit wins."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from intent.lexicon import NO_REMINDER, REMIND_WORD
from intent.model import Missing, Reminder
from intent.slots import Slots, minus, on_day

# A reminder word right after the time ("九点提醒我", "7点半叫我") makes that time the reminder time.
_REMIND_AT_TIME = re.compile(r"^[\s,的再就准时]*(?:提醒|叫|喊|通知)")


# 添加一个周五晚上8点去跑步的提醒: "a reminder (at that time) for X", said as a noun at the end.
_A_REMINDER_FOR = re.compile(r"[^,]的提醒(?:事项)?[吧呀啊哈呢]*[,.!?]*$")
_ON_TIME = re.compile(r"到时候?(?:再)?(?:提醒|叫|喊)|到点(?:了)?(?:提醒|叫|喊)|准时(?:提醒|叫|喊)")
_DAY_BEFORE = re.compile(r"(?:前一天|头一天|前一晚|提前一天|前天)[^,]{0,2}$")


@dataclass(frozen=True, slots=True)
class ReminderPlan:
    reminder: Reminder | None
    missing: tuple[Missing, ...]
    rule: str
    explicit_no: bool = False


def remind_at_time(text: str, slots: Slots) -> bool:
    """True when the reminder word directly follows the time mention (an explicit reminder time wins)."""
    anchor = slots.relative or slots.anchor
    if anchor is None:
        return False
    return bool(_REMIND_AT_TIME.match(text[anchor.span[1]:])) or _A_REMINDER_FOR.search(text) is not None


def plan(
    text: str, slots: Slots, *, kind: str, meeting: bool, start: datetime | None, has_clock: bool,
    meeting_offset: int,
) -> ReminderPlan:
    """Decide the reminder of a new task/event from the rules, most explicit first."""
    if NO_REMINDER.search(text):
        return ReminderPlan(None, (), "rule2.no_reminder", explicit_no=True)
    asked = bool(REMIND_WORD.search(text))
    if slots.relative is not None and slots.relative.start is not None and asked:
        return ReminderPlan(Reminder(remind_at=slots.relative.start), (), "rule5.relative")
    if start is None:
        if asked:
            return ReminderPlan(None, ("reminder_time",), "rule1.no_time")
        return ReminderPlan(None, (), "rule4.no_time_no_reminder")
    on_lead_day = lead_day_reminder(slots, start, all_day=not has_clock)
    if on_lead_day is not None:
        return ReminderPlan(on_lead_day, (), "rule5.lead_day_clock")
    second = slots.second
    if second is not None and second.start is not None and _REMIND_AT_TIME.match(text[second.span[1]:]):
        at = second.start
        if not second.has_date:
            at = at.replace(year=start.year, month=start.month, day=start.day)
            if at > start and second.period is None and at.hour >= 12:
                at -= timedelta(hours=12)  # 下午3点开会，2点半提醒我: the same half of the day, before the start
            if at > start and _DAY_BEFORE.search(text[: second.span[0]]):
                at -= timedelta(days=1)  # 前一天晚上8点提醒我
        offset = int((start - at).total_seconds() // 60)
        return ReminderPlan(Reminder(remind_at=at, offset_minutes=offset if offset >= 0 else None), (),
                            "rule5.second_time")
    lead = slots.lead_minutes
    if lead is None and has_clock and _ON_TIME.search(text):
        return ReminderPlan(Reminder(remind_at=start, offset_minutes=0), (), "rule5.on_time")
    if lead is not None:
        if has_clock:
            return ReminderPlan(Reminder(remind_at=minus(start, lead), offset_minutes=lead), (), "rule5.lead")
        return ReminderPlan(None, ("reminder_time",), "rule1.lead_needs_clock")
    if asked and has_clock and (kind == "task" or not meeting or remind_at_time(text, slots)):
        # 提醒我下午四点去拿报告 / 明天提醒我 早上7点 吃早饭: a time and 提醒 is a reminder at that time
        return ReminderPlan(Reminder(remind_at=start, offset_minutes=None), (), "rule5.at_time")
    if meeting and has_clock:
        return ReminderPlan(
            Reminder(remind_at=minus(start, meeting_offset), offset_minutes=meeting_offset), (), "rule3.meeting"
        )
    if asked:
        return ReminderPlan(None, ("reminder_time",), "rule1.no_clock")
    return ReminderPlan(None, (), "rule4.no_auto_reminder")


def lead_day(start: datetime | None, lead_minutes: int | None, *, all_day: bool) -> date | None:
    """The day a whole-days lead falls on for an item with only a date (下周五交方案，提前两天 → Wednesday):
    its clock time is still asked, never guessed. None for other leads (提前半小时 needs the item's own time)."""
    if start is None or not all_day or not lead_minutes or lead_minutes % 1440:
        return None
    return start.date() - timedelta(days=lead_minutes // 1440)


def lead_day_reminder(slots: Slots, start: datetime | None, *, all_day: bool) -> Reminder | None:
    """提前一天上午9点提醒我 for an item with only a date: that clock on the lead's day (the item keeps its day)."""
    clock, lead = slots.remind_clock, slots.lead_minutes
    day = lead_day(start, lead, all_day=all_day)
    if clock is None or day is None or start is None:
        return None
    return at_before(start, on_day(clock, datetime.combine(day, time(), tzinfo=start.tzinfo)))


def at_before(anchor: datetime, at: datetime) -> Reminder:
    """A reminder at `at` for an item at `anchor`; its offset, the wall-clock minutes between, is kept when the
    item moves."""
    return Reminder(remind_at=at, offset_minutes=int((anchor - at).total_seconds() // 60))
