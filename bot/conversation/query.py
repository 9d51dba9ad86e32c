"""Itinerary queries: the range as a list grouped by date, or a page link when it helps; a query
for part of one day (上午, 下午3点) or for one kind (有会吗) also says what else that day holds."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.conversation.change import named
from bot.conversation.context import Context
from intent.model import Kind, QueryIntent
from render.outcome import Answered, Listed, Outcome
from schedule.clock import to_ms
from schedule.domain import Item
from schedule.listing import Window
from schedule.recurrence import localize

PAGE_OVER = 8  # page links: more entries than this → summary plus the page link
REMINDERS_AHEAD_DAYS = 30  # 我有哪些闹钟 with no day said: the reminders of the next 30 days
# A chat reply shows far fewer entries than this (2048 bytes, or a page link past PAGE_OVER): a listing is cut
# here, so a user with 2,000 series pays for 200 entries per question, not for every occurrence of the week.
CHAT_ENTRIES = 200


async def run(intent: QueryIntent, ctx: Context) -> Outcome:
    if intent.about == "" and intent.asked is not None:  # 几点来着: the item in focus answers
        focused = await ctx.active_items(ctx.focus_ids) if ctx.focus_ids else []
        if len(focused) == 1:
            return Answered(focused[0].title, intent.asked, focused[0])
    if intent.about and intent.asked is not None:  # 跟王总吃饭是哪天: one item's row answers
        found = await named(intent.about, ctx)
        return Answered(intent.about, intent.asked, found[0] if found else None, others=max(len(found) - 1, 0))
    today = ctx.now.date()
    start = intent.range_start or localize(datetime.combine(today, time()), ctx.tz)
    end = intent.range_end or localize(datetime.combine(today + timedelta(days=7), time()), ctx.tz)
    if intent.reminders and intent.range_end is None:
        end = localize(datetime.combine(today + timedelta(days=REMINDERS_AHEAD_DAYS), time()), ctx.tz)
    start_ms, end_ms = to_ms(start), to_ms(end)
    if intent.reminders:  # 我有哪些闹钟: what will still be reminded, nothing else
        listed = await _window(ctx, start_ms, end_ms, None)
        now_ms = to_ms(ctx.now)
        items = [i for i in listed.items if any(r.status == "pending" and r.remind_at >= now_ms for r in i.reminders)]
        return Listed(start_ms=start_ms, end_ms=end_ms, tz=ctx.user.timezone, items=tuple(items), kind=None,
                      today=today, page_wanted=intent.prefer_page or len(items) > PAGE_OVER, rest=(),
                      complete=listed.complete)
    day = _day_around(start, end, ctx.tz)
    if day is not None and (intent.filter_kind is not None or (start_ms, end_ms) != day):
        # the whole truth: one read of the whole day, split into the part asked about and the rest of that day
        whole = await _window(ctx, day[0], day[1], None)
        every = whole.items
        items = [i for i in every if _within(i, start_ms, end_ms) and intent.filter_kind in (None, i.kind)]
        shown = {id(i) for i in items}
        rest = tuple(i for i in every if id(i) not in shown)
    else:
        # every occurrence of a series in the range is an entry of its own (每天 09:00 → 7 lines a week), as on
        # the page and in the API: the service's one expansion (a day already done is listed as done)
        whole = await _window(ctx, start_ms, end_ms, intent.filter_kind)
        items, rest = whole.items, ()
    return Listed(start_ms=start_ms, end_ms=end_ms, tz=ctx.user.timezone, items=tuple(items),
                  kind=intent.filter_kind, today=today, page_wanted=intent.prefer_page or len(items) > PAGE_OVER,
                  rest=rest, complete=whole.complete)


async def _window(ctx: Context, start_ms: int, end_ms: int, kind: Kind | None) -> Window:
    """The range's first `CHAT_ENTRIES` entries in time order; not complete when there were more."""
    window = await ctx.service.list_window(ctx.user.id, start_ms=start_ms, end_ms=end_ms, kind=kind, expand=True,
                                           first=CHAT_ENTRIES + 1)
    if len(window.items) <= CHAT_ENTRIES:
        return window
    return Window(window.items[:CHAT_ENTRIES], complete=False)


def _day_around(start: datetime, end: datetime, tz: ZoneInfo) -> tuple[int, int] | None:
    """The local day [00:00, next 00:00) holding the whole range, if there is one."""
    first = start.astimezone(tz).date()
    lo = localize(datetime.combine(first, time()), tz)
    hi = localize(datetime.combine(first + timedelta(days=1), time()), tz)
    return (to_ms(lo), to_ms(hi)) if start < end <= hi else None


def _within(item: Item, lo: int, hi: int) -> bool:
    """`schedule.occurrence.in_range` for one entry: an event overlapping [lo, hi), a task due in it."""
    anchor = item.anchor_at
    if anchor is None:
        return False
    if item.kind == "event" and item.end_at is not None and item.end_at > anchor:
        return anchor < hi and item.end_at > lo
    return lo <= anchor < hi
