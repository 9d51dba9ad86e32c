"""Daily digest subscribe / unsubscribe: today's agenda in the morning, or tomorrow's the evening
before (每晚9点发第二天的安排), every day, on working days or on some weekdays. Changes in words (such as
推送改到8点, 换到晚上九点发第二天的, 周末就别发了) change the push the user has and keep what they do not
name; there is one subscription per kind. Weekly digests are not built yet: the reply says so, nothing stored."""

from __future__ import annotations

import re

from bot.conversation.context import Context
from intent.model import Recurrence, SubscribeDigestIntent, UnsubscribeDigestIntent
from render.outcome import Asked, Failed, Outcome, Subscribed, Unsubscribed
from schedule.domain import DigestSubscription

KINDS = ("todo_day", "todo_next_day")  # what the worker's digest knows how to send
WEEKLY_UNSUPPORTED = "目前只能每天（或每个工作日）推送当天或第二天的安排，按周推送还不支持，这次没有订阅。"
NOTHING_TO_CHANGE = "你目前没有订阅每日待办推送，没有可改的。发“每天早上7点给我发当天待办”可以订阅。"
WHICH_ONE = "你订阅了当天和第二天两种推送，要改哪一个？比如“当天的推送改到早上8点”或“第二天的改到晚上9点”。"
SAY_WHAT = "推送要怎么改？比如“推送改到早上8点”“改成晚上9点发第二天的”或“周末不用发”。"
_ON_WEEKDAYS = re.compile(r"^FREQ=WEEKLY;BYDAY=(?:MO|TU|WE|TH|FR|SA|SU)(?:,(?:MO|TU|WE|TH|FR|SA|SU))*$")
Days = tuple[str | None, str | None]  # (workdays, rrule) as the service keeps them


async def subscribe(intent: SubscribeDigestIntent, ctx: Context) -> Outcome:
    if intent.retime:
        return await _change(intent, ctx)
    if intent.needs_clarification or intent.time is None:
        ctx.ask(intent)
        return Asked(intent.question or "每天几点发给你？比如“每天早上7点”。")
    days = _days(intent.recurrence)
    if intent.digest_kind not in KINDS or days is None:
        return Failed(WEEKLY_UNSUPPORTED)
    digest = await ctx.service.subscribe_digest(ctx.user.id, local_time=intent.time, kind=intent.digest_kind,
                                                workdays=days[0], rrule=days[1])
    return Subscribed(digest)


async def _change(intent: SubscribeDigestIntent, ctx: Context) -> Outcome:
    """Digest changes in words: a new time, agenda or days for the push the user has; the rest of it stays as it was."""
    if intent.time is None and not intent.kind_said and not intent.days_said:
        return Failed(SAY_WHAT)
    days = _days(intent.recurrence) if intent.days_said else None
    if (intent.kind_said and intent.digest_kind not in KINDS) or (intent.days_said and days is None):
        return Failed(WEEKLY_UNSUPPORTED)
    current = [d for d in await ctx.service.list_digests(ctx.user.id) if d.kind in KINDS]
    if not current:
        return Failed(NOTHING_TO_CHANGE)
    named = [d for d in current if intent.kind_said and d.kind == intent.digest_kind]
    if len(current) == 1:
        targets = current
    elif named:
        targets = named  # 第二天的改到晚上9点: the one of that kind
    elif intent.time is None and not intent.kind_said:
        targets = current  # 周末不用发: every push the user has
    else:
        return Failed(WHICH_ONE)
    changed = None
    for sub in targets:
        kind = intent.digest_kind if intent.kind_said else sub.kind
        workdays, rrule = days if days is not None else _kept_days(sub)
        if kind != sub.kind:  # 换成发第二天的: the push changes kind; one subscription per kind
            await ctx.service.unsubscribe_digest(ctx.user.id, sub.kind)
        changed = await ctx.service.subscribe_digest(ctx.user.id, local_time=intent.time or sub.local_time,
                                                     kind=kind, workdays=workdays, rrule=rrule)
    assert changed is not None
    return Subscribed(changed)


def _days(rec: Recurrence | None) -> Days | None:
    """The days a digest goes out, as the service keeps them; None for a rule a digest cannot follow."""
    if rec is None:
        return None, None
    if rec.workdays == "cn":
        return "cn", None  # 工作日: the official calendar (调休 included)
    rule = (rec.rrule or "FREQ=DAILY").upper()
    if rule == "FREQ=DAILY":
        return None, None
    if _ON_WEEKDAYS.match(rule):
        return None, rule  # 周末不用发 / 周一到周五: those weekdays
    return None


def _kept_days(sub: DigestSubscription) -> Days:
    rule = (sub.rrule or "").upper()
    return sub.workdays, rule if _ON_WEEKDAYS.match(rule) else None


async def unsubscribe(intent: UnsubscribeDigestIntent, ctx: Context) -> Outcome:
    stopped = [await ctx.service.unsubscribe_digest(ctx.user.id, kind) for kind in KINDS]
    return Unsubscribed(had=any(stopped))
