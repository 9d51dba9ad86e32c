"""The agent's short per-user conversation history, kept in `agent_messages` and trimmed on write."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule.clock import Clock, now_ms
from schedule.model import AgentMessageRow

MAX_CHARS = 2000  # one stored message; bounds the prompt whatever a user pastes


class AgentHistory:
    """The last `keep` messages (user and assistant turns) of each user."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *, keep: int = 10) -> None:
        self._sessions, self._clock, self._keep = sessions, clock, keep

    async def recent(self, user_id: int) -> list[dict[str, str]]:
        """Oldest first, as chat-completions messages."""
        if self._keep <= 0:
            return []
        async with self._sessions() as session:
            rows = (await session.scalars(
                select(AgentMessageRow).where(AgentMessageRow.user_id == user_id)
                .order_by(AgentMessageRow.id.desc()).limit(self._keep))).all()
        return [{"role": row.role, "content": row.content} for row in reversed(rows)
                if row.role in ("user", "assistant")]

    async def append(self, user_id: int, question: str, answer: str) -> None:
        """Store one exchange and drop what falls out of the window, in one transaction."""
        if self._keep <= 0:
            return
        stamp = now_ms(self._clock)
        async with self._sessions.begin() as session:
            session.add_all([
                AgentMessageRow(user_id=user_id, role="user", content=question[:MAX_CHARS], created_at=stamp),
                AgentMessageRow(user_id=user_id, role="assistant", content=answer[:MAX_CHARS], created_at=stamp),
            ])
            await session.flush()
            # ids first, then delete by id: MariaDB refuses LIMIT/OFFSET inside an IN subquery
            stale = (await session.scalars(
                select(AgentMessageRow.id).where(AgentMessageRow.user_id == user_id)
                .order_by(AgentMessageRow.id.desc()).offset(self._keep))).all()
            if stale:
                await session.execute(delete(AgentMessageRow).where(AgentMessageRow.id.in_(list(stale))))
