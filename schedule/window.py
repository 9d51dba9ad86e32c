"""The customer-service message window: 5 sends within 48 h of a user message, 3 within 1 min of a
click, follow or scan. Pure state functions plus a small update of the user's row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy import BigInteger, BindParameter, and_, bindparam, case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from schedule.fastsql import Executor, Fast
from schedule.model import UserRow

WindowKind = Literal["message", "click"]
RULES: dict[str, tuple[int, int]] = {  # kind → (quota, duration ms)
    "message": (5, 48 * 3600 * 1000),
    "click": (3, 60 * 1000),
}
CLOSED_COUNT = max(quota for quota, _ in RULES.values())  # a sent count that leaves no slot in any window


@dataclass(frozen=True)
class WindowState:
    kind: str | None = None
    opened_at: int | None = None
    sent_count: int = 0

    def expires_at(self) -> int | None:
        if self.kind not in RULES or self.opened_at is None:
            return None
        return self.opened_at + RULES[self.kind][1]


def remaining(state: WindowState, now_ms: int) -> int:
    """Customer-service messages still allowed at `now_ms` (0 when the window is closed)."""
    expires = state.expires_at()
    if expires is None or state.kind is None or now_ms >= expires or now_ms < (state.opened_at or 0):
        return 0
    return max(RULES[state.kind][0] - state.sent_count, 0)


def is_open(state: WindowState, now_ms: int) -> bool:
    return remaining(state, now_ms) > 0


def after_interaction(state: WindowState, kind: WindowKind, at_ms: int) -> WindowState:
    """The window after a user interaction at `at_ms`: keep whichever window allows more sends."""
    fresh = WindowState(kind=kind, opened_at=at_ms, sent_count=0)
    if state.kind == kind and state.opened_at is not None and at_ms <= state.opened_at:
        return state  # an older interaction handled late never replaces a newer one
    at = max(at_ms, state.opened_at or 0)
    keep, new = remaining(state, at), remaining(fresh, at)
    if keep > new or (keep == new and (state.expires_at() or 0) > (fresh.expires_at() or 0)):
        return state
    return fresh


def after_send(state: WindowState, count: int = 1) -> WindowState:
    """`count` messages sent (each part of a split text is one to WeChat)."""
    return WindowState(kind=state.kind, opened_at=state.opened_at, sent_count=state.sent_count + count)


def state_of(user: UserRow) -> WindowState:
    return WindowState(kind=user.window_kind, opened_at=user.window_opened_at, sent_count=user.window_sent_count or 0)


def _store(user: UserRow, state: WindowState) -> None:
    user.window_kind, user.window_opened_at, user.window_sent_count = state.kind, state.opened_at, state.sent_count


async def _locked_user(session: AsyncSession, user_id: int) -> UserRow | None:
    return await session.scalar(select(UserRow).where(UserRow.id == user_id).with_for_update())


async def record_interaction(session: AsyncSession, user_id: int, kind: WindowKind, at_ms: int) -> WindowState | None:
    """Update the user's window (and last_user_message_at for messages) in the caller's transaction."""
    user = await _locked_user(session, user_id)
    if user is None:
        return None
    state = after_interaction(state_of(user), kind, at_ms)
    _store(user, state)
    if kind == "message":
        user.last_user_message_at = max(user.last_user_message_at or 0, at_ms)
    return state


# Built once: the webhook runs this per message. One UPDATE of the user's row: reachable again, the
# latest message time, and a fresh 5/48 h window unless a newer message window is already open (`_NEWER`).
# MariaDB evaluates SET assignments left to right, each seeing the columns already assigned, so every
# CASE reads only columns assigned after it; window_kind comes last and is "message" either way.
_AT: BindParameter[int] = bindparam("p_at", type_=BigInteger)
_NEWER = and_(func.coalesce(UserRow.window_kind, "") == "message", func.coalesce(UserRow.window_opened_at, 0) >= _AT)
_RECORD_MESSAGE = Fast(
    update(UserRow)
    .where(UserRow.id == bindparam("p_uid", type_=BigInteger))
    .ordered_values(
        (UserRow.subscribed, True),
        (UserRow.last_user_message_at, case((func.coalesce(UserRow.last_user_message_at, 0) >= _AT,
                                             UserRow.last_user_message_at), else_=_AT)),
        (UserRow.window_sent_count, case((_NEWER, UserRow.window_sent_count), else_=0)),
        (UserRow.window_opened_at, case((_NEWER, UserRow.window_opened_at), else_=_AT)),
        (UserRow.window_kind, "message"),
    )
)


async def record_message(session: Executor, user_id: int, at_ms: int) -> None:
    """The user wrote at `at_ms`: `record_interaction(…, "message", at_ms)` plus reachable again (a
    43004/43019 had marked them unreachable), as one UPDATE by primary key in the caller's transaction."""
    await _RECORD_MESSAGE.defer(session, {"p_at": at_ms, "p_uid": user_id})


async def close(session: AsyncSession, user_ids: list[int]) -> None:
    """WeChat said the window is closed or used up (45015/45047): believe it, so the user's other queued rows
    skip the customer-service rung instead of each making a call bound to fail. The next message reopens it."""
    await session.execute(update(UserRow).where(UserRow.id.in_(user_ids))
                          .values(window_sent_count=CLOSED_COUNT).execution_options(synchronize_session=False))


async def record_send(session: AsyncSession, user_id: int, now_ms: int) -> bool:
    """Count one customer-service send against the open window; False when the window is closed."""
    user = await _locked_user(session, user_id)
    if user is None or not is_open(state_of(user), now_ms):
        return False
    _store(user, after_send(state_of(user)))
    return True
