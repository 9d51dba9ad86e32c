"""WeChat delivery channels for the worker: customer-service text and template messages.

WeChat's classified errors are translated here into the schedule package's DeliveryFailure,
so the worker's retry policy never sees a platform type.
"""

from __future__ import annotations

from typing import Any

from bot.wechat.client import WeChatClient, template_client_msg_id
from bot.wechat.errors import PartialSendError, WeChatError
from bot.wechat.xml import split_utf8, strip_illegal
from schedule.channel import DeliveryFailure, Failure, Outgoing, Receipt


def _failure_of(exc: WeChatError) -> DeliveryFailure:
    sent = dict(exc.sent) if isinstance(exc, PartialSendError) else {}
    failure: Failure = exc.failure.value
    return DeliveryFailure(failure, str(exc), code=str(exc.errcode) if exc.errcode is not None else None,
                           retry_after_s=exc.rule.retry_after_s, until_tomorrow=exc.rule.until_tomorrow,
                           sent_parts=sent, setting=exc.rule.setting if exc.rule.alert else None,
                           ladder=exc.rule.ladder)


class WeChatCustomChannel:
    """Customer-service text message (only while the user's 48 h window is open)."""

    name = "wechat"
    needs_window = True

    def __init__(self, client: WeChatClient) -> None:
        self._client = client

    @staticmethod
    def parts(message: Outgoing) -> int:
        """Custom messages this row still needs: WeChat counts each part of a split text in the window."""
        total = len(split_utf8(strip_illegal(message.text)))
        return max(1, total - sum(1 for index in message.sent_parts if index < total))

    async def send(self, message: Outgoing) -> Receipt:
        try:
            parts = await self._client.send_text(message.openid, message.text,
                                                 skip_parts=frozenset(message.sent_parts))
        except WeChatError as exc:
            raise _failure_of(exc) from exc
        return Receipt({p.index: p.msgid for p in parts})


class WeChatTemplateChannel:
    """Template message: reaches the user outside the window; client_msg_id makes replays idempotent."""

    name = "template"

    def __init__(self, client: WeChatClient, template_id: str, *, page_url: str | None = None) -> None:
        self._client = client
        self._template_id = template_id
        self._page_url = page_url

    async def send(self, message: Outgoing) -> Receipt:
        payload = message.payload
        data: dict[str, Any] = payload.get("template_data") or {
            "thing1": {"value": str(payload.get("title") or message.text)[:20]},
            "time2": {"value": str(payload.get("when") or "")[:20]},
        }
        try:
            msgid = await self._client.send_template(
                message.openid, self._template_id, data,
                client_msg_id=template_client_msg_id(message.idempotency_key), url=self._page_url)
        except WeChatError as exc:
            raise _failure_of(exc) from exc
        return Receipt({0: msgid})
