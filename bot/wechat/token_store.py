"""Short-lived WeChat credentials (the access token, the JS-SDK `jsapi_ticket`) shared by every process through
the access_tokens table, refreshed under a lease: `LeasedValue` is the one refresh loop, a store keeps the value.

One process wins the lease (a conditional UPDATE) and fetches; the others poll the row
until the new value appears, so N processes starting cold make one request. A second
row (`<name>:force`) spaces forced refreshes out: WeChat allows only 20 a day. Commands that run without a
database (`schedbot wechat`, `doctor`) keep theirs in `ProcessStore`, for the process alone.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.wechat.errors import WeChatTransportError
from schedule.clock import Clock, now_ms
from schedule.db import rowcount
from schedule.model import AccessTokenRow


@dataclass(frozen=True)
class CachedToken:
    token: str
    usable_until_ms: int  # the stored expiry already has the early-refresh margin taken off


def usable_until(fetched_at_ms: int, expires_in_s: int, margin_s: int = 300) -> int:
    """Stop using a token `margin_s` before WeChat expires it (at most half its lifetime early)."""
    margin = min(margin_s, max(expires_in_s, 0) // 2)
    return fetched_at_ms + (expires_in_s - margin) * 1000


class LeaseStore(Protocol):
    """Where a credential lives between fetches, and who may fetch it now."""

    async def read(self) -> CachedToken | None: ...

    async def acquire(self, stale: str | None) -> str | None: ...

    async def publish(self, lease: str, token: str, usable_until_ms: int) -> None: ...

    async def release(self, lease: str) -> None: ...

    async def claim_forced_refresh(self) -> bool: ...


class TokenStore:
    """The access_tokens row `name`, shared by every process on the database."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, name: str,
                 *, lease_ms: int = 15_000) -> None:
        self._sessions = sessions
        self._clock = clock
        self.name = name
        self._lease_ms = lease_ms
        self._row_ready = False

    async def read(self) -> CachedToken | None:
        """The stored token if it is still usable."""
        async with self._sessions() as session:
            row = (await session.execute(
                select(AccessTokenRow.token, AccessTokenRow.expires_at).where(AccessTokenRow.name == self.name)
            )).first()
        if row is None or not row.token or row.expires_at <= now_ms(self._clock):
            return None
        return CachedToken(row.token, row.expires_at)

    async def _ensure_row(self, name: str | None = None) -> None:
        if name is None and self._row_ready:
            return
        try:
            async with self._sessions.begin() as session:
                session.add(AccessTokenRow(name=name or self.name, token=None, expires_at=0, lease_until=0))
        except IntegrityError:
            pass  # another process created it first
        if name is None:
            self._row_ready = True

    async def claim_forced_refresh(self, *, every_ms: int = 60_000) -> bool:
        """True for at most one caller per `every_ms`, across processes: a persistent 40001 must not
        spend the day's 20 forced refreshes one failing row after another."""
        name = f"{self.name}:force"
        now = now_ms(self._clock)
        for attempt in range(2):
            async with self._sessions.begin() as session:
                result = await session.execute(
                    update(AccessTokenRow).where(AccessTokenRow.name == name, AccessTokenRow.lease_until <= now)
                    .values(lease_until=now + every_ms))
            if rowcount(result) == 1:
                return True
            if attempt == 0:
                await self._ensure_row(name)  # first forced refresh ever: create the row, then claim it
        return False

    async def acquire(self, stale: str | None) -> str | None:
        """Take the refresh lease when the token is missing, expired or equal to `stale`; else None."""
        await self._ensure_row()
        now = now_ms(self._clock)
        lease = str(uuid.uuid4())
        conditions = [AccessTokenRow.token.is_(None), AccessTokenRow.expires_at <= now]
        if stale is not None:
            conditions.append(AccessTokenRow.token == stale)
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(AccessTokenRow)
                .where(AccessTokenRow.name == self.name, AccessTokenRow.lease_until <= now, or_(*conditions))
                .values(lease_until=now + self._lease_ms, lease_token=lease)
            )
        return lease if rowcount(result) == 1 else None

    async def publish(self, lease: str, token: str, usable_until_ms: int) -> None:
        """Store the fetched token and end the lease (only under our own lease token)."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(AccessTokenRow)
                .where(AccessTokenRow.name == self.name, AccessTokenRow.lease_token == lease)
                .values(token=token, expires_at=usable_until_ms, lease_until=0, lease_token=None)
            )

    async def release(self, lease: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(AccessTokenRow)
                .where(AccessTokenRow.name == self.name, AccessTokenRow.lease_token == lease)
                .values(lease_until=0, lease_token=None)
            )


class ProcessStore:
    """A credential kept for this process alone: the interactive commands, which need no database.

    It never claims a forced refresh: a forced stable_token invalidates the token the running bot uses, and
    a command is not worth that (a plain stable_token hands back the token WeChat holds now)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._value: CachedToken | None = None
        self._lease: str | None = None

    async def read(self) -> CachedToken | None:
        value = self._value
        return value if value is not None and value.usable_until_ms > now_ms(self._clock) else None

    async def acquire(self, stale: str | None) -> str | None:
        current = await self.read()
        if self._lease is not None or (current is not None and current.token != stale):
            return None  # being fetched, or still good
        self._lease = str(uuid.uuid4())
        return self._lease

    async def publish(self, lease: str, token: str, usable_until_ms: int) -> None:
        if lease == self._lease:
            self._value, self._lease = CachedToken(token, usable_until_ms), None

    async def release(self, lease: str) -> None:
        if lease == self._lease:
            self._lease = None

    async def claim_forced_refresh(self) -> bool:
        return False


