"""The access token shared by every process through the access_tokens table, refreshed under a lease.

One process wins the lease (a conditional UPDATE) and fetches; the others poll the row
until the new token appears, so N processes starting cold make one token request. A second
row (`<name>:force`) spaces forced refreshes out: WeChat allows only 20 a day.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

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


class TokenStore:
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
