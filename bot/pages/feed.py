"""GET and HEAD /ics/{token}.ics: the calendar feed as phones poll it.

A poll that brings back the validators it was given (`If-None-Match`, or `If-Modified-Since` alone) is
answered 304 with no body, decided from one read of the feed's version (`schedule.feed`): the items are
neither loaded nor rendered. Otherwise the feed is rendered, gzip-compressed when the client takes it, and
carries its `ETag` (weak: the same for either encoding) and `Last-Modified`. The compressed body of each
user's latest version is kept in memory (up to CACHE_BYTES in all), so a client that polls without
validators costs a version read too, not a render. The feed may be kept by the
subscriber's own client but must be revalidated on every poll (`private, no-cache`); it is never stored by
a shared cache and never sent on as a referrer.
"""

from __future__ import annotations

import asyncio
import gzip
from collections import OrderedDict
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from functools import partial

from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pages.itinerary import FEED_HISTORY_MS, INLINE_CARDS, ItineraryLoader
from bot.pages.links import PageLinks
from render.ics import calendar_feed
from schedule import feed, holidays
from schedule.clock import Clock, now_ms
from schedule.domain import Item
from schedule.errors import NotFound

FEED = frozenset({"c"})
# Part of every version: a change of how the feed is written (this number moved on) makes every subscriber
# fetch it once in full, even though no row changed.
FORMAT = "ics-2"
GZIP_LEVEL = 6
GZIP_MIN_BYTES = 1024
CACHE_BYTES = 16 * 1024 * 1024  # compressed bodies kept (a 1,000-item feed is about 20 KB)
HEADERS = {
    "Cache-Control": "private, no-cache",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Robots-Tag": "noindex, nofollow",
    "Vary": "Accept-Encoding",
}
MEDIA_TYPE = "text/calendar; charset=utf-8"


class CalendarFeed:
    """The feed's answers; LinkError (404/410) and NotFound propagate to the route, which words them."""

    def __init__(self, *, links: PageLinks, loader: ItineraryLoader, sessions: async_sessionmaker[AsyncSession],
                 clock: Clock) -> None:
        self.links, self.loader, self.sessions, self.clock = links, loader, sessions, clock
        self._zipped: OrderedDict[int, tuple[str, bytes]] = OrderedDict()  # user id → (version, gzip body)
        self._zipped_bytes = 0

    async def answer(self, token: str, headers: Mapping[str, str]) -> Response:
        claims = await self.links.resolve(token, scopes=FEED)
        stamp = now_ms(self.clock)
        salt = f"{FORMAT}:{self.links.uid_domain}:{holidays.version()}"  # a loaded 调休 year moves every feed
        found = await feed.version(self.sessions, claims.user_id, salt=salt, horizon_ms=stamp - FEED_HISTORY_MS,
                                   now_ms=stamp)
        if found is None:
            raise NotFound(f"user {claims.user_id}")
        validators = {**HEADERS, "ETag": f'W/"{found.tag}"',
                      "Last-Modified": format_datetime(datetime.fromtimestamp(found.modified_at / 1000, UTC),
                                                       usegmt=True)}
        if not_modified(headers, tag=found.tag, modified_at=found.modified_at, now_ms=stamp):
            return Response(status_code=304, headers=validators)
        answer = {**validators, "Content-Disposition": 'inline; filename="schedbot.ics"'}
        zipped = accepts_gzip(headers.get("accept-encoding", ""))
        kept = self._zipped.get(claims.user_id)
        if zipped and kept is not None and kept[0] == found.tag:
            self._zipped.move_to_end(claims.user_id)
            return Response(kept[1], media_type=MEDIA_TYPE, headers={**answer, "Content-Encoding": "gzip"})
        # the version was read first: a change made meanwhile is in the body, and the next poll fetches it again
        items = await self.loader.feed_items(claims.user_id)
        write = partial(_written, items, uid_domain=self.links.uid_domain, tz=found.timezone, zipped=zipped)
        # a long feed is written on a worker thread, so the event loop goes on serving other users meanwhile
        body, compressed = await asyncio.to_thread(write) if len(items) > INLINE_CARDS else write()
        if compressed:
            answer["Content-Encoding"] = "gzip"
            self._keep(claims.user_id, found.tag, body)
        return Response(body, media_type=MEDIA_TYPE, headers=answer)

    def _keep(self, user_id: int, tag: str, body: bytes) -> None:
        """Remember the user's latest compressed body; the least recently served go first past CACHE_BYTES."""
        old = self._zipped.pop(user_id, None)
        self._zipped_bytes -= len(old[1]) if old is not None else 0
        if len(body) > CACHE_BYTES:
            return
        self._zipped[user_id] = (tag, body)
        self._zipped_bytes += len(body)
        while self._zipped_bytes > CACHE_BYTES:
            _, (_, dropped) = self._zipped.popitem(last=False)
            self._zipped_bytes -= len(dropped)


def _written(items: list[Item], *, uid_domain: str, tz: str, zipped: bool) -> tuple[bytes, bool]:
    """The feed's body, and whether it is gzip-compressed (when taken and worth it)."""
    body = calendar_feed(items, uid_domain=uid_domain, tz=tz)
    if zipped and len(body) >= GZIP_MIN_BYTES:
        return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0), True
    return body, False


def not_modified(headers: Mapping[str, str], *, tag: str, modified_at: int, now_ms: int) -> bool:
    """Whether the client's copy is current: If-None-Match decides when sent (weak comparison, `*` matches),
    else If-Modified-Since (a date that cannot be read, or a future one we never gave out, is ignored)."""
    wanted = headers.get("if-none-match")
    if wanted is not None:
        return any(given.strip() in ("*", f'W/"{tag}"', f'"{tag}"') for given in wanted.split(","))
    since = headers.get("if-modified-since")
    if not since:
        return False
    try:
        moment = parsedate_to_datetime(since)
    except (TypeError, ValueError, IndexError):
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = int(moment.timestamp())
    if seconds * 1000 > max(now_ms, modified_at):  # later than now and than any date given out: not ours
        return False
    return modified_at // 1000 <= seconds


def accepts_gzip(value: str) -> bool:
    """`Accept-Encoding` takes gzip: named (or x-gzip) with a non-zero q, or not named and `*` is taken."""
    qualities: dict[str, float] = {}
    for part in value.lower().split(","):
        name, _, params = part.partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, raw = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(raw)
                except ValueError:
                    quality = 0.0
        qualities[name.strip()] = quality
    for name in ("gzip", "x-gzip"):
        if name in qualities:
            return qualities[name] > 0
    return qualities.get("*", 0.0) > 0
