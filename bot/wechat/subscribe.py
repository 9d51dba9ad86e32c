"""Subscription messages (订阅通知, issue 30): the ladder's rung after the customer-service window, and the
grants users give through the subscribe popup (`subscribe_msg_popup_event`, `…_change_event`, `…_sent_event`).

A one-time grant is spent before the call (two workers never spend one grant twice) and given back when the
call surely did not reach WeChat; a refusal (43101) is recorded and the row falls to the next rung.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.delivery import _failure_of
from bot.wechat.client import WeChatClient
from bot.wechat.errors import WeChatAPIError, WeChatError
from bot.wechat.messages import InboundMessage
from schedule import grants
from schedule.channel import DeliveryFailure, Outgoing, Receipt
from schedule.clock import Clock, now_ms
from schedule.db import in_transaction

GRANT_EVENTS = frozenset({"subscribe_msg_popup_event", "subscribe_msg_change_event", "subscribe_msg_sent_event"})
REFUSED = 43101  # user refuse to accept the msg


async def record_grants(session: AsyncSession, message: InboundMessage, *, now_ms: int) -> None:
    """Store what a grant event says (accepted templates gain one send; refused ones stop)."""
    if message.user_id is None or not (message.accepted_template_ids or message.rejected_template_ids):
        return
    await grants.record(session, message.user_id, accepted=message.accepted_template_ids,
                        rejected=message.rejected_template_ids, now_ms=now_ms)


WINDOW_MS = 48 * 3_600_000


async def hint_once(session: AsyncSession, user_id: int, remind_ats: list[int], template_id: str, *,
                    now_ms: int) -> bool:
    """Whether to tell the user, once, how a reminder beyond the 48-hour window reaches them: a reminder that
    far ahead, and no consent asked for or given yet (the asking is recorded as a grant row 'asked')."""
    if not any(at - now_ms > WINDOW_MS for at in remind_ats):
        return False
    return await grants.ask(session, user_id, template_id, now_ms=now_ms)


class WeChatSubscribeChannel:
    """`message/subscribe/bizsend` for users who granted the template; without a grant the row moves down
    the ladder (a window-class failure) without a call."""

    name = "subscribe"

    def __init__(self, client: WeChatClient, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                 template_id: str, *, long_term: bool = False, page_url: str | None = None) -> None:
        self._client = client
        self._sessions = sessions
        self._clock = clock
        self._template_id = template_id
        self._long_term = long_term
        self._page_url = page_url

    async def send(self, message: Outgoing) -> Receipt:
        user, template = message.user_id, self._template_id
        taken = await in_transaction(self._sessions, lambda s: grants.take(
            s, user, template, long_term=self._long_term, now_ms=now_ms(self._clock)))
        if not taken:
            raise DeliveryFailure("window", "no subscription grant for this template")
        payload = message.payload
        data: dict[str, Any] = payload.get("subscribe_data") or {
            "thing1": {"value": str(payload.get("title") or message.text)[:20]},
            "time2": {"value": str(payload.get("when") or "")[:20]},
        }
        try:
            msgid = await self._client.send_subscribe(message.openid, template, data, page=self._page_url)
        except WeChatError as exc:
            await self._after_failure(user, exc)
            raise _failure_of(exc) from exc
        return Receipt({0: msgid})

    async def _after_failure(self, user: int, exc: WeChatError) -> None:
        at = now_ms(self._clock)
        if isinstance(exc, WeChatAPIError) and exc.errcode == REFUSED:
            await in_transaction(self._sessions, lambda s: grants.refuse(s, user, self._template_id, now_ms=at))
        elif isinstance(exc, WeChatAPIError) and not self._long_term:  # WeChat answered: nothing was sent
            await in_transaction(self._sessions, lambda s: grants.give_back(s, user, self._template_id, now_ms=at))
