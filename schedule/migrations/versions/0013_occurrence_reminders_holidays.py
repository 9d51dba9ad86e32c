"""a series' reminder of one occurrence only (a snooze); official holiday schedules loaded by the operator

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 23:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('schedule_reminders') as batch:
        batch.add_column(sa.Column('once', sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table('holiday_years',
    sa.Column('year', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('holidays', sa.JSON(), nullable=False),
    sa.Column('workdays', sa.JSON(), nullable=False),
    sa.Column('source', sa.String(length=200), nullable=True),
    sa.Column('loaded_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('year', name=op.f('pk_holiday_years'))
    )


def downgrade() -> None:
    op.drop_table('holiday_years')
    with op.batch_alter_table('schedule_reminders') as batch:
        batch.drop_column('once')
