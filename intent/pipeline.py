"""The pipeline: normalise → time mentions → dialogue merge → action rule → intent. Never raises."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from intent import alarm as alarms
from intent import question, said
from intent.action import classify
from intent.followup import FocusHint, read, with_that_day
from intent.model import Intent, NoneIntent, SubscribeDigestIntent
from intent.normalise import normalise, with_clock_now
from intent.slots import Slots, collect, refine

if TYPE_CHECKING:
    from intent.timex.types import TimeMention

Extract = Callable[..., "list[TimeMention]"]


class _Engine:
    extract: Extract | None = None


def _extract(text: str, now: datetime, tz: ZoneInfo, engine: Extract | None) -> list[TimeMention]:
    if engine is None:
        if _Engine.extract is None:
            from intent.timex import extract

            _Engine.extract = extract
        engine = _Engine.extract
    return refine(sorted(engine(text, now=now, tz=tz), key=lambda m: m.span), text)


def parse(
    text: str, *, now: datetime, tz: ZoneInfo | str = "Asia/Shanghai", pending: Intent | None = None,
    meeting_offset_minutes: int = 60, extract: Extract | None = None, focus: FocusHint | None = None,
    courses: bool = True,
) -> Intent:
    """Text → Intent. Any internal error yields a low-confidence `none` (the agent takes over).

    `extract` replaces the time engine (tests use `intent.testing.FakeTimex`). `focus` describes the item the
    conversation is about, for follow-ups that name none (`intent.followup`).
    """
    try:
        zone = tz if isinstance(tz, ZoneInfo) else ZoneInfo(tz)
        if courses and extract is None:  # 每天两次… / 还12期 / 每隔两小时: one series (`intent.course`)
            from intent.course import read as read_course

            course = read_course(normalise(str(text)), now=now.astimezone(zone), tz=zone, pending=pending,
                                 meeting_offset=meeting_offset_minutes, focus=focus)
            if course is not None:
                return course
        return _parse(text if isinstance(text, str) else str(text), now.astimezone(zone), zone, pending,
                      meeting_offset_minutes, extract, focus=focus)
    except Exception as exc:  # the contract is: never raise
        return NoneIntent(confidence=0.0, rule=f"error.{type(exc).__name__}")


def parse_prepared(
    norm: str, mentions: list[TimeMention], degraded: bool, *, now: datetime, tz: ZoneInfo,
    pending: Intent | None, meeting_offset_minutes: int, focus: FocusHint | None = None,
) -> Intent:
    """`parse` for text already normalised and analysed (`intent.multi` reuses one extraction)."""
    try:
        return _parse(norm, now, tz, pending, meeting_offset_minutes, None, (norm, mentions, degraded), focus=focus)
    except Exception as exc:
        return NoneIntent(confidence=0.0, rule=f"error.{type(exc).__name__}")


def analyse(norm: str, now: datetime, tz: ZoneInfo, engine: Extract | None) -> tuple[list[TimeMention], bool]:
    """The refined mentions of normalised text, and whether the time engine failed (then none)."""
    try:
        return _extract(norm, now, tz, engine), False
    except Exception:  # a time-engine failure must not lose the request: go on without time words
        return [], True


def _parse(
    text: str, now: datetime, tz: ZoneInfo, pending: Intent | None, offset: int, engine: Extract | None,
    analysed: tuple[str, list[TimeMention], bool] | None = None, *, focus: FocusHint | None = None,
) -> Intent:
    norm = with_that_day(with_clock_now(normalise(text), now), focus) if analysed is None \
        else analysed[0]
    if not norm:
        return NoneIntent(rule="none.empty", confidence=0.9)
    mentions, degraded = analyse(norm, now, tz, engine) if analysed is None else analysed[1:]
    return said.fill(_read(norm, mentions, degraded, now, tz, pending, offset, focus), norm, mentions)


def _read(
    norm: str, mentions: list[TimeMention], degraded: bool, now: datetime, tz: ZoneInfo, pending: Intent | None,
    offset: int, focus: FocusHint | None,
) -> Intent:
    slots = collect(mentions, norm)
    if pending is not None and pending.needs_clarification:
        from intent.dialogue import merge

        merged = merge(pending, norm, slots, now=now, meeting_offset=offset)
        if merged is not None:
            return merged
    if focus is not None and focus.digest:  # right after a digest reply: 改到晚上9点半 re-times the push
        from intent.digest import after_digest

        changed = after_digest(norm, slots)
        fresh = _fresh(norm, slots, mentions, now, tz, offset)
        if isinstance(fresh, SubscribeDigestIntent) and not fresh.retime:
            return fresh  # 每晚9点发第二天的安排: a subscription of its own, not a change of the one just set
        if changed is not None:
            return changed
        focus = None  # no item in focus
    alarm = alarms.read(norm, slots, now=now, tz=tz)  # 闹钟 / 叫我起床 / 倒计时: reminder words
    if alarm is not None:
        return alarm
    asked = question.read(norm, slots, focus=focus is not None)  # 跟王总吃饭是哪天 / 周会在哪开 / 几点来着
    if asked is not None:
        return asked
    follow = read(norm, mentions, focus)
    if follow is not None:
        return follow
    intent = _fresh(norm, slots, mentions, now, tz, offset)
    if degraded:
        low = min(intent.confidence, 0.3)
        return intent.model_copy(update={"confidence": low, "rule": f"{intent.rule}/timex_error"})
    return intent


# What is left of a sentence that names no activity: days said as 这天, particles and verbs of setting.
NOT_AN_ACTIVITY = re.compile(r"(?:这天|那天|当天|这一天|那一天|都|也|还|要|得|去|来|就|设成|设为|改成|改为|变成|弄成|"
                             r"(?:设置|设定|设|定|订|添加|增加)(?:一)?个?|吧|的|了|啊|呀|这样|如此|一样|照旧|每次)+")


# Words of setting something up, with what is set (设一个提醒 / 建个待办 / 弄一个): never an activity themselves.
SETTING = re.compile(r"^(?:(?:帮我|给我|我想|我要|请)?(?:设置|设定|设|定|订(?=一?[个条](?:提醒|待办|日程|事项|行程))|"
                     r"添加|增加|加|新建|建|创建|弄|安排)"
                     r"(?:一)?[个条](?:的)?(?:提醒|待办|日程|事项|行程)?|(?:提醒|待办|日程|事项|行程)(?=[\s,]))[\s,]*")


def _fresh(text: str, slots: Slots, mentions: list[TimeMention], now: datetime, tz: ZoneInfo, offset: int) -> Intent:
    from intent import request  # requests the bot runs later

    changed = request.change(text, slots)  # 天气改成7点发: before the digest's 推送改到8点
    if changed is not None:
        return changed
    decision = classify(text, slots, now.date())
    action = decision.action
    if action in ("create", "query", "none", "cancel", "subscribe_digest"):
        asked = request.read(text, slots, mentions, action=action)
        if asked is not None:
            return asked
    if action == "create":
        from intent.create import build

        made = build(text, slots, rule=decision.rule, meeting_offset=offset,
                     confidence=0.6 if decision.rule == "create.weak" else 0.9)
        if made.title and NOT_AN_ACTIVITY.fullmatch(made.title):
            return NoneIntent(rule="none.no_activity", confidence=0.5)  # 这天都要去 / 设成: never a title
        setting = SETTING.match(made.title)
        if setting is not None and made.title[setting.end():].strip():  # 设一个提醒 去游泳: the activity is the rest
            title = made.title[setting.end():].strip()
            pending = made.pending
            if pending is not None and made.question is not None and made.title in pending.label:
                label = pending.label.replace(made.title, title)
                pending = pending.model_copy(update={"label": label})
                question = made.question.replace(f"“{made.pending.label}”" if made.pending else "", f"“{label}”")
                return made.model_copy(update={"title": title, "pending": pending, "question": question})
            return made.model_copy(update={"title": title})
        if setting is not None and made.reminder is not None:
            return made.model_copy(update={"title": "提醒"})  # 弄一个明天下午3点的提醒: a reminder at that time
        if setting is not None:
            return NoneIntent(rule="none.no_activity", confidence=0.5)  # 安排一个 / 建个待办: what is to be done?
        return made
    if action == "query":
        from intent import query

        return query.build(text, slots, now=now, tz=tz, mentions=mentions)
    if action in ("update", "cancel", "complete"):
        from intent import update

        return update.build(text, action, mentions, rule=decision.rule)
    if action == "snooze":
        from intent.digest import snooze

        return snooze(text, slots, now=now)
    if action == "subscribe_digest":
        from intent.digest import subscribe

        return subscribe(text, slots, retime=decision.rule == "digest.retime")
    if action == "unsubscribe_digest":
        from intent.model import UnsubscribeDigestIntent

        return UnsubscribeDigestIntent(rule=decision.rule, confidence=0.9)
    return NoneIntent(rule=decision.rule, confidence=0.5 if decision.rule == "none.default" else 0.8)
