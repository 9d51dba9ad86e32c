"""Forgetting a user (unfollow, `schedbot user forget`) leaves none of their words in any table."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import outbox
from schedule.clock import to_ms
from schedule.domain import NewItem, NewReminder
from schedule.model import (
    AgentMessageRow,
    Base,
    DeliveryLogRow,
    DialogStateRow,
    InboundMessageRow,
)
from schedule.service import ScheduleService
from schedule.testing import FrozenClock

SECRET = "去协和医院复查甲状腺"
ESCAPED = SECRET.encode("unicode_escape").decode()


async def test_forget_leaves_no_personal_text_anywhere(sessions: async_sessionmaker[AsyncSession],
                                                      clock: FrozenClock) -> None:
    service = ScheduleService(sessions, clock)
    user = await service.get_or_create_user("o-private")
    other = await service.get_or_create_user("o-other")
    at = to_ms(datetime(2026, 6, 19, 9, tzinfo=ZoneInfo("Asia/Shanghai")))
    for owner in (user, other):
        await service.create_item(owner.id, NewItem(kind="task", title=SECRET, timezone="Asia/Shanghai", due_at=at,
                                                    source_text=f"明天九点提醒我{SECRET}",
                                                    reminders=(NewReminder(remind_at=at),)))
    await service.issue_api_token("o-private", label="phone")
    async with sessions.begin() as session:
        for owner in (user, other):
            await outbox.enqueue(session, user_id=owner.id, idempotency_key=f"r:{owner.id}", kind="reminder",
                                 payload={"text": f"⏰ {SECRET}"}, now_ms=at)
            session.add(DeliveryLogRow(user_id=owner.id, channel="wechat", status="failed",
                                       error_message=f"failed sending {SECRET}", created_at=at))
            session.add(InboundMessageRow(dedupe_key=f"msg-{owner.id}", user_id=owner.id, received_at=at,
                                          status="done", reply=f"<xml>已记录：{SECRET}</xml>"))
            session.add(AgentMessageRow(user_id=owner.id, role="user", content=SECRET, created_at=at))
        session.add(DialogStateRow(user_id=user.id, pending_intent={"intent": {"title": SECRET}}, expires_at=at))

    await service.forget_user(user.id)

    leftovers: dict[str, int] = {}
    async with sessions() as session:
        for table in Base.metadata.sorted_tables:
            rows = (await session.execute(text(f"SELECT * FROM {table.name}"))).all()
            texts = [" ".join(str(value) for value in row) for row in rows]
            hits = [t for t in texts if SECRET in t or ESCAPED in t]  # JSON columns may store \uXXXX
            if hits:
                leftovers[table.name] = len(hits)
    # exactly the other user's copies remain: item, outbox row, log, stored reply, agent history
    assert leftovers == {"schedule_items": 1, "outbound_messages": 1, "schedule_delivery_logs": 1,
                         "inbound_messages": 1, "agent_messages": 1}
    assert await service.user_for_token("nope") is None and await service.api_tokens("o-private") == []
