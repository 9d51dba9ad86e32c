"""push budgets: what the account's template messages, each user's pushes and each series spent

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 20:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('push_counters',
    sa.Column('scope', sa.String(length=40), nullable=False),
    sa.Column('day', sa.String(length=10), nullable=False),
    sa.Column('used', sa.Integer(), nullable=False),
    sa.Column('last_at', sa.BigInteger(), nullable=True),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('scope', 'day', name=op.f('pk_push_counters'))
    )


def downgrade() -> None:
    op.drop_table('push_counters')
