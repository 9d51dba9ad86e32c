"""calendar feed versions: schedule_items.sequence (a count of the item's changes, the feed's SEQUENCE) and
the feed's last validator with the time it was first served (its Last-Modified)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 23:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('schedule_items') as batch:
        batch.add_column(sa.Column('sequence', sa.Integer(), server_default='0', nullable=False))
    # Subscribed calendars already hold the SEQUENCE the feed gave before (whole seconds between creation and
    # the last change): existing items start from it, so no subscriber ever sees an item's SEQUENCE go down.
    seconds = ('(updated_at - created_at) DIV 1000' if op.get_bind().dialect.name == 'mysql'
               else '(updated_at - created_at) / 1000')
    op.execute(f'UPDATE schedule_items SET sequence = {seconds} WHERE updated_at > created_at')
    with op.batch_alter_table('calendar_feeds') as batch:
        batch.add_column(sa.Column('etag', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('modified_at', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('calendar_feeds') as batch:
        batch.drop_column('modified_at')
        batch.drop_column('etag')
    with op.batch_alter_table('schedule_items') as batch:
        batch.drop_column('sequence')
