"""Revision 0008 (link_epoch) on both backends: users who exist keep epoch 0 (their links keep working), and
the revision goes down and up again."""

from __future__ import annotations

from alembic import command
from sqlalchemy import Connection

from schedule.db import create_engine
from schedule.migrate import alembic_config


def _through_the_revision(connection: Connection) -> list[tuple[str, int]]:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "0007")
    connection.exec_driver_sql("INSERT INTO users (wechat_openid, timezone, subscribed, window_sent_count, "
                               "created_at) VALUES ('o-before', 'Asia/Shanghai', 1, 0, 0)")
    command.upgrade(config, "head")
    command.downgrade(config, "0007")
    command.upgrade(config, "head")
    connection.exec_driver_sql("INSERT INTO users (wechat_openid, timezone, subscribed, window_sent_count, "
                               "created_at) VALUES ('o-after', 'Asia/Shanghai', 1, 0, 0)")
    rows = connection.exec_driver_sql("SELECT wechat_openid, link_epoch FROM users ORDER BY id").all()
    return [(str(name), int(epoch)) for name, epoch in rows]


async def test_existing_users_start_at_epoch_zero_and_the_revision_reverses(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            rows = await connection.run_sync(_through_the_revision)
    finally:
        await engine.dispose()
    assert rows == [("o-before", 0), ("o-after", 0)]
