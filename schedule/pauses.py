"""Channel pauses shared through the database: when the platform says a rate limit (WeChat 45011), the
day's quota (45009) or a configuration incident (IP not whitelisted, bad AppID/secret, bad template),
every worker stops calling that channel, not only the one that was told.

A rate-limit or configuration pause holds the channel's rows back until it ends (rows held spend no
attempts). A daily pause lasts until the platform's next day (WeChat counts quotas by Beijing time),
and a bad template's pause lasts its while; meanwhile the channel's rows go on down the ladder
(`ladder`): a reminder delivered tomorrow is no reminder.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.channel import DeliveryFailure
from schedule.model import ChannelPauseRow

QUOTA_DAY_TZ = ZoneInfo("Asia/Shanghai")  # WeChat's quotas reset at midnight Beijing time
MIN_RATE_PAUSE_MS = 60_000


@dataclass(frozen=True, slots=True)
class Pause:
    channel: str
    until: int
    daily: bool
    code: str | None

    @property
    def ladder(self) -> bool:
        """Rows go on down the ladder meanwhile (else they wait for the pause to end)."""
        return self.daily

    def failure(self, now: int) -> DeliveryFailure:
        """What a send on this channel meets while the pause lasts (no platform call is made)."""
        what = "rows go down the ladder" if self.daily else "rows wait"
        return DeliveryFailure("rate_limit", f"channel paused for every worker: {what}", code=self.code,
                               retry_after_s=None if self.daily else max(0, self.until - now) / 1000,
                               until_tomorrow=self.daily)


def pause_for(channel: str, failure: DeliveryFailure, now: int) -> Pause | None:
    """The pause a failure calls for, or None (only rate-limit and configuration failures pause a channel)."""
    if failure.failure == "config":
        wait = max(MIN_RATE_PAUSE_MS, int((failure.retry_after_s or 0) * 1000))
        return Pause(channel, now + wait, failure.ladder, failure.code)
    if failure.failure != "rate_limit":
        return None
    if failure.until_tomorrow:
        local = datetime.fromtimestamp(now / 1000, QUOTA_DAY_TZ)
        midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), QUOTA_DAY_TZ)
        return Pause(channel, int(midnight.timestamp() * 1000), True, failure.code)
    wait = max(MIN_RATE_PAUSE_MS, int((failure.retry_after_s or 0) * 1000))
    return Pause(channel, now + wait, False, failure.code)


async def active(session: AsyncSession, now: int) -> dict[str, Pause]:
    rows = (await session.execute(select(ChannelPauseRow).where(ChannelPauseRow.paused_until > now))).scalars()
    return {r.channel: Pause(r.channel, r.paused_until, r.daily, r.code) for r in rows}


async def record(session: AsyncSession, pauses: list[Pause], now: int) -> None:
    """Store pauses (a longer one already stored wins). Two workers may insert the same channel at once:
    run it in a transaction of its own and retry once on the key conflict (never inside a receipt's)."""
    for pause in sorted(pauses, key=lambda p: p.channel):
        row = await session.get(ChannelPauseRow, pause.channel, with_for_update=True)
        if row is None:
            session.add(ChannelPauseRow(channel=pause.channel, paused_until=pause.until, daily=pause.daily,
                                        code=pause.code, updated_at=now))
        elif row.paused_until <= now or pause.until > row.paused_until:
            row.paused_until, row.daily, row.code, row.updated_at = pause.until, pause.daily, pause.code, now
    await session.flush()
