"""Transactions the database aborts for concurrency reasons are run again; other errors are not. What the
database fails comes out as the schedule package's DatabaseUnavailable, chained to the driver's error."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule.db import in_transaction
from schedule.errors import DatabaseUnavailable


class _Driver(Exception):
    pass


def mysql_error(code: int) -> OperationalError:
    return OperationalError("UPDATE …", {}, _Driver(code, "driver message"))


async def test_deadlock_victim_is_run_again(sessions: async_sessionmaker[AsyncSession]) -> None:
    calls = []

    async def work(_session: AsyncSession) -> str:
        calls.append(1)
        if len(calls) < 3:
            raise mysql_error(1213)
        return "done"

    assert await in_transaction(sessions, work) == "done"
    assert len(calls) == 3


async def test_other_errors_are_not_retried(sessions: async_sessionmaker[AsyncSession]) -> None:
    calls = []

    async def work(_session: AsyncSession) -> None:
        calls.append(1)
        raise mysql_error(1146)  # no such table: a bug, not contention

    with pytest.raises(DatabaseUnavailable) as raised:
        await in_transaction(sessions, work)
    assert len(calls) == 1
    assert isinstance(raised.value.__cause__, OperationalError) and raised.value.code == 1146
    assert not raised.value.contention and "UPDATE" not in str(raised.value)  # no statement text in the message


async def test_gives_up_after_the_last_attempt(sessions: async_sessionmaker[AsyncSession]) -> None:
    calls = []

    async def work(_session: AsyncSession) -> None:
        calls.append(1)
        raise mysql_error(1205)

    with pytest.raises(DatabaseUnavailable) as raised:
        await in_transaction(sessions, work, attempts=3)
    assert len(calls) == 3
    assert raised.value.contention and raised.value.code == 1205
