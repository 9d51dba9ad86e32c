"""Database checks before a command runs: reachable, credentials accepted, schema at the code's revision.

Each failure becomes one `DatabaseProblem` line naming DATABASE_URL (password masked) and what to
do, so `schedbot serve|worker|migrate|user` exit 2 with that line instead of a SQLAlchemy traceback.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from schedule.locking import skip_locked_problem
from schedule.migrate import alembic_config, upgrade

CONNECT_TIMEOUT_S = 10.0

# MySQL/MariaDB client and server error numbers → what the owner should do.
_MYSQL_ADVICE = {
    2003: "cannot connect — is the database server running, and are host and port right?",
    2005: "unknown host — fix the host name",
    1045: "access denied — check the user name and password",
    1698: "access denied — check the user name and password",
    1044: "access denied to this database — GRANT ALL ON db.* TO the user",
    1049: "the database does not exist — CREATE DATABASE it (utf8mb4) first",
}


class DatabaseProblem(Exception):
    """One line for the owner: which DATABASE_URL and what to do."""


def masked(url: str) -> str:
    """The URL with its password replaced by ***."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is reported as such elsewhere; never echo it raw
        return "<unparsable URL>"


def explain(exc: BaseException, url: str) -> str:
    """The one-line message for a failure while reaching or migrating the database at `url`."""
    prefix = f"DATABASE_URL={masked(url)}: "
    if isinstance(exc, TimeoutError):
        return prefix + f"no answer within {CONNECT_TIMEOUT_S:.0f} s — is the host reachable (firewall)?"
    if isinstance(exc, CommandError):
        return prefix + f"{exc} (migrated by a newer version?) — upgrade schedbot"
    orig = exc.orig if isinstance(exc, DBAPIError) else None
    args = getattr(orig, "args", ())
    if args and isinstance(args[0], int) and args[0] in _MYSQL_ADVICE:
        return prefix + f"{_MYSQL_ADVICE[args[0]]} (MySQL error {args[0]})"
    detail = str(args[0]) if args else type(exc).__name__
    if "unable to open database file" in detail:
        return prefix + "cannot open the SQLite file — does its directory exist and is it writable?"
    if "no such table" in detail or (args and args[0] == 1146):
        return prefix + "the schema is missing — run `schedbot migrate`"
    return prefix + f"{type(orig or exc).__name__}: {detail[:200]}"


def sqlite_file_problem(url: str) -> str | None:
    """Why the SQLite file at `url` cannot be opened for writing, checked without connecting.

    A failed aiosqlite connect leaves a close queued on its worker thread that can run after the
    command's event loop has closed (a stray traceback), so the common causes are caught up front.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    path = Path(parsed.database).absolute()
    if not path.parent.is_dir():
        return f"the directory {path.parent} does not exist — create it or fix the path"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"cannot write to {path.parent} — fix its permissions or the path"
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return f"cannot read and write {path} — fix its permissions"
    return None


def _revisions(connection: Connection) -> tuple[str | None, str | None]:
    from alembic.migration import MigrationContext

    current = MigrationContext.configure(connection).get_current_revision()
    script = ScriptDirectory.from_config(alembic_config())
    if current is not None and current not in {rev.revision for rev in script.walk_revisions()}:
        raise CommandError(f"the database is at revision {current}, unknown to this schedbot")
    return current, script.get_current_head()


async def revision(engine: AsyncEngine) -> tuple[str | None, str | None]:
    """(the database's alembic revision, the code's head revision)."""
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))
        return await connection.run_sync(_revisions)


async def check_database(engine: AsyncEngine, url: str, *, migrate: bool) -> str | None:
    """Reach the database, migrate it when `migrate`, and insist it is at head; returns the revision.

    Raises DatabaseProblem with the owner-facing line on any failure.
    """
    problem = sqlite_file_problem(url)
    if problem:
        raise DatabaseProblem(f"DATABASE_URL={masked(url)}: cannot open the SQLite file: {problem}")
    try:
        current, head = await asyncio.wait_for(revision(engine), CONNECT_TIMEOUT_S)
        if migrate and current != head:
            await upgrade(engine)
            current, head = await revision(engine)
    except (SQLAlchemyError, CommandError, TimeoutError, OSError) as exc:
        raise DatabaseProblem(explain(exc, url)) from None
    if current != head:
        where = "empty" if current is None else f"at revision {current}"
        raise DatabaseProblem(f"DATABASE_URL={masked(url)}: the schema is {where}, this schedbot needs {head} — "
                              "run `schedbot migrate` (or set DATABASE_AUTO_MIGRATE=1)")
    return current


async def check_claiming(engine: AsyncEngine, url: str) -> None:
    """Refuse a server whose FOR UPDATE SKIP LOCKED is not real (TiDB, for one): several workers would send
    the same reminder. Run after `check_database` (the probe locks alembic_version's row).

    Raises DatabaseProblem with the owner-facing line.
    """
    try:
        problem = await skip_locked_problem(engine)
    except (SQLAlchemyError, OSError) as exc:
        raise DatabaseProblem(explain(exc, url)) from None
    if problem:
        raise DatabaseProblem(f"DATABASE_URL={masked(url)}: {problem}")
