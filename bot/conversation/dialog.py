"""The pending question per user (`dialog_states`): saved with an expiry, read back while fresh."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversation.context import Ask
from intent.model import Intent
from schedule.model import DialogStateRow


@dataclass(frozen=True)
class Pending:
    intent: Intent
    candidates: tuple[int, ...]


async def load(session: AsyncSession, user_id: int, *, now_ms: int) -> Pending | None:
    """The user's open question, or None when there is none, it expired or it no longer parses."""
    row = await session.get(DialogStateRow, user_id)
    if row is None or row.expires_at <= now_ms:
        return None
    data: dict[str, Any] = row.pending_intent or {}
    try:
        intent = Intent.model_validate(data.get("intent") or {})
    except ValueError:  # written by an older version: drop it rather than fail the message
        return None
    return Pending(intent, tuple(int(i) for i in data.get("candidates") or ()))


async def save(session: AsyncSession, user_id: int, ask: Ask, *, expires_at_ms: int) -> None:
    payload = {"intent": ask.intent.model_dump(mode="json"), "candidates": list(ask.candidates)}
    row = await session.get(DialogStateRow, user_id)
    if row is None:
        session.add(DialogStateRow(user_id=user_id, pending_intent=payload, expires_at=expires_at_ms))
    else:
        row.pending_intent, row.expires_at = payload, expires_at_ms


async def clear(session: AsyncSession, user_id: int) -> None:
    await session.execute(delete(DialogStateRow).where(DialogStateRow.user_id == user_id))

