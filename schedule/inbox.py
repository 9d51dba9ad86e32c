"""The in-app queue: pushes that could not go out on WeChat (window closed, no template) and reminders
that expired during downtime wait here as outbox rows (channel "inapp", status "pending") until the
user sees them — prepended to the next chat reply or listed on the itinerary page.

`take` marks what it returns as delivered in the caller's transaction, so the notices are shown once:
exactly when the reply (or page) that shows them is committed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, select, update

from schedule.fastsql import Executor, Fast, orm
from schedule.model import DeliveryLogRow, OutboundMessageRow, ReminderRow

MAX_SHOWN = 20


@dataclass(frozen=True, slots=True)
class Notice:
    outbox_id: int
    kind: str  # reminder | digest | agent_reply | notice
    text: str
    created_at: int
    expired: bool = False  # a reminder that came due while the service was down


_M = OutboundMessageRow
_PENDING = Fast(select(_M.id, _M.kind, _M.payload, _M.created_at)  # only what a notice shows: rows are wide
            .where(_M.user_id == bindparam("p_uid"), _M.channel == "inapp", _M.status == "pending")
            .order_by(_M.created_at, _M.id).limit(bindparam("p_limit")))


async def pending(session: Executor, user_id: int, *, limit: int = MAX_SHOWN) -> list[Notice]:
    """The user's waiting notices, oldest first (read only). Asked on every chat message, so a prebuilt
    Core statement on the session's connection: no ORM objects for what is nearly always no rows."""
    rows = (await _PENDING.run(session, {"p_uid": user_id, "p_limit": limit})).all()
    return [Notice(outbox_id=r.id, kind=r.kind, text=str((r.payload or {}).get("text", "")), created_at=r.created_at,
                   expired=bool((r.payload or {}).get("expired"))) for r in rows]


async def take(target: Executor, user_id: int, *, now_ms: int, limit: int = MAX_SHOWN) -> list[Notice]:
    """The waiting notices, marked delivered (and their reminders sent) in the caller's transaction."""
    notices = await pending(target, user_id, limit=limit)
    if not notices:
        return []
    session = await orm(target)
    ids = [n.outbox_id for n in notices]
    claimed = (await session.execute(
        select(OutboundMessageRow.id, OutboundMessageRow.reminder_id)
        .where(OutboundMessageRow.id.in_(ids), OutboundMessageRow.status == "pending")
        .with_for_update())).all()
    shown = {row.id for row in claimed}
    await session.execute(
        update(OutboundMessageRow).where(OutboundMessageRow.id.in_(shown))
        .values(status="sent", receipt={"inapp": True}, updated_at=now_ms)
        .execution_options(synchronize_session=False))
    reminder_ids = [row.reminder_id for row in claimed if row.reminder_id is not None]
    if reminder_ids:
        # A reminder that fell to the in-app rung stays `locked` until the user sees it.
        await session.execute(
            update(ReminderRow).where(ReminderRow.id.in_(reminder_ids), ReminderRow.status == "locked")
            .values(status="sent", sent_at=now_ms, updated_at=now_ms)
            .execution_options(synchronize_session=False))
    for row in claimed:
        session.add(DeliveryLogRow(outbox_id=row.id, reminder_id=row.reminder_id, user_id=user_id, channel="inapp",
                                   status="success", created_at=now_ms))
    return [n for n in notices if n.outbox_id in shown]
