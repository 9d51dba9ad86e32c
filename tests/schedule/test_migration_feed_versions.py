"""Revision 0012 (feed versions) on both backends: an existing item's SEQUENCE starts from what the feed said
before (whole seconds since creation), so no subscriber sees it go down; new items start at 0; the calendar
feed rows gain an empty version; the revision goes down and up again."""

from __future__ import annotations

from alembic import command
from sqlalchemy import Connection

from schedule.db import create_engine
from schedule.migrate import alembic_config

_ITEM = ("INSERT INTO schedule_items (user_id, kind, title, status, all_day, timezone, source_channel, "
         "created_at, updated_at) VALUES (1, 'task', '{title}', 'active', 0, 'Asia/Shanghai', 'api', {made}, {changed})")


def _through_the_revision(connection: Connection) -> tuple[list[tuple[str, int]], list[tuple[int, object, object]]]:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "0011")
    connection.exec_driver_sql("INSERT INTO users (wechat_openid, timezone, subscribed, window_sent_count, "
                               "created_at) VALUES ('o-1', 'Asia/Shanghai', 1, 0, 0)")
    connection.exec_driver_sql(_ITEM.format(title="untouched", made=1_000_000, changed=1_000_000))
    connection.exec_driver_sql(_ITEM.format(title="edited", made=1_000_000, changed=1_000_000 + 7_250_999))
    connection.exec_driver_sql("INSERT INTO calendar_feeds (user_id, epoch, revoked_at) VALUES (1, 2, 5)")
    command.upgrade(config, "head")
    command.downgrade(config, "0011")
    command.upgrade(config, "head")
    connection.exec_driver_sql(_ITEM.format(title="new", made=9_000_000, changed=9_000_000))
    items = connection.exec_driver_sql("SELECT title, sequence FROM schedule_items ORDER BY id").all()
    feeds = connection.exec_driver_sql("SELECT epoch, etag, modified_at FROM calendar_feeds").all()
    return [(str(t), int(n)) for t, n in items], [(int(e), tag, at) for e, tag, at in feeds]


async def test_existing_items_keep_their_sequence_and_the_revision_reverses(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            items, feeds = await connection.run_sync(_through_the_revision)
    finally:
        await engine.dispose()
    assert items == [("untouched", 0), ("edited", 7250), ("new", 0)]
    assert feeds == [(2, None, None)]
