"""Itinerary queries (rules 7–9): the range as a list grouped by date, or a page link when it helps."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from bot.conversation.context import Context
from intent.model import QueryIntent
from render.outcome import Listed, Outcome
from schedule.clock import to_ms
from schedule.recurrence import localize

PAGE_OVER = 8  # rule 9: more entries than this → summary plus the page link


async def run(intent: QueryIntent, ctx: Context) -> Outcome:
    today = ctx.now.date()
    start = intent.range_start or localize(datetime.combine(today, time()), ctx.tz)
    end = intent.range_end or localize(datetime.combine(today + timedelta(days=7), time()), ctx.tz)
    start_ms, end_ms = to_ms(start), to_ms(end)
    # every occurrence of a series in the range is an entry of its own (每天 09:00 → 7 lines a week), as on the
    # page and in the API: the service's one expansion (a day already done is listed as done)
    items = await ctx.service.list_items(ctx.user.id, start_ms=start_ms, end_ms=end_ms, kind=intent.filter_kind,
                                         expand=True)
    return Listed(start_ms=start_ms, end_ms=end_ms, tz=ctx.user.timezone, items=tuple(items),
                  kind=intent.filter_kind, today=today, page_wanted=intent.prefer_page or len(items) > PAGE_OVER)
