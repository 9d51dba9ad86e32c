"""Inbound store: claims, finishing, recovery of messages a crashed process left unfinished."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import inbound
from schedule.model import InboundMessageRow, OutboundMessageRow, UserRow


async def test_claim_finish_and_retry(sessions: async_sessionmaker[AsyncSession]) -> None:
    assert (await inbound.claim(sessions, "msg:1", now_ms=10)).fresh
    again = await inbound.claim(sessions, "msg:1", now_ms=11)
    assert (again.fresh, again.status, again.reply) == (False, "processing", None)
    async with sessions.begin() as session:
        await inbound.finish(session, "msg:1", reply="<xml/>", user_id=None)
    done = await inbound.claim(sessions, "msg:1", now_ms=12)
    assert (done.fresh, done.status, done.reply) == (False, "done", "<xml/>")


async def test_recover_unfinished_notifies_and_closes(sessions: async_sessionmaker[AsyncSession]) -> None:
    async with sessions.begin() as session:
        user = UserRow(wechat_openid="o-crash", created_at=0, window_sent_count=0)
        session.add(user)
        await session.flush()
        uid = user.id
    await inbound.claim(sessions, "msg:stuck-known", now_ms=1_000, user_id=uid)
    await inbound.claim(sessions, "msg:stuck-unknown", now_ms=1_000)
    await inbound.claim(sessions, "msg:recent", now_ms=90_000, user_id=uid)
    async with sessions.begin() as session:
        assert await inbound.recover_unfinished(session, received_before_ms=60_000, now_ms=100_000) == 2
    async with sessions.begin() as session:
        assert await inbound.recover_unfinished(session, received_before_ms=60_000, now_ms=100_000) == 0
    async with sessions() as session:
        statuses = dict((await session.execute(select(InboundMessageRow.dedupe_key, InboundMessageRow.status))).all())
        notices = (await session.scalars(select(OutboundMessageRow))).all()
    assert statuses == {"msg:stuck-known": "done", "msg:stuck-unknown": "done", "msg:recent": "processing"}
    assert [(n.kind, n.user_id, n.payload["text"]) for n in notices] == [("notice", uid, inbound.UNFINISHED_NOTICE)]


async def test_purge_forgets_old_rows(sessions: async_sessionmaker[AsyncSession]) -> None:
    await inbound.claim(sessions, "msg:old", now_ms=1)
    await inbound.claim(sessions, "msg:new", now_ms=1_000_000)
    async with sessions.begin() as session:
        assert await inbound.purge(session, received_before_ms=500) == 1
