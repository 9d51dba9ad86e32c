"""users.link_epoch: a per-user generation of page and calendar links; bumping it revokes every link issued
before (`schedbot user forget`, unfollowing, the chat command 重置链接)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 19:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Links issued before this revision carry epoch 0, so they keep working until the first bump.
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('link_epoch', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('users') as batch:
        batch.drop_column('link_epoch')
