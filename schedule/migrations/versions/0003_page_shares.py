"""page shares and app secrets: public itinerary links and the generated SECRET_KEY

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 22:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('app_secrets',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('value', sa.String(length=128), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_app_secrets'))
    )
    op.create_table('page_shares',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('nonce', sa.String(length=32), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('expires_at', sa.BigInteger(), nullable=False),
    sa.Column('revoked_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_page_shares_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_page_shares')),
    sa.UniqueConstraint('nonce', name=op.f('uq_page_shares_nonce'))
    )
    with op.batch_alter_table('page_shares', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_page_shares_user_id'), ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('page_shares', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_page_shares_user_id'))
    op.drop_table('page_shares')
    op.drop_table('app_secrets')
