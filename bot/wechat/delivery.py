"""WeChat delivery channels for the worker: customer-service text and template messages.

WeChat's classified errors are translated here into the schedule package's DeliveryFailure,
so the worker's retry policy never sees a platform type.
"""

from __future__ import annotations

from bot.wechat.client import WeChatClient, template_client_msg_id
from bot.wechat.errors import PartialSendError, WeChatError
from bot.wechat.push_data import PageLink, fields
from bot.wechat.xml import split_utf8, strip_illegal
from render.push import recounted
from schedule.channel import DeliveryFailure, Outgoing, Receipt
from schedule.clock import Clock, SystemClock, now_ms


def failure_of(exc: WeChatError) -> DeliveryFailure:
    sent = dict(exc.sent) if isinstance(exc, PartialSendError) else {}
    return DeliveryFailure(exc.failure, str(exc), code=str(exc.errcode) if exc.errcode is not None else None,
                           retry_after_s=exc.rule.retry_after_s, until_tomorrow=exc.rule.until_tomorrow,
                           sent_parts=sent, setting=exc.rule.setting if exc.rule.alert else None,
                           ladder=exc.rule.ladder)


class WeChatCustomChannel:
    """Customer-service text message (only while the user's 48 h window is open)."""

    name = "wechat"
    needs_window = True

    def __init__(self, client: WeChatClient, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or SystemClock()

    @staticmethod
    def parts(message: Outgoing) -> int:
        """Custom messages this row still needs: WeChat counts each part of a split text in the window."""
        total = len(split_utf8(strip_illegal(message.text)))
        return max(1, total - sum(1 for index in message.sent_parts if index < total))

    async def send(self, message: Outgoing) -> Receipt:
        try:
            parts = await self._client.send_text(message.openid, self._text(message),
                                                 skip_parts=frozenset(message.sent_parts))
        except WeChatError as exc:
            raise failure_of(exc) from exc
        return Receipt({p.index: p.msgid for p in parts})

    def _text(self, message: Outgoing) -> str:
        """A reminder's countdown is worded when it goes out ("还有 60 分钟" was true when it was due)."""
        due, planned = message.payload.get("due_at"), message.payload.get("remind_at")
        if message.kind != "reminder" or not isinstance(due, int) or not isinstance(planned, int):
            return message.text
        return recounted(message.text, due_at=due, remind_at=planned, now=now_ms(self._clock))


class WeChatTemplateChannel:
    """Template message: reaches the user outside the window; client_msg_id makes replays idempotent."""

    name = "template"

    def __init__(self, client: WeChatClient, template_id: str, *, page_link: PageLink | None = None,
                 clock: Clock | None = None) -> None:
        self._client = client
        self._template_id = template_id
        self._page_link = page_link
        self._clock = clock or SystemClock()

    async def send(self, message: Outgoing) -> Receipt:
        data = message.payload.get("template_data") or fields(message, now_ms=now_ms(self._clock))
        url = await self._page_link(message) if self._page_link is not None else None
        try:
            msgid = await self._client.send_template(
                message.openid, self._template_id, data,
                client_msg_id=template_client_msg_id(message.idempotency_key), url=url)
        except WeChatError as exc:
            raise failure_of(exc) from exc
        return Receipt({0: msgid})
