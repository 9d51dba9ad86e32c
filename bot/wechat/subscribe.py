"""Subscription messages (订阅通知): the ladder's rung after the customer-service window, and the
grants users give through the subscribe popup (`subscribe_msg_popup_event`, `…_change_event`, `…_sent_event`).

A one-time grant is spent before the call (two workers never spend one grant twice), held by the row that
spent it, and given back when the call surely did not reach WeChat; a refusal (43101) is recorded and the row
falls to the next rung.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.wechat.client import BIZSEND, WeChatClient
from bot.wechat.delivery import failure_of
from bot.wechat.errors import WeChatAPIError, WeChatError, WeChatTransportError
from bot.wechat.messages import InboundMessage
from bot.wechat.push_data import PageLink, fields
from schedule import grants
from schedule.channel import DeliveryFailure, Outgoing, Receipt
from schedule.clock import Clock, now_ms
from schedule.db import in_transaction

GRANT_EVENTS = frozenset({"subscribe_msg_popup_event", "subscribe_msg_change_event", "subscribe_msg_sent_event"})
REFUSED = 43101  # user refuse to accept the msg
UNKNOWN_AFTER_SEND = "unknown_after_send"
HELD = grants.HELD_PART  # the receipt part that marks a row holding a spent grant (no message part has it)


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
    the ladder (a window-class failure) without a call.

    A one-time grant is the user's consent to one notice: only a reminder spends it (a digest or a scheduled
    answer goes on down the ladder, unless the template is long-term). The row that spends a grant holds it
    (marked in its receipt, in the transaction that spends it): a retry, or a replay after a crash,
    calls again on that grant and never spends a second one. A bizsend that may have reached WeChat with no
    answer (a timeout) is `unknown_after_send`: it is retried on this rung, never sent on by another one (it
    may well have arrived); a call that surely did not happen gives the grant back.
    """

    name = "subscribe"

    def __init__(self, client: WeChatClient, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                 template_id: str, *, long_term: bool = False, page_link: PageLink | None = None) -> None:
        self._client = client
        self._sessions = sessions
        self._clock = clock
        self._template_id = template_id
        self._long_term = long_term
        self._page_link = page_link

    async def send(self, message: Outgoing) -> Receipt:
        user, template = message.user_id, self._template_id
        if not self._long_term and message.kind != "reminder":
            raise DeliveryFailure("window", "a one-time grant is kept for reminders")
        held = not self._long_term and HELD in message.sent_parts
        if not held:
            taken = await in_transaction(self._sessions, lambda s: grants.take(
                s, user, template, long_term=self._long_term, now_ms=now_ms(self._clock),
                outbox_id=message.outbox_id))
            if not taken:
                raise DeliveryFailure("window", "no subscription grant for this template")
        data = message.payload.get("subscribe_data") or fields(message, now_ms=now_ms(self._clock))
        page = await self._page_link(message) if self._page_link is not None else None
        try:
            msgid = await self._client.send_subscribe(message.openid, template, data, page=page)
        except WeChatError as exc:
            await self._after_failure(user, exc, held=held)
            failure = failure_of(exc)
            if self._long_term:
                raise failure from exc
            if _maybe_delivered(exc):
                raise DeliveryFailure("unknown", f"{exc} (it may have reached the user: retried on this rung)",
                                      code=UNKNOWN_AFTER_SEND, sent_parts={HELD: None}) from exc
            if held and exc.errcode != REFUSED:
                failure.sent_parts = {HELD: None}  # the grant stays with this row: an earlier call may have used it
            raise failure from exc
        return Receipt({0: msgid})

    async def _after_failure(self, user: int, exc: WeChatError, *, held: bool) -> None:
        at = now_ms(self._clock)
        if isinstance(exc, WeChatAPIError) and exc.errcode == REFUSED:
            await in_transaction(self._sessions, lambda s: grants.refuse(s, user, self._template_id, now_ms=at))
        elif not (self._long_term or held or _maybe_delivered(exc)):  # surely not sent: the grant is theirs again
            await in_transaction(self._sessions, lambda s: grants.give_back(s, user, self._template_id, now_ms=at))


def _maybe_delivered(exc: WeChatError) -> bool:
    """The bizsend request itself went out and no answer says what became of it."""
    return isinstance(exc, WeChatTransportError) and exc.maybe_delivered and exc.api == BIZSEND
