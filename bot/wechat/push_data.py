"""What the template and subscription rungs fill from a push: `thing1` (what), `time2` (when, always a date and
a 24-hour time as WeChat's `time` keyword wants it) and the page a tap opens (the user's itinerary page).

Filled at send time: a push held back by a pause or a retry still names its own time, never an empty one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from render.push import push_title, wechat_time
from schedule.channel import Outgoing
from schedule.clock import to_ms

log = logging.getLogger(__name__)
DEFAULT_TZ = "Asia/Shanghai"  # rows queued before pushes carried their timezone

PageLink = Callable[[Outgoing], Awaitable[str | None]]


class Links(Protocol):
    async def itinerary_url(self, user_id: int, *, start_ms: int | None = None, end_ms: int | None = None,
                            tz: str | None = None) -> str: ...


def fields(message: Outgoing, *, now_ms: int) -> dict[str, Any]:
    """thing1 and time2: a reminder's item and its due instant (an all-day item: its day at 00:00); a digest
    or a scheduled answer, what it is and when it is sent (or was due); a task without a time, the send time."""
    payload = message.payload
    tz = str(payload.get("tz") or DEFAULT_TZ)
    due = payload.get("due_at")
    count = payload.get("count") if message.kind == "digest" else None
    when = wechat_time(due if isinstance(due, int) else now_ms, tz, all_day=bool(payload.get("all_day")))
    title = push_title(str(payload.get("title") or message.text), count if isinstance(count, int) else None)
    return {"thing1": {"value": title}, "time2": {"value": when}}


def page_link(links: Links) -> PageLink:
    """The user's itinerary page (a digest's: its day), or None when no link can be made now (the push
    goes without one)."""

    async def link(message: Outgoing) -> str | None:
        day, tz = message.payload.get("day"), str(message.payload.get("tz") or DEFAULT_TZ)
        try:
            if message.kind == "digest" and isinstance(day, str):
                start, end = _day_range(date.fromisoformat(day), tz)
                return await links.itinerary_url(message.user_id, start_ms=start, end_ms=end, tz=tz)
            return await links.itinerary_url(message.user_id)
        except Exception as exc:  # a link is a convenience: the push goes out without one
            log.warning("no page link for outbox %s (%s)", message.outbox_id, type(exc).__name__)
            return None

    return link


def _day_range(day: date, tz: str) -> tuple[int, int]:
    zone = ZoneInfo(tz)
    start = datetime.combine(day, datetime.min.time(), zone)
    return to_ms(start), to_ms(datetime.combine(day + timedelta(days=1), datetime.min.time(), zone))
