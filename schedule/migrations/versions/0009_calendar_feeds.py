"""calendar feed revocation: a per-user feed generation ("关闭日历订阅" makes older feed links 410)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 19:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('calendar_feeds',
    sa.Column('user_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('epoch', sa.Integer(), nullable=False),
    sa.Column('revoked_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_calendar_feeds_user_id_users'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', name=op.f('pk_calendar_feeds'))
    )


def downgrade() -> None:
    op.drop_table('calendar_feeds')
