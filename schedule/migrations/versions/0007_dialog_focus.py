"""the item in focus beside the pending question (docs/conversation.md#focus): what the conversation is about

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 19:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('dialog_states') as batch:
        batch.add_column(sa.Column('focus', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('dialog_states') as batch:
        batch.drop_column('focus')
