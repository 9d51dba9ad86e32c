"""TEMPLATESENDJOBFINISH: WeChat's late verdict on a template message, tied back to its outbox row.

The send call already returned a msgid (kept in the row's receipt); this event says whether the
message really reached the user. A refusal ("failed:user block") fails the row and its reminder,
so nothing counts it as delivered; every verdict is logged against the row.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.wechat.messages import InboundMessage
from schedule.model import DeliveryLogRow, OutboundMessageRow, ReminderRow

RECENT_ROWS = 200  # a verdict arrives seconds after the send: the user's latest template rows suffice


async def _row_for(session: AsyncSession, user_id: int, msg_id: str) -> OutboundMessageRow | None:
    rows = (await session.scalars(
        select(OutboundMessageRow)
        .where(OutboundMessageRow.user_id == user_id, OutboundMessageRow.channel == "template")
        .order_by(OutboundMessageRow.id.desc()).limit(RECENT_ROWS))).all()
    for row in rows:
        parts = (row.receipt or {}).get("parts") or {}
        if msg_id in {str(value) for value in parts.values() if value is not None}:
            return row
    return None


async def record(session: AsyncSession, message: InboundMessage, *, now_ms: int) -> None:
    """Log the verdict against its outbox row; a user's block fails the row and its reminder."""
    assert message.user_id is not None
    status = message.status or ""
    ok = status == "success"
    row = await _row_for(session, message.user_id, message.msg_id) if message.msg_id else None
    session.add(DeliveryLogRow(
        outbox_id=row.id if row else None, reminder_id=row.reminder_id if row else None, user_id=message.user_id,
        channel="wechat_template", status="success" if ok else "failed", provider_message_id=message.msg_id,
        error_code=None if ok else "template_job", error_message=None if ok else status[:500], created_at=now_ms))
    if row is None or "block" not in status.lower():
        return
    await session.execute(update(OutboundMessageRow).where(OutboundMessageRow.id == row.id)
                          .values(status="failed", failure_class="template_blocked", updated_at=now_ms))
    if row.reminder_id is not None:
        await session.execute(update(ReminderRow).where(ReminderRow.id == row.reminder_id)
                              .values(status="failed", updated_at=now_ms))
