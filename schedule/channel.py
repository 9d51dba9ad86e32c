"""The delivery Channel port: how the worker hands one outbox message to a platform."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class Failure(StrEnum):
    """Why a send did not complete: the one vocabulary of failure classes (the platform's errors are mapped
    onto it, the retry policy decides on it, and the outbox stores its value)."""

    TRANSIENT = "transient"  # retry with backoff and jitter
    RATE_LIMIT = "rate_limit"  # wait (45011 ≥ 60 s) or stop the API until tomorrow (45009)
    AUTH = "auth"  # refresh the token once, retry once
    WINDOW = "window"  # this rung cannot reach the user now (window closed, refused): next rung of the ladder
    GONE = "gone"  # the user is unreachable: fail, stop pushing to them
    INVALID_PAYLOAD = "invalid_payload"  # 45002 split and resend
    CONFIG = "config"  # only the account owner can fix it: pause, alert, spend no attempts (docs/delivery.md#incidents)
    UNKNOWN = "unknown"  # retry, then fail


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One outbox row as a channel sees it."""

    outbox_id: int
    user_id: int
    openid: str
    kind: str
    idempotency_key: str
    payload: dict[str, Any]
    sent_parts: dict[int, str | None] = field(default_factory=dict)  # parts already delivered by an earlier try

    @property
    def text(self) -> str:
        return str(self.payload.get("text", ""))


@dataclass(frozen=True, slots=True)
class Receipt:
    """What the platform returned: every part's message id (None where it gives none)."""

    parts: dict[int, str | None]

    def as_json(self) -> dict[str, Any]:
        return {"parts": {str(k): v for k, v in sorted(self.parts.items())}}


class DeliveryFailure(Exception):
    """A send that did not complete, classified for the retry policy (docs/delivery.md#retries)."""

    def __init__(self, failure: Failure | str, message: str, *, code: str | None = None,
                 retry_after_s: float | None = None, until_tomorrow: bool = False,
                 sent_parts: dict[int, str | None] | None = None, setting: str | None = None,
                 ladder: bool = False) -> None:
        super().__init__(message)
        self.failure = Failure(failure)  # a name outside the vocabulary is a bug: ValueError
        self.code = code
        self.retry_after_s = retry_after_s
        self.until_tomorrow = until_tomorrow
        self.sent_parts = sent_parts or {}
        self.setting = setting  # an incident only the operator can fix: what to fix (alerted once a pause)
        self.ladder = ladder  # a configuration failure of this channel only: rows go on down the ladder


class Channel(Protocol):
    """`needs_window` (optional attribute, default False): sends count against WeChat's customer-service
    window, and the worker skips to the next rung of the ladder when it is closed."""

    name: str

    async def send(self, message: Outgoing) -> Receipt:
        """Deliver the message (skipping `sent_parts`) or raise DeliveryFailure."""
        ...


def parts_of(receipt_json: dict[str, Any] | None) -> dict[int, str | None]:
    if not receipt_json:
        return {}
    return {int(k): v for k, v in (receipt_json.get("parts") or {}).items()}
