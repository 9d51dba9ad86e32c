"""SQLAlchemy 2 typed models: every table of docs/README.md#tables (plus the shared access-token cache).

Instants are epoch milliseconds (UTC) in BigInteger columns; the user's IANA
timezone travels with the row. Soft delete only (status + deleted_at).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# A naming convention keeps constraint names identical on SQLite and MariaDB, so
# autogenerate comparisons and later migrations see the same names everywhere.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

NullableJSON = JSON(none_as_null=True)  # Python None is SQL NULL, not the JSON text "null"
Id = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrement needs INTEGER PRIMARY KEY


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class UserRow(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    wechat_openid: Mapped[str] = mapped_column(String(128), unique=True)
    timezone: Mapped[str] = mapped_column(String(64), default="Asia/Shanghai")
    subscribed: Mapped[bool] = mapped_column(Boolean, default=True)
    last_user_message_at: Mapped[int | None] = mapped_column(BigInteger)
    # Customer-service window: the instant that opened it and messages sent within it.
    window_kind: Mapped[str | None] = mapped_column(String(16))  # message | click
    window_opened_at: Mapped[int | None] = mapped_column(BigInteger)
    window_sent_count: Mapped[int] = mapped_column(Integer, default=0)
    api_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    created_at: Mapped[int] = mapped_column(BigInteger)
    # Generation of the user's page and calendar links (signed into them); bumping it revokes them all.
    link_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ScheduleItemRow(Base):
    __tablename__ = "schedule_items"
    __table_args__ = (Index("ix_schedule_items_user_status_start_due", "user_id", "status", "start_at", "due_at"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(8))  # task | event
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(12), default="active")
    start_at: Mapped[int | None] = mapped_column(BigInteger)
    end_at: Mapped[int | None] = mapped_column(BigInteger)
    due_at: Mapped[int | None] = mapped_column(BigInteger)
    all_day: Mapped[bool] = mapped_column(Boolean, default=False)
    local_date: Mapped[str | None] = mapped_column(String(10))  # YYYY-MM-DD for all-day items
    timezone: Mapped[str] = mapped_column(String(64))
    location: Mapped[str | None] = mapped_column(String(200))
    rrule: Mapped[str | None] = mapped_column(String(200))
    workdays: Mapped[str | None] = mapped_column(String(8))
    lunar: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    source_channel: Mapped[str] = mapped_column(String(8), default="api")
    source_message_id: Mapped[str | None] = mapped_column(String(64))
    source_text: Mapped[str | None] = mapped_column(Text)
    metadata_json: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    created_at: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)
    deleted_at: Mapped[int | None] = mapped_column(BigInteger)
    # How many times the row was changed since it was created (a calendar's SEQUENCE): one per write.
    sequence: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ReminderRow(Base):
    __tablename__ = "schedule_reminders"
    __table_args__ = (
        UniqueConstraint("item_id", "remind_at", "channel", name="uq_schedule_reminders_item_at_channel"),
        Index("ix_schedule_reminders_status_remind_at", "status", "remind_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("schedule_items.id", ondelete="CASCADE"))
    remind_at: Mapped[int] = mapped_column(BigInteger)
    offset_minutes: Mapped[int | None] = mapped_column(Integer)
    channel: Mapped[str] = mapped_column(String(16), default="wechat")
    status: Mapped[str] = mapped_column(String(12), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(String(500))
    locked_until: Mapped[int | None] = mapped_column(BigInteger)
    next_attempt_at: Mapped[int | None] = mapped_column(BigInteger)
    sent_at: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)
    # about one occurrence of a series only (a snooze): firing never carries it to the next occurrence
    once: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class DeliveryLogRow(Base):
    __tablename__ = "schedule_delivery_logs"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    reminder_id: Mapped[int | None] = mapped_column(BigInteger, index=True)
    outbox_id: Mapped[int | None] = mapped_column(BigInteger, index=True)
    user_id: Mapped[int | None] = mapped_column(BigInteger, index=True)
    channel: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(8))  # success | failed | unknown
    provider_message_id: Mapped[str | None] = mapped_column(String(64))
    error_code: Mapped[str | None] = mapped_column(String(32))
    error_message: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[int] = mapped_column(BigInteger)


class DigestSubscriptionRow(Base):
    __tablename__ = "digest_subscriptions"
    __table_args__ = (UniqueConstraint("user_id", "kind", "channel", name="uq_digest_subscriptions_user_kind"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16), default="todo_day")
    local_time: Mapped[str] = mapped_column(String(5))  # HH:MM
    timezone: Mapped[str] = mapped_column(String(64))
    rrule: Mapped[str | None] = mapped_column(String(200))
    workdays: Mapped[str | None] = mapped_column(String(8))
    channel: Mapped[str] = mapped_column(String(16), default="wechat")
    status: Mapped[str] = mapped_column(String(12), default="active")  # active | cancelled
    next_run_at: Mapped[int | None] = mapped_column(BigInteger, index=True)
    last_run_local_date: Mapped[str | None] = mapped_column(String(10))
    created_at: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)


class OutboundMessageRow(Base):
    """The outbox: every user-visible push is a row here before any platform call."""

    __tablename__ = "outbound_messages"
    __table_args__ = (Index("ix_outbound_messages_status_next_attempt", "status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    idempotency_key: Mapped[str] = mapped_column(String(191), unique=True)
    kind: Mapped[str] = mapped_column(String(16))  # reminder | digest | agent_reply | notice
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    channel: Mapped[str] = mapped_column(String(16), default="wechat")
    status: Mapped[str] = mapped_column(String(12), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[int] = mapped_column(BigInteger)
    locked_until: Mapped[int | None] = mapped_column(BigInteger)
    lock_token: Mapped[str | None] = mapped_column(String(36))
    receipt: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    failure_class: Mapped[str | None] = mapped_column(String(20))
    reminder_id: Mapped[int | None] = mapped_column(BigInteger)
    # When this row took its customer-service window slot (set with status=sending; a replay reuses it).
    window_reserved_at: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)


class InboundMessageRow(Base):
    __tablename__ = "inbound_messages"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    dedupe_key: Mapped[str] = mapped_column(String(191), unique=True)
    user_id: Mapped[int | None] = mapped_column(BigInteger, index=True)
    received_at: Mapped[int] = mapped_column(BigInteger, index=True)
    status: Mapped[str] = mapped_column(String(12), default="processing")  # processing | done
    reply: Mapped[str | None] = mapped_column(Text)  # the stored passive reply XML (or "success")


class DialogStateRow(Base):
    __tablename__ = "dialog_states"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    pending_intent: Mapped[dict[str, Any]] = mapped_column(JSON)  # {} when no question is open
    expires_at: Mapped[int] = mapped_column(BigInteger)  # the question's; 0 when none
    focus: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # the focus (bot.conversation.focus)


class AccessTokenRow(Base):
    """Platform access tokens shared by all processes (refreshed under a row lock / lease)."""

    __tablename__ = "access_tokens"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)  # e.g. wechat:<appid>
    token: Mapped[str | None] = mapped_column(String(600))
    expires_at: Mapped[int] = mapped_column(BigInteger, default=0)
    lease_until: Mapped[int] = mapped_column(BigInteger, default=0)
    lease_token: Mapped[str | None] = mapped_column(String(36))


class AgentMessageRow(Base):
    """A short per-user conversation history for the agent fallback (oldest trimmed)."""

    __tablename__ = "agent_messages"
    __table_args__ = (Index("ix_agent_messages_user_id_id", "user_id", "id"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))  # user | assistant
    content: Mapped[str] = mapped_column(Text)
    created_at: Mapped[int] = mapped_column(BigInteger)


class PageShareRow(Base):
    """A public, read-only itinerary share link; the token signs `nonce`, revoking sets revoked_at."""

    __tablename__ = "page_shares"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    nonce: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[int] = mapped_column(BigInteger)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger)


class CalendarFeedRow(Base):
    """A user's calendar-feed generation: feed links carry it, "关闭日历订阅" moves it on (old links answer 410)."""

    __tablename__ = "calendar_feeds"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    epoch: Mapped[int] = mapped_column(Integer, default=0)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger)
    # The feed's validator as last served, and when it was first served: the feed's Last-Modified.
    etag: Mapped[str | None] = mapped_column(String(64))
    modified_at: Mapped[int | None] = mapped_column(BigInteger)


