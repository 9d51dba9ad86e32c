"""Update, cancel and complete by text (docs/conversation.md#changing): target words, target date and changes."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from intent import clarify
from intent.action import CANCEL, COMPLETE, UPDATE
from intent.alarm import ALARM
from intent.followup import RESTATE
from intent.model import CancelIntent, Changes, CompleteIntent, Intent, Missing, UpdateIntent
from intent.slots import collect
from intent.timex.resolve import AM, PM
from intent.title import target_of

if TYPE_CHECKING:
    from intent.timex.types import TimeMention

_SAME_TIME = re.compile(r"同一时间|同样时间|原来的时间|同一个时间|时间不变")
_RENAME = re.compile(r"(?:名字|标题|名称|叫法)(?:改成|改为|换成)(.+)|改名(?:为|成|叫)?(.+)")
# 都/全部/所有 said of the targets: every match is meant ("明天的会都取消"); 成都/首都/京都 are places.
_EVERY = re.compile(
    r"所有|全部|统统|通通|一律|(?<![成首京])都(?:给我|帮我|先)?(?:取消|删|去掉|不|完成|做完|搞定|弄完|结束)")
_RELOCATE = re.compile(r"(?:地点|地址|位置|地方)(?:改成|改为|换成|改到|换到|挪到)(?:在)?([^,!?]+)")
_SHIFT = re.compile(r"(推迟|延后|往后推|往后挪|往后延|推后|顺延|提前|往前挪|往前推)")


def build(text: str, action: str, mentions: list[TimeMention], *, rule: str) -> Intent:
    verb = {"update": UPDATE, "cancel": CANCEL, "complete": COMPLETE}[action].search(text)
    cut = verb.start() if verb is not None else len(text)
    before = [m for m in mentions if m.span[1] <= cut]
    after = [m for m in mentions if m.span[0] >= (verb.end() if verb is not None else len(text))]
    spans = [m.span for m in (before if action == "update" else mentions)]
    lead_span = collect(mentions, text).lead_span
    spans += [lead_span] if lead_span is not None and verb is None else []
    spans += _verb_spans(verb) if verb is not None else []
    head = text[: verb.end()] if action == "update" and verb is not None else text
    target = target_of(head, spans)
    dated = next((m for m in before if m.has_date and m.start is not None), None)
    if dated is None and action != "update":
        dated = next((m for m in mentions if m.has_date and m.start is not None and m.type != "set"), None)
    target_date = dated.start.date() if dated is not None and dated.start is not None else None
    # 六点半的闹钟改成六点五十: no other words, the alarm is among the reminders set (narrowed by its clock)
    alarm = action == "update" and not target and ALARM.search(head) is not None
    missing: list[Missing] = [] if target or dated is not None or alarm else ["target"]
    if action in ("cancel", "complete"):
        kind = CancelIntent if action == "cancel" else CompleteIntent
        return kind(target_text=target or None, target_date=target_date, needs_clarification=missing,
                    question=clarify.question(missing) if missing else None, rule=rule,
                    confidence=0.85 if target else 0.6, every=_EVERY.search(text) is not None)
    if verb is None:  # update.lead_existing / update.shift_earlier: the lead is the whole change
        lead = collect(mentions, text).lead_minutes
        if lead is None:
            changes = None
        else:
            changes = Changes(offset_minutes=lead) if "提醒" in text else Changes(shift_minutes=-lead)
    else:
        changes = _changes(text, text[verb.end():], before, after, verb.group(0))
    if changes is None:
        missing.append("changes")
    part = _period_only(after)
    said = next((m for m in after if m.start is not None), None) if part is not None else None
    return UpdateIntent(
        target_text=target or None, target_date=target_date, changes=changes, needs_clarification=missing,
        question=clarify.question(missing, target=target, period=part) if missing else None,
        rule=rule, confidence=0.85 if not missing else 0.7, reminders=alarm,
        or_focus=bool(target) and RESTATE.fullmatch(target) is not None,  # 出发改成8点: the trip in focus
        new_period=part[1] if part is not None and changes is None else None,
        new_day=said.start.date() if said is not None and said.start is not None and said.has_date and changes is None
        else None,
    )


def _verb_spans(verb: re.Match[str]) -> list[tuple[int, int]]:
    """The verb's characters, less an object said inside it (明天不去健身了 → 健身 stays the target)."""
    for name, value in verb.groupdict().items():
        if name.startswith("obj") and value:
            b, e = verb.span(name)
            return [(verb.start(), b), (e, verb.end())]
    return [verb.span()]


def _changes(
    text: str, tail: str, before: list[TimeMention], after: list[TimeMention], verb: str
) -> Changes | None:
    moved_to = _RELOCATE.search(text)
    if moved_to is not None and moved_to.group(1).strip(" ,.\"'"):
        return Changes(location=moved_to.group(1).strip(" ,.\"'")[:60])
    renamed = _RENAME.search(text)
    if renamed is not None:
        return Changes(title=(renamed.group(1) or renamed.group(2) or "").strip(" ,.\"'") or None)
    slots = collect(after, text)
    if slots.lead_minutes is not None and "提醒" in text:
        return Changes(offset_minutes=slots.lead_minutes)
    if slots.lead_minutes is not None and slots.when is None:
        return Changes(shift_minutes=-slots.lead_minutes)  # 会议提前两小时: the item moves, not its reminder
    new = slots.when
    old = next((m for m in before if m.start is not None), None)
    if new is not None and new.start is not None:
        if new.has_clock:
            return Changes(start_at=_combine(new, old))
        if new.period is not None:
            return None  # 提前到上午 / 改到明天上午: which hour of it is still to say (never a guess)
        if _SAME_TIME.search(tail) and old is not None and old.has_clock and old.start is not None:
            moved = new.start.replace(hour=old.start.hour, minute=old.start.minute)
            return Changes(start_at=moved, date=moved.date())
        return Changes(date=new.start.date())
    shift = _SHIFT.search(verb + tail)
    if shift is not None and slots.durations and slots.durations[0].seconds:
        minutes = slots.durations[0].seconds // 60
        sign = -1 if shift.group(1).startswith(("提前", "往前")) else 1
        return Changes(shift_minutes=sign * minutes)
    return None


def _combine(new: TimeMention, old: TimeMention | None) -> datetime:
    """A new clock time without a date keeps the old date; a bare hour keeps the old half of the day."""
    assert new.start is not None
    at = new.start
    if new.has_date or old is None or old.start is None:
        return at
    base = old.start
    hour = at.hour
    morning = (old.has_clock and base.hour < 12) or (not old.has_clock and old.period in AM)
    if new.period is None and hour < 12 and (base.hour >= 12 or old.period in PM):
        hour += 12
    elif new.period is None and 13 <= hour <= 23 and morning:
        hour -= 12  # 上午9点的会改到10点 / 明天早上改成八点: the engine's "next 8 o'clock" may be 20:00
    return base.replace(hour=hour, minute=at.minute, second=0, microsecond=0)


def _period_only(after: list[TimeMention]) -> tuple[str, str] | None:
    """改到上午 / 改到明天晚上: the words for the new time and its part of the day, said without a clock."""
    first = next((m for m in after if m.start is not None), None)
    if first is None or first.has_clock or first.period is None:
        return None
    return first.text, first.period
