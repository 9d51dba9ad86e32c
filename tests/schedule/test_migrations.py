"""Alembic revisions run from empty on every backend and agree with the models."""

from __future__ import annotations

from sqlalchemy import inspect

from schedule.db import create_engine
from schedule.migrate import schema_diff, upgrade
from schedule.model import Base

SPEC_TABLES = {"users", "schedule_items", "schedule_reminders", "schedule_delivery_logs", "digest_subscriptions",
               "outbound_messages", "inbound_messages", "dialog_states"}


async def test_upgrade_from_empty_creates_every_table_and_matches_models(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await upgrade(engine)
        async with engine.connect() as conn:
            tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
        assert tables >= SPEC_TABLES
        assert set(Base.metadata.tables) <= tables
        assert await schema_diff(engine) == []
        await upgrade(engine)  # running again is a no-op
    finally:
        await engine.dispose()


async def test_reminder_unique_key_exists_after_migration(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await upgrade(engine)
        async with engine.connect() as conn:
            uniques = await conn.run_sync(lambda c: inspect(c).get_unique_constraints("schedule_reminders"))
            indexes = await conn.run_sync(lambda c: inspect(c).get_indexes("schedule_reminders"))
        keyed = [tuple(u["column_names"]) for u in uniques] + [
            tuple(i["column_names"]) for i in indexes if i.get("unique")]
        assert ("item_id", "remind_at", "channel") in keyed
    finally:
        await engine.dispose()
