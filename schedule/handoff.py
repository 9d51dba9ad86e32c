"""A transaction begun by one caller and carried on by the next unit of work of the task it is offered to.

The webhook claims a message and, in the same trip after the claim's COMMIT, runs the handler's first read
(the user's row, locked) in a new transaction on that connection (`fastsql.run_then`): one round trip fewer
per message on MariaDB. The handler's unit of work adopts that transaction (`ScheduleService.unit_of_work`
through `take_offered`) and its statement finds the rows read already; if nothing adopts it, `release`
ends it. Either way it ends exactly once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from schedule.fastsql import Tx, transaction

log = logging.getLogger(__name__)


class Handoff:
    """One handed-over transaction (see the module docstring): `begin`, then `adopt` or `release`."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._begun: Any = None
        self.tx: Tx | None = None
        self.taken = False
        self.handed_on = False  # given to a task that adopts or releases it (the webhook's handler run)
        self._ended = False

    async def begin(self) -> Tx:
        begun = transaction(self.engine)
        self.tx = await begun.__aenter__()
        self._begun = begun
        return self.tx

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


_OFFERED: ContextVar[Handoff | None] = ContextVar("schedule_handoff_offered", default=None)


@contextmanager
def offering(handoff: Handoff | None) -> Iterator[None]:
    """Tasks created inside the block (and the block itself) may adopt `handoff` (`take_offered`)."""
    token = _OFFERED.set(handoff)
    try:
        yield
    finally:
        _OFFERED.reset(token)


def take_offered(engine: AsyncEngine) -> Handoff | None:
    """The transaction offered to this task on `engine`, once: None when there is none or it is taken."""
    handoff = _OFFERED.get()
    if handoff is None or handoff.taken or handoff.engine is not engine or handoff.tx is None:
        return None
    return handoff
