"""requests the bot runs later (每天早上8点告诉我今天的天气) and subscription-message grants (订阅通知)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 20:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('scheduled_requests',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('title', sa.String(length=100), nullable=False),
    sa.Column('remind', sa.String(length=200), nullable=True),
    sa.Column('query', sa.JSON(none_as_null=True), nullable=True),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('first_at', sa.BigInteger(), nullable=False),
    sa.Column('rrule', sa.String(length=200), nullable=True),
    sa.Column('workdays', sa.String(length=8), nullable=True),
    sa.Column('lunar', sa.JSON(none_as_null=True), nullable=True),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('run_at', sa.BigInteger(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('locked_until', sa.BigInteger(), nullable=True),
    sa.Column('lock_token', sa.String(length=36), nullable=True),
    sa.Column('last_error', sa.String(length=200), nullable=True),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_scheduled_requests_user_id_users'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_scheduled_requests'))
    )
    op.create_index('ix_scheduled_requests_status_run_at', 'scheduled_requests', ['status', 'run_at'])
    op.create_index(op.f('ix_scheduled_requests_user_id'), 'scheduled_requests', ['user_id'])
    op.create_table('subscribe_grants',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('template_id', sa.String(length=128), nullable=False),
    sa.Column('status', sa.String(length=8), nullable=False),
    sa.Column('remaining', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_subscribe_grants_user_id_users'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_subscribe_grants')),
    sa.UniqueConstraint('user_id', 'template_id', name='uq_subscribe_grants_user_template')
    )


def downgrade() -> None:
    op.drop_table('subscribe_grants')
    op.drop_table('scheduled_requests')  # its indexes go with it (MariaDB refuses to drop one its foreign key needs)
