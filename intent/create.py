"""Create intents: task vs event (docs/conversation.md#creating), when, recurrence, reminder plan and clarification."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta

from intent import clarify, reminder
from intent.alarm import CALL, MORNING_ENDS
from intent.lexicon import ALL_DAY_ACTIVITY, DEADLINE, NO_REMINDER, RECORD_WORD, REMIND_WORD, is_activity, is_meeting
from intent.model import CreateIntent, Lunar, Missing, Pending, Recurrence
from intent.place import place_after_zai, place_at_end, place_of, venue_in
from intent.slots import Slots, day_start
from intent.title import clean, remove_spans, title_of


def build(text: str, slots: Slots, *, rule: str, meeting_offset: int, confidence: float = 0.9) -> CreateIntent:
    place = place_of(text)
    if place is not None:
        slots = replace(slots, spans=[*slots.spans, place[1]])  # 地点在望京SOHO is not the title
    rest = remove_spans(text, slots.spans)
    meeting = is_meeting(rest)
    asked = bool(REMIND_WORD.search(text)) and not NO_REMINDER.search(text)
    no_remind = bool(NO_REMINDER.search(text))
    anchor = slots.anchor
    start: datetime | None = anchor.start if anchor is not None else None
    end: datetime | None = anchor.end if anchor is not None and anchor.type == "range" else None
    has_clock = anchor is not None and anchor.has_clock
    if start is None and slots.relative is not None:
        start, has_clock = slots.relative.start, True
    stated = _stated_end(text, slots, start) if has_clock and end is None and slots.relative is None else None
    if stated is not None:  # 大概一个小时 / 4点结束: when it ends, and not part of the title
        end = stated[0]
        slots = replace(slots, spans=[*slots.spans, *stated[1]])
        rest = remove_spans(text, slots.spans)
    occupies = has_clock and not asked and not RECORD_WORD.search(text) and slots.relative is None
    noted = RECORD_WORD.search(text) is not None and start is None  # 记一下 想一下年会节目: a to-do, no time to ask
    kind = "event" if not DEADLINE.search(rest) and not noted and (meeting or is_activity(rest) or occupies) else "task"
    if kind == "event" and not meeting and asked and reminder.remind_at_time(text, slots):
        kind = "task"  # 明早8点提醒我跑步: a bare "提醒我 X" is a task (a reminder request is a to-do)
    raw_title = clean(rest)
    # 每天早上7点叫我: a call with nothing else said is an alarm (a wake-up in the morning), never titled 提醒
    call = CALL.search(text) is not None
    woken = call and start is not None and has_clock and start.hour < MORNING_ENDS
    alarm = "闹钟" in text or call
    title = title_of(text, slots.spans) or ("起床" if woken else "闹钟" if alarm else ("提醒" if asked else ""))
    venue = venue_in(title) if place is None else None
    if venue is not None:  # 星巴克见客户: the place goes to location, the title keeps the activity
        title, place = venue[0], (venue[1], (0, 0))
    zai = place_after_zai(text) if place is None else None
    if zai is not None and zai[0] in title:  # 在国贸跟朋友吃饭: 国贸 is where, not what
        title, place = title.replace(zai[0], "", 1).lstrip("在") or title, (zai[0], zai[1])
    at_end = place_at_end(text) if place is None and zai is None else None
    if at_end is not None and title.endswith(at_end[0]) and len(title) > len(at_end[0]):  # … 十二点半 在万达
        title, place = title[:-len(at_end[0])].rstrip("在 ,") or title, at_end
    missing: list[Missing] = []
    all_day = start is not None and not has_clock
    if kind == "task" and all_day and _period_only(text, rest, slots, asked=asked, no_remind=no_remind):
        kind = "event"  # 周六上午带狗打疫苗: a part of the day is no clock time and no all-day task (ask, never guess)
    if start is not None and all_day:
        start = day_start(start)
        end = day_start(end) if end is not None else None
    if kind == "event" and start is not None and all_day and not ALL_DAY_ACTIVITY.search(rest):
        if no_remind and meeting:
            kind = "task"
        elif not no_remind:
            missing.append("event_time")  # an event occupies a slot; ask, never guess the clock
    if kind == "event" and start is None:
        if no_remind:
            kind = "task"
        else:
            missing.append("event_time")
    if "event_time" in missing:
        plan = reminder.ReminderPlan(reminder.lead_day_reminder(slots, start, all_day=all_day),
                                     () if slots.lead_minutes or not asked else ("reminder_offset",),
                                     "rule1.ask_event_time")
    else:
        plan = reminder.plan(text, slots, kind=kind, meeting=meeting, start=start, has_clock=has_clock,
                             meeting_offset=meeting_offset)
    missing.extend(m for m in plan.missing if m not in missing)
    label = _label(slots, "开会" if raw_title in ("会", "个会") else (raw_title or title))
    return CreateIntent(
        kind="event" if kind == "event" else "task",
        title=title,
        location=(place[0] or None) if place is not None else None,
        start_at=start if kind == "event" else None,
        end_at=end if kind == "event" and end != start else None,
        due_at=start if kind == "task" else None,
        all_day=all_day,
        reminder=plan.reminder,
        explicit_no_reminder=plan.explicit_no,
        recurrence=_recurrence(slots),
        needs_clarification=missing,
        question=clarify.question(missing, label=label, meeting=meeting,
                                  remind_on=reminder.lead_day(start, slots.lead_minutes, all_day=all_day),
                                  lead_minutes=slots.lead_minutes, remind_period=slots.lead_period,
                                  recurring=slots.recur is not None)
        if missing else None,
        rule=f"{rule}/{plan.rule}",
        confidence=0.8 if missing else confidence,
        pending=Pending(
            label=label,
            on_date=start.date() if start is not None else None,
            is_meeting=meeting,
            wants_reminder=asked,
            lead_minutes=slots.lead_minutes,
            period=anchor.period if anchor is not None and not has_clock else None,
            lead_period=slots.lead_period,
        ) if missing else None,
    )


_UNTIL = re.compile(r"(?:开|忙|一直|持续)?(?:到|至)\s*$")
_END_WORD = re.compile(r"\s*(?:结束|散会|散场|开完|为止|完事)")
_DURATION_VERB = re.compile(r"(?:开|持续|大概|大约|约|预计|共|总共|要|需要|花|时长|,|\s)+$")
_DURATION_NOUN = re.compile(r"^的?(?=会|课|活动|会议)")  # 开一个小时的会: 的 goes with the duration


def _stated_end(text: str, slots: Slots, start: datetime | None) -> tuple[datetime, list[tuple[int, int]]] | None:
    """The end of a timed item said after its start: a clock with 结束/为止 (4点结束) or a duration (大概一个小时).
    Returns the end and the spans to leave out of the title."""
    if start is None:
        return None
    second = slots.second
    if second is not None and second.start is not None and not second.has_date:
        said = _END_WORD.match(text, second.span[1]) or _UNTIL.search(text, 0, second.span[0])
        if said is not None:
            end = start.replace(hour=second.start.hour, minute=second.start.minute)
            end += timedelta(hours=12) if end <= start and second.period is None else timedelta()
            if start < end <= start + timedelta(hours=24):
                return end, [second.span, said.span()]
    for duration in slots.durations:
        if duration.seconds is not None and 300 <= duration.seconds <= 86_400 and duration.span[0] > 0:
            b, e = duration.span
            verb = _DURATION_VERB.search(text, 0, b)
            noun = _DURATION_NOUN.match(text[e:])
            return start + timedelta(seconds=duration.seconds), [(verb.start() if verb else b, e + len(noun.group(0))
                                                                  if noun else e)]
    return None


_PERIOD_ASKS = frozenset({"凌晨", "早上", "早晨", "清晨", "上午", "下午", "傍晚", "晚上", "夜里", "今早", "明早",
                          "今晚", "明晚"})


def _period_only(text: str, rest: str, slots: Slots, *, asked: bool, no_remind: bool) -> bool:
    """A day with a part of it and no hour (后天上午去银行): the hour is asked like an event's, unless
    the words make it a deadline or a reminder request (which has its own question), or it repeats."""
    when = slots.anchor
    return (when is not None and when.period in _PERIOD_ASKS and slots.recur is None and not asked
            and not no_remind and not DEADLINE.search(rest))


_YEAR_SAID = re.compile(r"^\d{4}年(?=\d{1,2}月)")


def _label(slots: Slots, title: str) -> str:
    when = slots.anchor
    if when is not None and not when.has_clock:  # 2026年12月4日晚上 (那天 written out) is said as 12月4日晚上
        return _YEAR_SAID.sub("", when.text) + title
    return title


def _recurrence(slots: Slots) -> Recurrence | None:
    m = slots.recur
    if m is None or not m.rrule:
        return None
    lunar = Lunar(month=m.lunar.month, day=m.lunar.day, leap=m.lunar.leap) if m.lunar else None
    return Recurrence(rrule=m.rrule, workdays="cn" if m.workdays == "cn" else None, lunar=lunar)
