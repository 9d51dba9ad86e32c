"""Page links: signed URLs for the private page, public share links (revocable) and the calendar feed.

The signing secret is SECRET_KEY, or — when unset — one generated once and kept in the database
(`app_secrets`), so every process signs and checks with the same key without any set-up.

Private-page and feed links carry the user's link epoch (`users.link_epoch`, in the token's nonce field),
checked against the database on every resolve: bumping it (`reset_links`, 重置链接; `user forget` and
unfollowing) makes every such link issued before answer 410. Share links are rows, revoked one by one.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import date, timedelta
from urllib.parse import urlencode, urlsplit

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pages import tokens
from bot.pages.tokens import Claims, LinkError
from bot.settings import Settings
from render.timefmt import local
from schedule import feed
from schedule.clock import Clock, now_ms
from schedule.db import rowcount
from schedule.model import AppSecretRow, CalendarFeedRow, PageShareRow, UserRow

log = logging.getLogger("schedbot.pages")
DAY_MS = 86_400_000
PAGE_TTL_MS = 7 * DAY_MS
SHARE_TTL_MS = 30 * DAY_MS
FEED_NO_END_MS = 0xFFFF_FFFF * 1000  # what a feed link carries as its expiry: none (tokens.LASTING)
CSRF_MAX_AGE_MS = DAY_MS
SECRET_NAME = "secret_key"
EPOCH_CACHE_MS = 60_000  # how long a link made without the database may use an epoch read before
EPOCH_CACHE_SIZE = 10_000


class PageLinks:
    """Issues and checks page tokens for one site (PUBLIC_BASE_URL)."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._settings, self._sessions, self._clock = settings, sessions, clock
        self.base_url = settings.PUBLIC_BASE_URL.rstrip("/")
        self.uid_domain = urlsplit(self.base_url).hostname or "schedbot"
        self._keys: tuple[bytes, bytes] | None = None
        self._session_key = b""  # signs the visitor's session cookie (bot.pages.visitor)
        self._lock = asyncio.Lock()
        self._epochs: dict[int, tuple[int, int]] = {}  # user id → (link epoch, when read): for links made now

    # ------------------------------------------------------------ link API for the bot
    async def itinerary_url(self, user_id: int, *, start_ms: int | None = None, end_ms: int | None = None,
                            tz: str | None = None) -> str:
        """The owner's private page, optionally for [start_ms, end_ms) (shown as whole local days in `tz`, the
        user's timezone, read from the database when not given)."""
        epoch = await self._epoch(user_id)
        token = await self._sign(Claims("p", user_id, self._expiry(PAGE_TTL_MS), _nonce(epoch)))
        if (start_ms is not None or end_ms is not None) and tz is None:
            tz = await self._timezone(user_id)
        return f"{self.base_url}/p/{token}{_range_query(start_ms, end_ms, tz)}"

    def itinerary_url_now(self, user_id: int, *, start_ms: int | None, end_ms: int | None, tz: str) -> str | None:
        """`itinerary_url` when making it needs no database (the signing keys are loaded already), else None:
        a chat message can then put the link in its answer inside its own transaction."""
        cached = self._epochs.get(user_id)
        if self._keys is None or cached is None or now_ms(self._clock) - cached[1] > EPOCH_CACHE_MS:
            return None
        token = tokens.sign(self._keys[0], Claims("p", user_id, self._expiry(PAGE_TTL_MS), _nonce(cached[0])))
        return f"{self.base_url}/p/{token}{_range_query(start_ms, end_ms, tz)}"

    async def share_url(self, user_id: int, *, notes: bool = False) -> str:
        """The live public share link, created when there is none. A share shows the plan only; with `notes`
        (the owner chose so) it shows the items' notes too, which its nonce says (signed, so unforgeable)."""
        stamp = now_ms(self._clock)
        async with self._sessions.begin() as session:
            row = await _live_share(session, user_id, stamp, notes=notes)
            if row is None:
                row = PageShareRow(user_id=user_id, nonce=_share_nonce(notes), created_at=stamp,
                                   expires_at=stamp + SHARE_TTL_MS)
                session.add(row)
                await session.flush()
            claims = Claims("s", user_id, row.expires_at, row.nonce)
        return f"{self.base_url}/p/{await self._sign(claims)}"

    async def revoke_share(self, user_id: int) -> bool:
        """Revoke every live share link of the user; False when there was none."""
        stamp = now_ms(self._clock)
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(PageShareRow)
                .where(PageShareRow.user_id == user_id, PageShareRow.revoked_at.is_(None),
                       PageShareRow.expires_at > stamp)
                .values(revoked_at=stamp))
            return bool(rowcount(result))

    async def feed_url(self, user_id: int) -> str:
        """The calendar feed. It has no end date: a subscribed calendar goes on updating for as long as the user
        follows the account, and the URL stays the same. The token carries the link epoch and the user's feed
        generation: 重置链接, unfollowing, `user forget` or "关闭日历订阅" (`revoke_feed`) moves one on and older
        links answer 410."""
        nonce = f"{_nonce(await self._epoch(user_id))}-{await self._feed_generation(user_id)}"
        claims = Claims("c", user_id, FEED_NO_END_MS, nonce)
        return f"{self.base_url}/ics/{await self._sign(claims)}.ics"

    async def reset_links(self, user_id: int) -> bool:
        """Revoke every page, feed and share link of the user (重置链接): the next ones are new. False when
        there is no such user."""
        stamp = now_ms(self._clock)
        async with self._sessions.begin() as session:
            bumped = await session.execute(update(UserRow).where(UserRow.id == user_id)
                                           .values(link_epoch=UserRow.link_epoch + 1))
            await session.execute(update(PageShareRow)
                                  .where(PageShareRow.user_id == user_id, PageShareRow.revoked_at.is_(None))
                                  .values(revoked_at=stamp))
        self._epochs.pop(user_id, None)
        return bool(rowcount(bumped))

    async def revoke_feed(self, user_id: int) -> bool:
        """关闭日历订阅: every feed link issued so far stops working (410); a new one can be asked for."""
        async with self._sessions.begin() as session:
            await feed.revoke(session, user_id, now_ms=now_ms(self._clock))
        return True

    # ------------------------------------------------------------ checks for the routes
    async def resolve(self, token: str, *, scopes: frozenset[str]) -> Claims:
        """Claims of a live token, or LinkError (404 forged/wrong scope, 410 expired/revoked)."""
        key, _ = await self._load_keys()
        stamp = now_ms(self._clock)
        claims = tokens.verify(key, token, scopes=scopes, now_ms=stamp)
        if claims.scope == "s":
            async with self._sessions.begin() as session:
                row = await session.scalar(select(PageShareRow).where(PageShareRow.nonce == claims.nonce))
            if row is None:  # signed by us, so it existed: deleted when the user was forgotten
                raise LinkError(410, "forgotten")
            if row.user_id != claims.user_id:
                raise LinkError(404, "unknown share")
            if row.revoked_at is not None or row.expires_at <= stamp:
                raise LinkError(410, "revoked")
            return claims
        if claims.scope == "c":  # a phone polls the feed: its two generations in one read
            epoch, generation = await self._feed_epochs(claims.user_id)
        else:
            epoch, generation = await self._epoch(claims.user_id), None
        if epoch is None:
            raise LinkError(404, "unknown user")
        link_part, _, feed_part = claims.nonce.partition("-")
        if link_part != _nonce(epoch):
            raise LinkError(410, "revoked")
        if claims.scope == "c" and (feed_part or "0") != str(generation):
            raise LinkError(410, "feed revoked")  # 关闭日历订阅
        return claims

    async def csrf_for(self, page_token: str) -> str:
        _, key = await self._load_keys()
        return tokens.csrf_token(key, page_token, now_ms(self._clock))

    async def csrf_ok(self, page_token: str, value: str) -> bool:
        _, key = await self._load_keys()
        return tokens.csrf_ok(key, page_token, value, now_ms=now_ms(self._clock), max_age_ms=CSRF_MAX_AGE_MS)

    def page_path(self, token: str, start_on: date | None = None, end_on: date | None = None) -> str:
        """/p/{token} with an optional ?from=&to= (inclusive local dates)."""
        if start_on is None or end_on is None:
            return f"/p/{token}"
        return f"/p/{token}?" + urlencode({"from": start_on.isoformat(),
                                            "to": (end_on - timedelta(days=1)).isoformat()})

    # ------------------------------------------------------------ internals
    def _expiry(self, ttl_ms: int) -> int:
        return now_ms(self._clock) + ttl_ms

    async def _sign(self, claims: Claims) -> str:
        key, _ = await self._load_keys()
        return tokens.sign(key, claims)

    async def _epoch(self, user_id: int) -> int | None:
        """The user's link epoch read now (None: no such user), remembered for `itinerary_url_now`."""
        async with self._sessions.begin() as session:
            epoch = await session.scalar(select(UserRow.link_epoch).where(UserRow.id == user_id))
        if epoch is not None:
            if len(self._epochs) >= EPOCH_CACHE_SIZE:
                self._epochs.clear()
            self._epochs[user_id] = (epoch, now_ms(self._clock))
        return epoch

    async def _feed_epochs(self, user_id: int) -> tuple[int | None, int]:
        """The user's link epoch (None: no such user) and feed generation, read together."""
        async with self._sessions.begin() as session:
            row = (await session.execute(
                select(UserRow.link_epoch, CalendarFeedRow.epoch)
                .outerjoin(CalendarFeedRow, CalendarFeedRow.user_id == UserRow.id)
                .where(UserRow.id == user_id))).first()
        return (None, 0) if row is None else (row[0], int(row[1] or 0))

    async def _feed_generation(self, user_id: int) -> int:
        """How many times the user closed the calendar subscription (关闭日历订阅); feed links carry it."""
        async with self._sessions.begin() as session:
            epoch = await session.scalar(select(CalendarFeedRow.epoch).where(CalendarFeedRow.user_id == user_id))
        return int(epoch or 0)

    async def _timezone(self, user_id: int) -> str:
        async with self._sessions.begin() as session:
            tz = await session.scalar(select(UserRow.timezone).where(UserRow.id == user_id))
        return tz or self._settings.H5_DEFAULT_TIMEZONE

    async def _load_keys(self) -> tuple[bytes, bytes]:
        if self._keys is None:
            async with self._lock:
                if self._keys is None:
                    secret = self._settings.SECRET_KEY or await self._stored_secret()
                    raw = secret.encode("utf-8")
                    self._session_key = tokens.derive(raw, "page-session")
                    self._keys = (tokens.derive(raw, "page-token"), tokens.derive(raw, "csrf"))
        return self._keys

    async def session_key(self) -> bytes:
        """The key of the visitor's session cookie (its own purpose: no page token or CSRF MAC passes as one)."""
        await self._load_keys()
        return self._session_key

    async def _stored_secret(self) -> str:
        """The generated secret, created by whichever process asks first (others read that row)."""
        async with self._sessions.begin() as session:
            value = await session.scalar(select(AppSecretRow.value).where(AppSecretRow.name == SECRET_NAME))
        if value is not None:
            return value
        try:
            async with self._sessions.begin() as session:
                session.add(AppSecretRow(name=SECRET_NAME, value=secrets.token_urlsafe(48),
                                         created_at=now_ms(self._clock)))
            log.info("SECRET_KEY is not set: generated one and stored it in the database (table app_secrets)")
        except IntegrityError:
            pass  # another process stored it first
        async with self._sessions.begin() as session:
            stored = await session.scalar(select(AppSecretRow.value).where(AppSecretRow.name == SECRET_NAME))
        if stored is None:  # pragma: no cover - the insert or the unique key said it exists
            raise RuntimeError("could not store the generated SECRET_KEY")
        return stored


