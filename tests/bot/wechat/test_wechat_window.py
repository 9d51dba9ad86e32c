"""Customer-service window rules (pure) and their storage on the user row (both backends)."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import window
from schedule.model import UserRow
from schedule.window import WindowState, after_interaction, after_send, remaining

H = 3600 * 1000


def test_message_window_allows_five_within_48h() -> None:
    state = after_interaction(WindowState(), "message", 0)
    assert remaining(state, 0) == 5
    for _ in range(5):
        state = after_send(state)
    assert remaining(state, 1000) == 0
    assert remaining(after_interaction(WindowState(), "message", 0), 48 * H - 1) == 5
    assert remaining(after_interaction(WindowState(), "message", 0), 48 * H) == 0


def test_click_window_allows_three_within_a_minute() -> None:
    state = after_interaction(WindowState(), "click", 0)
    assert remaining(state, 59_999) == 3
    assert remaining(state, 60_000) == 0


def test_click_does_not_shrink_an_open_message_window() -> None:
    state = after_interaction(WindowState(), "message", 0)
    assert after_interaction(state, "click", 1000) == state


def test_click_replaces_a_spent_message_window() -> None:
    state = WindowState("message", 0, 4)
    assert after_interaction(state, "click", 1000) == WindowState("click", 1000, 0)


def test_new_message_resets_the_quota() -> None:
    state = WindowState("message", 0, 5)
    assert after_interaction(state, "message", H) == WindowState("message", H, 0)


def test_late_older_message_keeps_newer_window() -> None:
    state = WindowState("message", 10 * H, 1)
    assert after_interaction(state, "message", 9 * H) == state


async def test_record_interaction_and_send(sessions: async_sessionmaker[AsyncSession]) -> None:
    async with sessions.begin() as session:
        user = UserRow(wechat_openid="o-win", created_at=0, window_sent_count=0)
        session.add(user)
        await session.flush()
        uid = user.id
    async with sessions.begin() as session:
        assert not await window.record_send(session, uid, 0)
        await window.record_interaction(session, uid, "message", 1000)
    async with sessions.begin() as session:
        for _ in range(5):
            assert await window.record_send(session, uid, 2000)
        assert not await window.record_send(session, uid, 2000)
    async with sessions() as session:
        row = await session.get(UserRow, uid)
        assert row is not None
        assert (row.window_kind, row.window_opened_at, row.window_sent_count, row.last_user_message_at) == \
            ("message", 1000, 5, 1000)


@pytest.mark.parametrize("state", [
    WindowState(), WindowState("message", 5000, 2), WindowState("message", 500, 5), WindowState("click", 900, 1),
    WindowState("click", 5000, 0), WindowState("message", 1000, 0),
])
async def test_record_message_matches_the_pure_rule(sessions: async_sessionmaker[AsyncSession],
                                                    state: WindowState) -> None:
    async with sessions.begin() as session:
        user = UserRow(wechat_openid=f"o-eq-{state}", created_at=0, window_kind=state.kind, subscribed=False,
                       window_opened_at=state.opened_at, window_sent_count=state.sent_count,
                       last_user_message_at=state.opened_at if state.kind == "message" else None)
        session.add(user)
        await session.flush()
        uid = user.id
    async with sessions.begin() as session:
        await window.record_message(session, uid, 1000)
    async with sessions() as session:
        row = await session.get(UserRow, uid)
        assert row is not None
        assert window.state_of(row) == after_interaction(state, "message", 1000)
        assert row.last_user_message_at == max(1000, state.opened_at or 0 if state.kind == "message" else 1000)
        assert row.subscribed  # a message makes a user marked unreachable reachable again
