"""named API tokens: several per user, each with a label; the single users.api_token_hash becomes "default"

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 23:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('api_tokens',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('label', sa.String(length=64), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('last_used_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_api_tokens_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash')),
    sa.UniqueConstraint('user_id', 'label', name='uq_api_tokens_user_label')
    )
    # Tokens issued before labels existed keep working under the label "default".
    op.execute("INSERT INTO api_tokens (user_id, label, token_hash, created_at) "
               "SELECT id, 'default', api_token_hash, created_at FROM users WHERE api_token_hash IS NOT NULL")


def downgrade() -> None:
    op.drop_table('api_tokens')