async def _live_share(session: AsyncSession, user_id: int, stamp: int, *, notes: bool = False) -> PageShareRow | None:
    rows = await session.scalars(
        select(PageShareRow)
        .where(PageShareRow.user_id == user_id, PageShareRow.revoked_at.is_(None), PageShareRow.expires_at > stamp)
        .order_by(PageShareRow.id.desc())
        .limit(10))
    return next((row for row in rows if shares_notes(row.nonce) == notes), None)


NOTES_SHARE = "n_"  # the nonce of a share that shows notes starts so; no other share's does


def shares_notes(nonce: str) -> bool:
    return nonce.startswith(NOTES_SHARE)


def _share_nonce(notes: bool) -> str:
    while True:
        nonce = secrets.token_urlsafe(12)
        if notes:
            return NOTES_SHARE + nonce[:14]
        if not shares_notes(nonce):
            return nonce


def _nonce(epoch: int | None) -> str:
    """The link epoch as a token's nonce (epoch 0 is "0", what links carried before epochs existed)."""
    return f"{epoch or 0:x}"


def webcal(url: str) -> str:
    """webcal://…: a phone subscribes to the feed (kept in sync) instead of importing a copy once."""
    return "webcal://" + url.split("://", 1)[1] if "://" in url else url


def _range_query(start_ms: int | None, end_ms: int | None, tz: str | None) -> str:
    """`?from=…&to=…` of a page's range as the user's local days ("" for the default range)."""
    if start_ms is None and end_ms is None:
        return ""
    assert tz is not None
    params = {}
    if start_ms is not None:
        params["from"] = local(start_ms, tz).date().isoformat()
    if end_ms is not None:
        params["to"] = local(end_ms - 1, tz).date().isoformat()
    return "?" + urlencode(params)
