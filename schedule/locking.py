"""Does this server's `FOR UPDATE SKIP LOCKED` really skip a locked row? (docs/delivery.md#claiming)

Claiming (schedule/claims.py, firing.py, requests.py, inbound.py) relies on it: several workers on one
MariaDB/MySQL database each lock the rows they take and pass over the rows another worker holds. A
server that accepts the syntax without honouring it (TiDB: a single-table `SKIP LOCKED` read takes no
lock at all) lets two workers claim, and send, the same reminder. So `schedbot doctor` and
`schedbot worker` ask the server itself: one connection locks the row of `alembic_version` (there after
every migration) with `FOR UPDATE`, a second reads it with `FOR UPDATE SKIP LOCKED` and must not see it.

SQLite needs none of this: every transaction takes the one write lock at BEGIN IMMEDIATE (schedule/db.py),
so a single worker process claims at a time.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

# Read when the probe runs (tests replace them to stand for a server that takes no lock, or says TiDB).
SERVER_VERSION = "SELECT VERSION()"
HOLD_ROW = "SELECT version_num FROM alembic_version FOR UPDATE"
SKIP_LOCKED_READ = "SELECT version_num FROM alembic_version FOR UPDATE SKIP LOCKED"

LOCK_WAIT_S = 1  # the reading connection's innodb_lock_wait_timeout: a server that waits instead of skipping
PROBE_TIMEOUT_S = 10.0  # the whole probe, whatever holds it up (another lock on alembic_version, a slow link)

_LOCK_WAIT_TIMEOUT, _SYNTAX_ERROR = 1205, 1064


async def skip_locked_problem(engine: AsyncEngine) -> str | None:
    """Why claiming on this database is unsafe for several workers, in one line; None when SKIP LOCKED
    skips (or the database is SQLite). Database errors other than the ones the probe expects propagate."""
    if engine.dialect.name == "sqlite":
        return None
    try:
        return await asyncio.wait_for(_probe(engine), PROBE_TIMEOUT_S)
    except TimeoutError:
        return (f"could not check FOR UPDATE SKIP LOCKED within {PROBE_TIMEOUT_S:.0f} s "
                "(does a long transaction hold alembic_version?) — run `schedbot doctor` again")


async def _probe(engine: AsyncEngine) -> str | None:
    async with engine.connect() as holder, engine.connect() as reader:
        try:
            version = str((await reader.execute(text(SERVER_VERSION))).scalar_one())
            await reader.execute(text(f"SET SESSION innodb_lock_wait_timeout = {LOCK_WAIT_S}"))
            held = (await holder.execute(text(HOLD_ROW))).all()  # the transaction stays open: the row stays locked
            if not held:
                return "alembic_version is empty, nothing to probe FOR UPDATE SKIP LOCKED with — run `schedbot migrate`"
            try:
                seen = (await reader.execute(text(SKIP_LOCKED_READ))).all()
            except DBAPIError as exc:
                code = exc.orig.args[0] if exc.orig is not None and exc.orig.args else None
                if code == _LOCK_WAIT_TIMEOUT:
                    return _refusal(version, "it waited for the locked row instead of skipping it")
                if code == _SYNTAX_ERROR:
                    return _refusal(version, "a syntax error")
                raise
            return _refusal(version, "it returned a row another connection holds locked") if seen else None
        finally:
            # The reader's session carries a short lock wait: close it rather than pool it. Rolling the
            # holder back releases the row.
            await reader.invalidate()
            await holder.rollback()


def _refusal(version: str, observed: str) -> str:
    why = f"{version}: TiDB accepts the syntax and takes no lock" if "tidb" in version.lower() else \
        f"{version}: {observed}"
    return (f"FOR UPDATE SKIP LOCKED is not real on this server ({why}) — several workers would claim and "
            "send the same reminder; use MariaDB ≥ 10.6 or MySQL ≥ 8.0")
