"""The one deadlock-retry helper: a unit the database aborts for contention runs again after a jittered pause
that grows with each try, up to its attempts; then, or on any other database failure, DatabaseUnavailable.
The pauses go to an injected sleep: nothing here waits for real time."""

from __future__ import annotations

import random

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from schedule.db import create_engine, in_fast_transaction
from schedule.errors import DatabaseUnavailable
from schedule.fastsql import Tx
from schedule.retry import retry_contention


class _Driver(Exception):
    pass


def _deadlock() -> OperationalError:
    return OperationalError("UPDATE …", {}, _Driver(1213, "Deadlock found when trying to get lock"))


class _Sleeps:
    def __init__(self) -> None:
        self.pauses: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.pauses.append(seconds)


async def test_a_deadlock_victim_is_retried_with_jitter_up_to_its_attempts_then_raised() -> None:
    calls, sleep = [], _Sleeps()

    async def unit() -> None:
        calls.append(1)
        raise _deadlock()

    with pytest.raises(DatabaseUnavailable) as raised:
        await retry_contention(unit, attempts=4, sleep=sleep, rand=random.Random(7))
    assert len(calls) == 4 and len(sleep.pauses) == 3  # no pause after the last try
    assert raised.value.contention and raised.value.code == 1213
    assert isinstance(raised.value.__cause__, OperationalError)
    for attempt, pause in enumerate(sleep.pauses, start=1):  # 5–20 ms, times the attempt
        assert 0.005 * attempt <= pause <= 0.02 * attempt
    assert len(set(sleep.pauses)) == 3


@pytest.mark.parametrize(("code", "message"), [
    (1205, "Lock wait timeout exceeded; try restarting transaction"),
    (1020, "Record has changed since last read in table 'items'"),
    (1467, "Failed to read auto-increment value from storage engine")])
async def test_every_abort_for_concurrency_is_run_again(code: int, message: str) -> None:
    """The other ways MariaDB aborts a unit for a concurrent one: a lock wait that timed out, a row changed
    under the snapshot, and a deadlock over the AUTO-INC lock, which InnoDB words as an auto-increment read
    failure (seen in CI with four claims racing into a fresh table)."""
    calls, sleep = [], _Sleeps()

    async def unit() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("INSERT …", {}, _Driver(code, message))
        return "done"

    assert await retry_contention(unit, sleep=sleep) == "done"
    assert len(calls) == 2 and len(sleep.pauses) == 1


async def test_the_jitter_differs_between_runs() -> None:
    pauses = []
    for seed in (1, 2):
        sleep = _Sleeps()
        with pytest.raises(DatabaseUnavailable):
            await retry_contention(_raise_deadlock, attempts=2, sleep=sleep, rand=random.Random(seed))
        pauses.append(sleep.pauses[0])
    assert pauses[0] != pauses[1]  # two colliding workers do not retry in lockstep


async def _raise_deadlock() -> None:
    raise _deadlock()


async def test_a_victim_that_succeeds_later_returns_its_result() -> None:
    calls, sleep = [], _Sleeps()

    async def unit() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise _deadlock()
        return "done"

    assert await retry_contention(unit, sleep=sleep) == "done"
    assert len(calls) == 3 and len(sleep.pauses) == 2


async def test_errors_that_are_not_the_databases_pass_through_untouched() -> None:
    sleep = _Sleeps()

    async def duplicate() -> None:
        raise IntegrityError("INSERT …", {}, _Driver(1062, "Duplicate entry"))

    with pytest.raises(IntegrityError):
        await retry_contention(duplicate, sleep=sleep)

    async def bug() -> None:
        raise ValueError("not a database error")

    with pytest.raises(ValueError, match="not a database error"):
        await retry_contention(bug, sleep=sleep)
    assert sleep.pauses == []


async def test_an_unreachable_database_is_database_unavailable() -> None:
    """Nothing listens where the database should be: the schedule package's own error, the driver's as its
    cause. (A server address on both backends' terms: SQLite has no server to be unreachable.)"""
    engine = create_engine("mysql+aiomysql://root@127.0.0.1:1/schedbot")

    async def unit(tx: Tx) -> None:
        raise AssertionError("never reached: no connection")

    try:
        with pytest.raises(DatabaseUnavailable) as raised:
            await in_fast_transaction(engine, unit)
    finally:
        await engine.dispose()
    assert not raised.value.contention and raised.value.code == 2003  # can't connect
    assert isinstance(raised.value.__cause__, OperationalError)
