"""Daily digest subscription (rules 6 and 13): today's agenda in the morning, or tomorrow's the evening
before (每晚9点发第二天的安排). Weekly digests are not built yet: the reply says so and stores nothing."""

from __future__ import annotations

from bot.conversation.context import Context
from intent.model import SubscribeDigestIntent, UnsubscribeDigestIntent
from render.outcome import Asked, Failed, Outcome, Subscribed, Unsubscribed

KINDS = ("todo_day", "todo_next_day")  # what the worker's digest knows how to send
WEEKLY_UNSUPPORTED = "目前只能每天（或每个工作日）推送当天或第二天的安排，按周推送还不支持，这次没有订阅。"


async def subscribe(intent: SubscribeDigestIntent, ctx: Context) -> Outcome:
    if intent.needs_clarification or intent.time is None:
        ctx.ask(intent)
        return Asked(intent.question or "每天几点发给你？比如“每天早上7点”。")
    rec = intent.recurrence
    daily = rec is None or rec.workdays == "cn" or (rec.rrule or "FREQ=DAILY").upper() == "FREQ=DAILY"
    if intent.digest_kind not in KINDS or not daily:
        return Failed(WEEKLY_UNSUPPORTED)
    kind = intent.digest_kind
    workdays: str | None = rec.workdays if rec is not None else None
    if intent.rule and intent.rule.startswith("rule6.retime"):  # 推送改到8点: the push the user has, at 8
        current = await ctx.service.list_digests(ctx.user.id)
        if len(current) == 1 and ".kind" not in intent.rule:
            kind = current[0].kind
        if len(current) == 1 and ".days" not in intent.rule:
            workdays = current[0].workdays
        if current and kind not in {d.kind for d in current}:
            return Failed("你订阅的推送里没有这一种，没有改动。发“每天早上7点给我发当天待办”可以订阅。")
        if not current:
            return Failed("你目前没有订阅每日待办推送，没有可改的。发“每天早上7点给我发当天待办”可以订阅。")
    digest = await ctx.service.subscribe_digest(ctx.user.id, local_time=intent.time, kind=kind,
                                                workdays=workdays)
    return Subscribed(digest)


async def unsubscribe(intent: UnsubscribeDigestIntent, ctx: Context) -> Outcome:
    stopped = [await ctx.service.unsubscribe_digest(ctx.user.id, kind) for kind in KINDS]
    return Unsubscribed(had=any(stopped))
