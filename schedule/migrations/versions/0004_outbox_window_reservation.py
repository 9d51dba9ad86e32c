"""outbox window reservation: the instant a row took its customer-service window slot

Recorded in the transaction that marks the row sending, so a replay after a crash never takes a
second slot of the user's 5-per-48-h window.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 22:15:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('outbound_messages', schema=None) as batch_op:
        batch_op.add_column(sa.Column('window_reserved_at', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('outbound_messages', schema=None) as batch_op:
        batch_op.drop_column('window_reserved_at')
