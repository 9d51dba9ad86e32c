"""Daily digest subscription (rules 6 and 13)."""

from __future__ import annotations

from bot.conversation.context import Context
from intent.model import SubscribeDigestIntent, UnsubscribeDigestIntent
from render.outcome import Asked, Outcome, Subscribed, Unsubscribed


async def subscribe(intent: SubscribeDigestIntent, ctx: Context) -> Outcome:
    if intent.needs_clarification or intent.time is None:
        ctx.ask(intent)
        return Asked(intent.question or "每天几点发给你？比如“每天早上7点”。")
    workdays = intent.recurrence.workdays if intent.recurrence is not None else None
    digest = await ctx.service.subscribe_digest(ctx.user.id, local_time=intent.time, kind=intent.digest_kind,
                                                workdays=workdays)
    return Subscribed(digest)


async def unsubscribe(intent: UnsubscribeDigestIntent, ctx: Context) -> Outcome:
    return Unsubscribed(had=await ctx.service.unsubscribe_digest(ctx.user.id))
