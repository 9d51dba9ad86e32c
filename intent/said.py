"""What the words said beyond the action, as slots the conversation applies without reading the text again.

- a create: whether a day was said (without one, a clock time that has passed today is tomorrow's: the reply
  says so);
- an update, cancel or complete: the clock said about the target ("下午三点的会改到四点" → 15:00, on the day
  said or implied); for an update only the words before 改/挪/推 describe the target;
- an update: whether the new time names a day after the change verb ("明天的会改到四点" keeps the item's day)
  and the hour of a new clock said with nothing fixing its half of the day ("跑步改到九点" → 9: the item's own
  time picks morning or evening).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from intent.model import CancelIntent, CompleteIntent, CreateIntent, Intent, UpdateIntent
from intent.slots import hour_said

if TYPE_CHECKING:
    from intent.timex.types import TimeMention

CHANGE_VERB = re.compile(r"改到|改成|改为|改在|挪到|挪成|换到|换成|推迟|推到|延后|延期|提前|调到|调成|调整")
# Any day word: without one, a create's date of tomorrow means a past clock time rolled over.
_CREATE_DAY = re.compile(r"[今明后昨前]|周|星期|礼拜|号|日|月|天|节|[0-9]+[./-][0-9]+|tomorrow|tmr", re.IGNORECASE)
# A day named for an update's new time (改到明天 / 改到周五): without one the item keeps its day.
_NEW_DAY = re.compile(
    r"[今明后]天|明早|今晚|明晚|周|星期|礼拜|号|[0-9一二三四五六七八九十]+月|[0-9]+[./-][0-9]+|下个?月")


def fill(intent: Intent, text: str, mentions: list[TimeMention]) -> Intent:
    """`intent` with what `text` (normalised, with its refined `mentions`) said about days and clocks."""
    if isinstance(intent, CreateIntent):
        said = intent.rule.startswith("merge") or _CREATE_DAY.search(text) is not None  # an answer's day was said
        return intent.model_copy(update={"day_said": said}) if said != intent.day_said else intent
    if not isinstance(intent, UpdateIntent | CancelIntent | CompleteIntent):
        return intent
    if intent.rule.startswith("merge") and not mentions:
        return intent  # "2" picking from a list: what the request itself said still stands
    verb = CHANGE_VERB.search(text) if isinstance(intent, UpdateIntent) else None
    cut = verb.start() if verb is not None else len(text)
    update: dict[str, object] = {}
    clock = next((m for m in mentions if m.span[1] <= cut and m.start is not None and m.has_clock
                  and not m.relative and not m.lead), None)  # what this message said, never an earlier one's
    minute = clock.start.hour * 60 + clock.start.minute if clock is not None and clock.start is not None else None
    on = clock.start.date() if clock is not None and clock.start is not None else None
    on_said = clock is not None and clock.has_date
    if (minute, on, on_said) != (intent.target_minute, intent.target_on, intent.target_on_said):
        update.update(target_minute=minute, target_on=on, target_on_said=on_said)
    if isinstance(intent, UpdateIntent) and intent.changes is not None:
        day = _NEW_DAY.search(text, verb.end() if verb is not None else 0) is not None  # 明早的闹钟改到6点: none
        hour = _bare_hour(text, verb, mentions)
        if day != intent.changes.day_said or hour != intent.changes.bare_hour:
            update["changes"] = intent.changes.model_copy(update={"day_said": day, "bare_hour": hour})
    return intent.model_copy(update=update) if update else intent


def _bare_hour(text: str, verb: re.Match[str] | None, mentions: list[TimeMention]) -> int | None:
    """The hour (1–11) of the first clock said after the change verb, when nothing fixes its half of the day."""
    if verb is None:
        return None
    for m in mentions:
        if m.span[0] < verb.end() or not m.has_clock:
            continue
        if m.has_date or m.period is not None or m.relative:
            return None
        hour = hour_said(m.text)
        return hour if hour is not None and 1 <= hour <= 11 else None
    return None