# Fetches a new value (and its lifetime in seconds); the argument is the value WeChat just refused, if any.
Fetch = Callable[[str | None], Awaitable[tuple[str, int]]]


class LeasedValue:
    """One credential, fetched by one caller at a time across processes and reused until shortly before it
    expires: callers in this process wait on a lock, other processes on the store's lease."""

    def __init__(self, store: LeaseStore, clock: Clock, *, what: str, poll_s: float = 0.05,
                 wait_polls: int = 200) -> None:
        self.store = store
        self._clock = clock
        self._what = what  # names the value in the one error that is ours: "the access token"
        self._poll_s, self._wait_polls = poll_s, wait_polls
        self._memory: CachedToken | None = None
        self._lock = asyncio.Lock()

    def _fresh(self, cached: CachedToken | None, stale: str | None) -> bool:
        return cached is not None and cached.token != stale and cached.usable_until_ms > now_ms(self._clock)

    async def get(self, fetch: Fetch, *, stale: str | None = None) -> str:
        """A usable value; `stale` names one WeChat just refused (the next fetch goes past it)."""
        if self._fresh(self._memory, stale):
            assert self._memory is not None
            return self._memory.token
        async with self._lock:  # one fetch per process; other processes wait on the store's lease
            for _ in range(self._wait_polls):
                if self._fresh(self._memory, stale):
                    assert self._memory is not None
                    return self._memory.token
                stored = await self.store.read()
                if stored is not None and self._fresh(stored, stale):
                    self._memory = stored
                    return stored.token
                lease = await self.store.acquire(stale)
                if lease is not None:
                    return await self._fetch(fetch, lease, stale)
                await asyncio.sleep(self._poll_s)
        raise WeChatTransportError(f"timed out waiting for another process to fetch {self._what}")

    async def _fetch(self, fetch: Fetch, lease: str, stale: str | None) -> str:
        try:
            value, expires_in = await fetch(stale)
        except BaseException:
            await self.store.release(lease)
            raise
        cached = CachedToken(value, usable_until(now_ms(self._clock), expires_in))
        await self.store.publish(lease, cached.token, cached.usable_until_ms)
        self._memory = cached
        return value
