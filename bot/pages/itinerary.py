"""Loading what a page or feed shows: the service's items for a range, the in-app queue, the feed's items."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import partial
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pages.inbox import peek_notices, take_notices
from render.itinerary import Flash, Itinerary, Notice, build_itinerary
from render.timefmt import local
from schedule.clock import Clock, now_ms, to_ms
from schedule.domain import Item
from schedule.service import ScheduleService

DEFAULT_DAYS = 7
MAX_DAYS = 92
MAX_OVERDUE = 20
MAX_ENTRIES = 400  # entries a page lists (the earliest, and it says so): a 92-day page of 2,000 series is not built
INLINE_CARDS = 200  # a page with more entries than this is built and rendered off the event loop
FEED_HISTORY_MS = 180 * 86_400_000  # older one-off items leave the feed; series stay
EARLIEST, LATEST = date(2000, 1, 1), date(2100, 12, 31)  # a page's dates (date arithmetic overflows at 1 and 9999)


class BadRange(ValueError):
    """?from=/?to= that is not a date, is outside 2000–2100, or a range longer than MAX_DAYS."""


@dataclass(frozen=True, slots=True)
class DayRange:
    start_on: date
    end_on: date  # exclusive


def parse_range(raw_from: str | None, raw_to: str | None, *, today: date) -> DayRange:
    """?from=YYYY-MM-DD&to=YYYY-MM-DD (both inclusive, either optional); the default is the next 7 days.
    A value that does not start with a digit is not ours: WeChat appends ?from=singlemessage (timeline,
    groupmessage) to every forwarded link, and that leaves the range as if no date were given."""
    raw_from, raw_to = (raw if raw and raw[:1].isdigit() else None for raw in (raw_from, raw_to))
    try:
        start = date.fromisoformat(raw_from) if raw_from else None
        last = date.fromisoformat(raw_to) if raw_to else None
    except ValueError as exc:
        raise BadRange("not a date") from exc
    if any(day is not None and not EARLIEST <= day <= LATEST for day in (start, last)):
        raise BadRange("out of bounds")
    if start is None:
        start = last - timedelta(days=DEFAULT_DAYS - 1) if last is not None and last < today else today
    end = last + timedelta(days=1) if last is not None else start + timedelta(days=DEFAULT_DAYS)
    if end <= start or (end - start).days > MAX_DAYS:
        raise BadRange("range")
    return DayRange(start, end)


def midnight_ms(day: date, tz: str) -> int:
    return to_ms(datetime.combine(day, time(0), ZoneInfo(tz)))


class ItineraryLoader:
    def __init__(self, service: ScheduleService, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._service, self._sessions, self._clock = service, sessions, clock

    async def timezone(self, user_id: int) -> str:
        return (await self._service.get_user(user_id)).timezone

    async def item(self, user_id: int, item_id: int) -> Item:
        return await self._service.get_item(user_id, item_id)

    async def openid(self, user_id: int) -> str:
        return (await self._service.get_user(user_id)).wechat_openid

    async def mark_seen(self, user_id: int) -> int:
        """知道了: the notices the page lists are marked seen; how many."""
        return len((await take_notices(self._sessions, user_id, now_ms=now_ms(self._clock))).notices)

    def today(self, tz: str) -> date:
        return local(now_ms(self._clock), tz).date()

    async def itinerary(self, user_id: int, tz: str, span: DayRange, *, private: bool, owner: bool = True,
                        flash: Flash | None = None, share_notes: bool = False) -> Itinerary:
        """The view of [span): every occurrence in it (the service's one expansion, as chat and the API list);
        its owner's page also lists overdue and undated tasks and the in-app queue (read only: a GET changes
        nothing); a public share, or anyone else reading a forwarded page, sees the days only, as a plan."""
        stamp = now_ms(self._clock)
        start_ms, end_ms = midnight_ms(span.start_on, tz), midnight_ms(span.end_on, tz)
        listed = await self._service.list_window(user_id, start_ms=start_ms, end_ms=end_ms, first=MAX_ENTRIES + 1,
                                                 statuses=("active", "completed"), expand=True)
        items = listed.items[:MAX_ENTRIES]
        overdue: list[Item] = []
        undated: list[Item] = []
        notices: tuple[Notice, ...] = ()
        undelivered: frozenset[int] = frozenset()
        overdue_count = 0
        if private and owner:  # anyone else reading a forwarded page sees the plan, as on a share
            if span.start_on <= self.today(tz) < span.end_on:
                overdue_count, overdue = await self._service.overdue_tasks(user_id, before_ms=start_ms,
                                                                           limit=MAX_OVERDUE)  # the latest first
            loose = await self._service.list_items(user_id, start_ms=0, end_ms=1, kind="task",
                                                   include_undated_tasks=True)
            undated = [i for i in loose if i.anchor_at is None]
            shown = await peek_notices(self._sessions, user_id)
            notices, undelivered = shown.notices, shown.reminder_ids
        build = partial(build_itinerary, items, now_ms=stamp, tz=tz, start_on=span.start_on, end_on=span.end_on,
                        overdue=overdue, undated=undated, notices=notices, undelivered=undelivered,
                        overdue_count=overdue_count, shared=not (private and owner), flash=flash,
                        truncated=not listed.complete or len(listed.items) > MAX_ENTRIES, share_notes=share_notes)
        # a long page is built on a worker thread, so the event loop goes on serving other users meanwhile
        return await asyncio.to_thread(build) if len(items) > INLINE_CARDS else build()

    async def feed_items(self, user_id: int) -> list[Item]:
        """Everything a subscribed calendar should hold: open and done items, series whole."""
        horizon = now_ms(self._clock) - FEED_HISTORY_MS
        items = await self._service.list_items(user_id, statuses=("active", "completed"), include_undated_tasks=True,
                                               as_stored=True)
        return [i for i in items
                if i.recurrence is not None or i.anchor_at is None or (i.end_at or i.anchor_at) >= horizon]
