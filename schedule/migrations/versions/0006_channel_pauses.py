"""channel pauses shared by every worker (WeChat 45011 minute limit / 45009 daily quota)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 01:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('channel_pauses',
    sa.Column('channel', sa.String(length=32), nullable=False),
    sa.Column('paused_until', sa.BigInteger(), nullable=False),
    sa.Column('daily', sa.Boolean(), nullable=False),
    sa.Column('code', sa.String(length=32), nullable=True),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('channel', name=op.f('pk_channel_pauses'))
    )


def downgrade() -> None:
    op.drop_table('channel_pauses')
