"""A transaction begun by one caller and carried on as the unit of work of the next.

The webhook claims a message and, in the same trip after the claim's COMMIT, runs the handler's first read
(the user's row, locked) in a new transaction on that connection (`fastsql.run_then`): one round trip fewer
per message on MariaDB. The webhook then runs the message's unit of work in that transaction (`adopt`), and
the handler's statement finds the rows read already; if the message never gets that far, `release` ends it.
Either way it ends exactly once. The value is passed along explicitly: nothing adopts it behind the caller's back.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine

from schedule.fastsql import Tx, transaction
from schedule.retry import retry_contention

T = TypeVar("T")

log = logging.getLogger(__name__)


class Handoff:
    """One handed-over transaction (see the module docstring): `begin` (or `begin_with`), then `adopt` or
    `release`."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._begun: Any = None
        self.tx: Tx | None = None
        self.taken = False
        self.handed_on = False  # given to a task that adopts or releases it (the webhook's unit of work)
        self._ended = False

    async def begin(self) -> Tx:
        begun = transaction(self.engine)
        self.tx = await begun.__aenter__()
        self._begun = begun
        return self.tx

    async def begin_with(self, first: Callable[[Tx], Awaitable[T]]) -> T:
        """`begin`, then `first(tx)` (the claim, with the read after its COMMIT). Should either fail, the
        transaction is ended, and a driver error is raised as `schedule.errors.DatabaseUnavailable` (its
        `contention` set for a deadlock victim, which may be run again); any other error passes through."""

        async def once() -> T:
            try:
                return await first(await self.begin())
            except BaseException as exc:
                await self.fail(exc)
                raise

        return await retry_contention(once, attempts=1)

    @property
    def read_ahead(self) -> bool:
        """Whether the statements sent after the COMMIT came back (their rows wait for the unit's own `run`)."""
        return self.tx is not None and self.tx.has_prefetched()

    @asynccontextmanager
    async def adopt(self) -> AsyncIterator[Tx]:
        """The transaction as a unit of work's: committed when the block ends, rolled back if it raises."""
        assert self.tx is not None
        assert not self.taken
        self.taken = True
        try:
            yield self.tx
        except BaseException as exc:
            await self._end(exc)
            raise
        await self._end(None)

    async def fail(self, exc: BaseException) -> None:
        """End the transaction after `exc`: rolled back, its connection invalidated if that fails too."""
        self.taken = True
        await self._end(exc)

    async def release(self) -> None:
        """End the transaction if no unit of work took it (its lock on the user's row goes with it). Nothing
        was written in it, so a failure to end it loses nothing: `transaction` drops a broken connection,
        and the caller's answer stands."""
        if not self.taken:
            self.taken = True
            try:
                await self._end(None)
            except Exception as exc:
                log.warning("ending a handed-over transaction failed: %s", type(exc).__name__)

    async def _end(self, exc: BaseException | None) -> None:
        if self._ended or self._begun is None:
            return
        self._ended = True
        if exc is None:
            await self._begun.__aexit__(None, None, None)
            return
        try:
            await self._begun.__aexit__(type(exc), exc, exc.__traceback__)
        except BaseException as raised:
            if raised is not exc:
                raise
