"""Itinerary queries (rules 7–9): the range as a list grouped by date, or a page link when it helps."""

from __future__ import annotations

import logging
from datetime import datetime, time, timedelta

from bot.conversation.context import Context
from intent.model import QueryIntent
from render.outcome import Listed, Outcome
from schedule.clock import to_ms
from schedule.recurrence import localize

log = logging.getLogger(__name__)
PAGE_OVER = 8  # rule 9: more entries than this → summary plus the page link


async def run(intent: QueryIntent, ctx: Context) -> Outcome:
    today = ctx.now.date()
    start = intent.range_start or localize(datetime.combine(today, time()), ctx.tz)
    end = intent.range_end or localize(datetime.combine(today + timedelta(days=7), time()), ctx.tz)
    start_ms, end_ms = to_ms(start), to_ms(end)
    items = await ctx.service.list_items(ctx.user.id, start_ms=start_ms, end_ms=end_ms, kind=intent.filter_kind)
    url = None
    if ctx.links is not None and (intent.prefer_page or len(items) > PAGE_OVER):
        try:
            url = await ctx.links.itinerary_url(ctx.user.id, start_ms=start_ms, end_ms=end_ms)
        except Exception as exc:  # the list still answers the question
            log.warning("page link failed: %s", type(exc).__name__)
    return Listed(start_ms=start_ms, end_ms=end_ms, tz=ctx.user.timezone, items=tuple(items),
                  kind=intent.filter_kind, today=today, page_url=url)
