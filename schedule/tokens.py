"""Named REST API tokens: several per user (laptop, phone, script…), one per label, only hashes kept."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.errors import InvalidChange
from schedule.model import ApiTokenRow
from schedule.users import hash_token, new_token

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
    return token, bool(getattr(replaced, "rowcount", 0))


async def listed(session: AsyncSession, user_id: int) -> list[TokenInfo]:
    rows = await session.scalars(select(ApiTokenRow).where(ApiTokenRow.user_id == user_id)
                                 .order_by(ApiTokenRow.created_at, ApiTokenRow.id))
    return [TokenInfo(r.label, r.created_at, r.last_used_at) for r in rows]


async def revoke(session: AsyncSession, user_id: int, label: str) -> bool:
    result = await session.execute(delete(ApiTokenRow).where(ApiTokenRow.user_id == user_id,
                                                             ApiTokenRow.label == label.strip()))
    return bool(getattr(result, "rowcount", 0))


async def owner(session: AsyncSession, token: str, *, now_ms: int) -> int | None:
    """The user id the token belongs to (recording its use, at most once a minute), or None."""
    row = await session.scalar(select(ApiTokenRow).where(ApiTokenRow.token_hash == hash_token(token)))
    if row is None:
        return None
    if row.last_used_at is None or now_ms - row.last_used_at >= 60_000:
        await session.execute(update(ApiTokenRow).where(ApiTokenRow.id == row.id).values(last_used_at=now_ms))
    return row.user_id
