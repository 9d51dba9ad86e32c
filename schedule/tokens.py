"""Named REST API tokens: several per user (laptop, phone, script…), one per label, only hashes kept."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.db import rowcount
from schedule.errors import InvalidChange
from schedule.model import ApiTokenRow, UserRow
from schedule.users import find, get_or_create, hash_token, new_token

DEFAULT_LABEL = "default"
_LABEL = re.compile(r"^[\w.@-]{1,64}$")


@dataclass(frozen=True, slots=True)
class TokenInfo:
    label: str
    created_at: int
    last_used_at: int | None


def check_label(label: str) -> str:
    label = label.strip()
    if not _LABEL.match(label):
        raise InvalidChange("a token label is 1–64 letters, digits, '.', '_', '@' or '-'")
    return label


async def issue(session: AsyncSession, user_id: int, label: str, *, now_ms: int) -> tuple[str, bool]:
    """A fresh token under `label` (replacing that label's token: True when one was replaced)."""
    label = check_label(label)
    replaced = await session.execute(delete(ApiTokenRow).where(ApiTokenRow.user_id == user_id,
                                                               ApiTokenRow.label == label))
    token = new_token()
    session.add(ApiTokenRow(user_id=user_id, label=label, token_hash=hash_token(token), created_at=now_ms))
    await session.flush()
    return token, bool(rowcount(replaced))


async def listed(session: AsyncSession, user_id: int) -> list[TokenInfo]:
    rows = await session.scalars(select(ApiTokenRow).where(ApiTokenRow.user_id == user_id)
                                 .order_by(ApiTokenRow.created_at, ApiTokenRow.id))
    return [TokenInfo(r.label, r.created_at, r.last_used_at) for r in rows]


async def revoke(session: AsyncSession, user_id: int, label: str) -> bool:
    result = await session.execute(delete(ApiTokenRow).where(ApiTokenRow.user_id == user_id,
                                                             ApiTokenRow.label == label.strip()))
    return bool(rowcount(result))


async def owner(session: AsyncSession, token: str, *, now_ms: int) -> int | None:
    """The user id the token belongs to (recording its use, at most once a minute), or None."""
    row = await session.scalar(select(ApiTokenRow).where(ApiTokenRow.token_hash == hash_token(token)))
    if row is None:
        return None
    if row.last_used_at is None or now_ms - row.last_used_at >= 60_000:
        await session.execute(update(ApiTokenRow).where(ApiTokenRow.id == row.id).values(last_used_at=now_ms))
    return row.user_id


# By openid, for the operator's `user tokens` command: the user is looked up (or, to issue, created) in the
# same transaction.
async def issue_for(session: AsyncSession, openid: str, label: str, *, timezone: str,
                    now_ms: int) -> tuple[UserRow, str, bool]:
    row = await get_or_create(session, openid, timezone=timezone, now_ms=now_ms)
    token, replaced = await issue(session, row.id, label, now_ms=now_ms)
    return row, token, replaced


async def listed_for(session: AsyncSession, openid: str) -> list[TokenInfo]:
    row = await find(session, openid)
    return [] if row is None else await listed(session, row.id)


async def revoke_for(session: AsyncSession, openid: str, label: str) -> bool:
    row = await find(session, openid)
    return row is not None and await revoke(session, row.id, label)


async def user_for(session: AsyncSession, token: str, *, now_ms: int) -> UserRow | None:
    """The user the token belongs to (its use recorded), or None."""
    user_id = await owner(session, token, now_ms=now_ms)
    return await session.get(UserRow, user_id) if user_id is not None else None