class AppSecretRow(Base):
    """Process-wide secrets generated once and shared by every process (SECRET_KEY when unset)."""

    __tablename__ = "app_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[int] = mapped_column(BigInteger)


class ApiTokenRow(Base):
    """A named REST API token of a user (only the SHA-256 of the token is kept); one per label."""

    __tablename__ = "api_tokens"
    __table_args__ = (UniqueConstraint("user_id", "label", name="uq_api_tokens_user_label"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    label: Mapped[str] = mapped_column(String(64))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[int] = mapped_column(BigInteger)
    last_used_at: Mapped[int | None] = mapped_column(BigInteger)


class ChannelPauseRow(Base):
    """A delivery channel stopped for every worker: the platform said its rate limit or daily quota is
    reached (WeChat 45011 / 45009) or an incident only the operator can fix (40164, a bad template) stands.
    Kept here so a restarted or added worker honours it too, and /healthz and doctor report it."""

    __tablename__ = "channel_pauses"

    channel: Mapped[str] = mapped_column(String(32), primary_key=True)
    paused_until: Mapped[int] = mapped_column(BigInteger)
    # the day's quota or a bad template: rows move down the ladder meanwhile (else they wait)
    daily: Mapped[bool] = mapped_column(Boolean, default=False)
    code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    updated_at: Mapped[int] = mapped_column(BigInteger)


class ScheduledRequestRow(Base):
    """A request the bot runs at a time (每天早上8点告诉我今天的天气); its answer is pushed.

    `query` set: a schedule query the rules answer (schedule.requests.AgendaQuery as JSON); null: free-form,
    for the agent. `run_at` is the next run; a claim leases the row (`locked_until`, `lock_token`)."""

    __tablename__ = "scheduled_requests"
    __table_args__ = (Index("ix_scheduled_requests_status_run_at", "status", "run_at"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)  # the request as said, time words left out
    title: Mapped[str] = mapped_column(String(100))
    remind: Mapped[str | None] = mapped_column(String(200))  # 提醒我写周报并…: said with the answer
    query: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    timezone: Mapped[str] = mapped_column(String(64))
    first_at: Mapped[int] = mapped_column(BigInteger)  # the series' first run: its day and local time
    rrule: Mapped[str | None] = mapped_column(String(200))
    workdays: Mapped[str | None] = mapped_column(String(8))
    lunar: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    status: Mapped[str] = mapped_column(String(12), default="active")  # active | done | cancelled
    run_at: Mapped[int] = mapped_column(BigInteger)
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # failed runs of the current occurrence
    locked_until: Mapped[int | None] = mapped_column(BigInteger)
    lock_token: Mapped[str | None] = mapped_column(String(36))
    last_error: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)


class SubscribeGrantRow(Base):
    """A user's consent to a subscription-message template (订阅通知): accepted one-time grants
    not yet used (`remaining`), or refused. Long-term templates ignore the count but honour a refusal."""

    __tablename__ = "subscribe_grants"
    __table_args__ = (UniqueConstraint("user_id", "template_id", name="uq_subscribe_grants_user_template"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    template_id: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(8))  # accept | reject | asked (told how, no answer yet)
    remaining: Mapped[int] = mapped_column(Integer, default=0)  # one-time sends granted and not yet used
    updated_at: Mapped[int] = mapped_column(BigInteger)


class PushCounterRow(Base):
    """What the push budgets have spent, shared by every worker: the account's template messages of a day
    (`template`), a user's pushes of a day (`user:{id}`), and a series' last push (`series:{item id}`,
    `last_at`). Days are WeChat's (Beijing) dates; rows older than two days are purged."""

    __tablename__ = "push_counters"

    scope: Mapped[str] = mapped_column(String(40), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    used: Mapped[int] = mapped_column(Integer, default=0)
    last_at: Mapped[int | None] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)


class HolidayYearRow(Base):
    """The official holiday schedule of one year as the State Council published it (`schedbot holidays load`):
    the days off and the 调休 working days (weekend days worked), ISO dates. A year with no row falls back to
    the library's data, then to the statutory holidays alone."""

    __tablename__ = "holiday_years"

    year: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    holidays: Mapped[list[str]] = mapped_column(JSON)
    workdays: Mapped[list[str]] = mapped_column(JSON)
    source: Mapped[str | None] = mapped_column(String(200))
    loaded_at: Mapped[int] = mapped_column(BigInteger)
