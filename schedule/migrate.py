"""Programmatic Alembic: upgrade a database to head, and compare models with migrations."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from schedule.model import Base

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if url:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def _upgrade(connection: Connection) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def upgrade(engine: AsyncEngine) -> None:
    """Bring the database to the latest revision (idempotent)."""
    async with engine.connect() as connection:
        await connection.run_sync(_upgrade)
        await connection.commit()


def _diff(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


async def schema_diff(engine: AsyncEngine) -> list[Any]:
    """Differences between the models and the migrated database (empty when they agree)."""
    async with engine.connect() as connection:
        return await connection.run_sync(_diff)


def upgrade_url(url: str) -> None:
    """Synchronous entry for the CLI."""
    from schedule.db import create_engine

    async def _go() -> None:
        engine = create_engine(url)
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()

    asyncio.run(_go())
