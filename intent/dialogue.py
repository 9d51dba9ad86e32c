"""Dialogue merge: complete a pending intent from the user's answer, or let a new request replace it."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta

from intent import clarify
from intent.digest import snooze, subscribe
from intent.lexicon import NO_REMINDER
from intent.model import (
    CancelIntent,
    Changes,
    CompleteIntent,
    CreateIntent,
    Intent,
    Reminder,
    SnoozeIntent,
    SubscribeDigestIntent,
    UpdateIntent,
)
from intent.reminder import at_before
from intent.reminder import lead_day as lead_day_of
from intent.slots import Slots, minus, on_day
from intent.title import clean, remove_spans

_ORDINAL = re.compile(r"^(?:第)?([0-9一二两三四五六七八九十]+)(?:个|项|条|件)?$|^(最后一个|最后那个)$")
_EVERY_ANSWER = re.compile(  # "全部" / "两个都取消" / "都要" answers "要取消哪一个？"
    r"^(?:这|那)?(?:[两三四五六七八九十0-9]+(?:个|条|项|件)|它们|他们)?(?:全部|全都|都|所有|一起)(?:的|都)?"
    r"(?:要|是|行|取消|删掉?|删除|去掉|完成|做完|搞定)?(?:了|掉)?(?:吧|啊|呀|哈)?$")
_ANSWER_FILLER = re.compile(r"提前|提醒|大概|大约|左右|开始|的时候|吧|的|就|好|可以|嗯|那就|我|你|在|点钟|到时|[,.!? ]")


EVERY_PICKED = "merge.every"  # the rule of an answer that takes every candidate offered


def choice(text: str) -> int | None:
    """'2', '第二个', '第2项' → 2; '最后一个' → -1."""
    from intent.timex.numerals import cn_int

    m = _ORDINAL.match(text.strip(" ,.!"))
    if m is None:
        return None
    if m.group(2):
        return -1
    n = cn_int(m.group(1))
    return n if n is not None and 0 < n < 100 else None


def is_answer(text: str, slots: Slots) -> bool:
    """An answer is mostly time words, a lead, or a no-reminder phrase; anything else is a new request."""
    if NO_REMINDER.search(text):
        rest = clean(NO_REMINDER.sub(",", text))
        return rest in ("", "先记", "记着", "就行", "先这样")
    rest = _ANSWER_FILLER.sub("", remove_spans(text, slots.spans))
    return len(rest) <= 1 and bool(slots.spans)


def merge(pending: Intent, text: str, slots: Slots, *, now: datetime, meeting_offset: int) -> Intent | None:
    """The completed (or still incomplete) intent, or None when `text` does not answer `pending`."""
    picked = choice(text)
    if picked is not None and "target" in pending.needs_clarification and isinstance(
        pending, UpdateIntent | CancelIntent | CompleteIntent
    ):
        left = [m for m in pending.needs_clarification if m != "target"]
        return pending.model_copy(update={"choice": picked, "needs_clarification": left,
                                          "question": pending.question if left else None, "rule": "merge.choice"})
    if (isinstance(pending, CancelIntent | CompleteIntent) and "target" in pending.needs_clarification
            and _EVERY_ANSWER.match(text.strip(" ,.!?。，！？~～"))):
        left = [m for m in pending.needs_clarification if m != "target"]
        return pending.model_copy(update={"every": True, "needs_clarification": left, "question": None,
                                          "rule": EVERY_PICKED})
    if not is_answer(text, slots):
        return None
    if isinstance(pending, SnoozeIntent):
        return snooze(text, slots, now=now)
    if isinstance(pending, SubscribeDigestIntent):
        done = subscribe(text, slots)
        if done.time is None:
            return None
        return done.model_copy(update={"recurrence": pending.recurrence or done.recurrence,
                                       "digest_kind": pending.digest_kind, "rule": "merge.digest_time"})
    if isinstance(pending, CreateIntent):
        return _merge_create(pending, text, slots, meeting_offset)
    lead_clock = _lead_clock(pending, slots, text)
    if lead_clock is not None:
        return lead_clock
    if isinstance(pending, UpdateIntent) and pending.new_period is not None and slots.when is not None \
            and slots.when.has_clock and slots.when.start is not None and not slots.when.has_date:
        # 周五的会提前到上午 → "10点": that hour in the part of the day said (the day: as said, or the item's)
        day = datetime.combine(pending.new_day or pending.target_date or now.date(), time(), tzinfo=now.tzinfo)
        moved = on_day(slots.when, day, pending.new_period)
        still = [m for m in pending.needs_clarification if m != "changes"]
        return pending.model_copy(update={
            "changes": Changes(start_at=moved, date=pending.new_day),  # a date only when one was said
            "needs_clarification": still, "question": pending.question if still else None,
            "rule": "merge.changes"})
    return None


LEAD_CLOCK = "merge.lead_clock"


def _lead_clock(pending: Intent, slots: Slots, text: str) -> UpdateIntent | None:
    """"提前一天提醒我" about an all-day item asked 几点: "晚上8点" → the lead from the item's day."""
    info = pending.pending
    when = slots.when
    if not isinstance(pending, UpdateIntent) or "reminder_time" not in pending.needs_clarification \
            or info is None or info.on_date is None or info.lead_minutes is None \
            or when is None or not when.has_clock or when.start is None or when.has_date:
        return None
    day = datetime.combine(info.on_date, time(), tzinfo=when.start.tzinfo) - timedelta(minutes=info.lead_minutes)
    at = on_day(when, day, info.period or ("晚上" if "晚" in text else None))
    lead = int((datetime.combine(info.on_date, time(), tzinfo=at.tzinfo) - at).total_seconds() // 60)
    return pending.model_copy(update={"changes": Changes(offset_minutes=lead), "needs_clarification": [],
                                      "question": None, "pending": None, "rule": LEAD_CLOCK})


def _merge_create(pending: CreateIntent, text: str, slots: Slots, meeting_offset: int) -> CreateIntent:
    info = pending.pending
    if NO_REMINDER.search(text):
        when = pending.start_at or pending.due_at
        return pending.model_copy(update={
            "kind": "task" if pending.start_at is None or pending.all_day else pending.kind,
            "due_at": when if pending.start_at is None or pending.all_day else None,
            "start_at": None if pending.all_day else pending.start_at,
            "reminder": None, "explicit_no_reminder": True, "needs_clarification": [], "question": None,
            "pending": None, "rule": "merge.rule2.no_reminder", "confidence": 0.9,
        })
    at = slots.relative or slots.when
    asks_clock = {"reminder_time", "event_time"} & set(pending.needs_clarification)
    if (at is not None and not at.has_clock and at.period is not None and info is not None and asks_clock
            and at.start is not None):
        same_day = not at.has_date or at.start.date() == info.on_date
        if same_day or "reminder_time" in pending.needs_clarification:
            # "明天上午" to 几点？: the part of the day (and a day for the reminder: 周日晚上) is kept for the
            # next answer, and the question narrows to it
            known = {"period": at.period} if same_day else {"period": at.period, "remind_on": at.start.date()}
            said = at.period if same_day else at.text
            return pending.model_copy(update={"pending": info.model_copy(update=known),
                                              "question": f"好的，{said}几点？", "rule": "merge.period"})
    start = at.start if at is not None and at.has_clock else None
    if start is not None and at is not None and not at.has_date and info is not None and info.on_date is not None:
        # On the day already said, in the part of it already said (周五晚上 + "7点" → 19:00); else the bare-hour rule
        # (a bare 6–11 on another day is the morning). 18:30 written so is never moved.
        day = datetime.combine(info.remind_on or info.on_date, time(), tzinfo=start.tzinfo)
        start = on_day(at, day, info.period or ("晚上" if "晚" in text else None))
    lead = slots.lead_minutes if slots.lead_minutes is not None else (info.lead_minutes if info else None)
    base = start or pending.start_at or pending.due_at
    has_clock = start is not None or not pending.all_day
    missing = [m for m in pending.needs_clarification if not (
        (m in ("event_time", "reminder_time") and start is not None) or (m == "reminder_offset" and lead is not None)
    )]
    reminder = pending.reminder
    anchor = pending.due_at or pending.start_at
    asked_when = "reminder_time" in pending.needs_clarification and start is not None
    clock_only = at is not None and not at.has_date and slots.relative is None  # "上午9点", no day of its own
    lead_day = lead_day_of(anchor, info.lead_minutes if info else None, all_day=pending.all_day)
    # A day of its own unlike the item's ("下周三还信用卡，提前一天提醒" → "明天上午10点") is when to remind.
    elsewhen = asked_when and (not clock_only or (info is not None and info.remind_on is not None)) \
        and info is not None and info.on_date is not None and start is not None and start.date() != info.on_date
    on_lead_day = asked_when and clock_only and lead_day is not None and not elsewhen
    if on_lead_day and at is not None and lead_day is not None and anchor is not None and start is not None:
        # 下周五交方案，提前两天提醒我 → "上午9点": Wednesday 09:00; the task keeps its whole day.
        day = datetime.combine(lead_day, time(), tzinfo=start.tzinfo)
        reminder = at_before(anchor, on_day(at, day, info.lead_period if info is not None else None))
    elif asked_when and clock_only and not elsewhen and info is not None and info.lead_minutes and start is not None:
        # 明天交报告，提前半小时提醒我 → "下午5点": due 17:00, reminded 16:30.
        reminder = Reminder(remind_at=minus(start, info.lead_minutes), offset_minutes=info.lead_minutes)
    elif asked_when and start is not None:
        reminder = Reminder(remind_at=start)
    elif pending.reminder is not None and base is not None and has_clock:
        # its own clock on the lead's day (提前一天晚上8点提醒我), kept while the event's time was asked
        reminder = at_before(base, pending.reminder.remind_at)
    elif base is not None and has_clock and lead is not None:
        reminder = Reminder(remind_at=minus(base, lead), offset_minutes=lead)
    elif base is not None and has_clock and info is not None and info.is_meeting:
        reminder = Reminder(remind_at=minus(base, meeting_offset), offset_minutes=meeting_offset)
        missing = [m for m in missing if m != "reminder_offset"]
    update: dict[str, object] = {"reminder": reminder, "needs_clarification": missing, "rule": "merge.create"}
    if start is not None and "reminder_time" not in pending.needs_clarification:
        update.update({"start_at": start, "all_day": False} if pending.kind == "event" else {"due_at": start})
        if pending.kind == "event" and pending.all_day and _within_a_day(pending):
            update["end_at"] = None  # the end of the day (or evening) asked about is not when it ends
    elif start is not None and pending.due_at is None and pending.start_at is None:
        update["due_at"] = start
    if start is not None and pending.kind == "task" and pending.all_day and not on_lead_day and not elsewhen:
        update.update({"due_at": start, "all_day": False})
    label = info.label if info else pending.title
    update["question"] = clarify.question(missing, label=label, meeting=bool(info and info.is_meeting),
                                          remind_on=lead_day, lead_minutes=info.lead_minutes if info else None,
                                          remind_period=info.lead_period if info else None) if missing else None
    update["pending"] = pending.pending if missing else None
    update["confidence"] = 0.8 if missing else 0.9
    return pending.model_copy(update=update)


def _within_a_day(pending: CreateIntent) -> bool:
    start, end = pending.start_at, pending.end_at
    return start is not None and end is not None and end - start <= timedelta(days=1)
