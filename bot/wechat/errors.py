"""The one table from WeChat errcodes to failure classes (the retry policy), the typed errors built on it, and
the one reading of an answer (`parse_answer`) that turns an HTTP status and body into data or one of them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from schedule.channel import Failure

FailureClass = Failure  # the failure classes are the schedule package's; WeChat's errcodes map onto them


@dataclass(frozen=True)
class ErrcodeRule:
    failure: FailureClass
    meaning: str
    retry_after_s: int | None = None  # minimum wait before the next attempt
    until_tomorrow: bool = False  # the daily quota is spent
    split: bool = False  # resend the text in ≤ 2048-byte parts
    alert: bool = False  # needs an operator: one ERROR line per pause names `setting`
    setting: str | None = None  # a configuration failure: what to fix
    ladder: bool = False  # only this channel is broken (a bad template): its rows go on down the ladder


ERRCODES: dict[int, ErrcodeRule] = {
    -1: ErrcodeRule(FailureClass.TRANSIENT, "system busy"),
    40001: ErrcodeRule(FailureClass.AUTH, "invalid credential (access_token invalid or not latest)"),
    40014: ErrcodeRule(FailureClass.AUTH, "invalid access_token"),
    42001: ErrcodeRule(FailureClass.AUTH, "access_token expired"),
    45011: ErrcodeRule(FailureClass.RATE_LIMIT, "API minute quota reached", retry_after_s=60),
    45009: ErrcodeRule(FailureClass.RATE_LIMIT, "API daily quota reached", until_tomorrow=True),
    45015: ErrcodeRule(FailureClass.WINDOW, "response out of time limit (48 h window closed)"),
    45047: ErrcodeRule(FailureClass.WINDOW, "out of response count limit"),
    43004: ErrcodeRule(FailureClass.GONE, "require subscribe (user unfollowed)"),
    43019: ErrcodeRule(FailureClass.GONE, "user is in the blacklist"),
    45002: ErrcodeRule(FailureClass.INVALID_PAYLOAD, "content size out of limit", split=True),
    # Not worth a retry: the same call fails the same way.
    43101: ErrcodeRule(FailureClass.WINDOW, "user refused to accept the message"),
    # One row's data the template refuses (a value too long or in the wrong format for its keyword): that row
    # goes on down the ladder, every other row keeps the rung (no pause; a bad template id is 40037 below).
    47003: ErrcodeRule(FailureClass.INVALID_PAYLOAD, "argument invalid (this row's template data)", ladder=True),
    40003: ErrcodeRule(FailureClass.GONE, "invalid openid"),
    # Configuration incidents: no row can succeed until the account owner fixes a setting. The API pauses
    # (every call for the account-wide ones; the template rung for a bad template, whose rows go on down
    # the ladder), one ERROR line per pause names the setting, and rows spend no delivery attempts: they
    # wait up to the catch-up window, then go down the ladder.
    40013: ErrcodeRule(FailureClass.CONFIG, "invalid appid", retry_after_s=600, alert=True, setting="WECHAT_APP_ID"),
    40125: ErrcodeRule(FailureClass.CONFIG, "invalid appsecret", retry_after_s=600, alert=True,
                       setting="WECHAT_APP_SECRET"),
    40164: ErrcodeRule(FailureClass.CONFIG, "caller IP not in the API IP whitelist", retry_after_s=600, alert=True,
                       setting="the IP whitelist (公众号后台 → 基本配置 → IP白名单)"),
    41001: ErrcodeRule(FailureClass.CONFIG, "access_token missing", retry_after_s=600, alert=True,
                       setting="WECHAT_APP_ID / WECHAT_APP_SECRET (no access token was issued)"),
    40037: ErrcodeRule(FailureClass.CONFIG, "invalid template_id", retry_after_s=600, alert=True, ladder=True,
                       setting="WECHAT_TEMPLATE_ID_REMINDER"),
}
_UNKNOWN = ErrcodeRule(FailureClass.UNKNOWN, "unclassified errcode")


# A 40164's errmsg names the caller's IP: "invalid ip 1.2.3.4 ipv6 ::ffff:1.2.3.4, not in whitelist rid: …"
_WHITELIST_IP = re.compile(r"invalid ip ([0-9a-fA-F.:]+)")


def whitelist_ip(errmsg: str) -> str | None:
    """The IP WeChat saw the call come from (the one to whitelist), from a 40164's errmsg."""
    match = _WHITELIST_IP.search(errmsg)
    return match.group(1) if match else None


def rule_for(errcode: int) -> ErrcodeRule:
    return ERRCODES.get(errcode, _UNKNOWN)


def classify(errcode: int) -> FailureClass:
    return rule_for(errcode).failure


class WeChatError(Exception):
    """A failed WeChat API call, classified for the retry policy."""

    def __init__(self, message: str, *, failure: FailureClass, errcode: int | None = None,
                 rule: ErrcodeRule | None = None) -> None:
        super().__init__(message)
        self.failure = failure
        self.errcode = errcode
        self.rule = rule or _UNKNOWN

    @property
    def retryable(self) -> bool:
        return self.failure in (FailureClass.TRANSIENT, FailureClass.RATE_LIMIT, FailureClass.UNKNOWN) \
            and not self.rule.until_tomorrow


class WeChatAPIError(WeChatError):
    """WeChat answered with a non-zero errcode."""

    def __init__(self, errcode: int, errmsg: str, *, api: str = "") -> None:
        rule = rule_for(errcode)
        super().__init__(f"{api or 'wechat'}: errcode {errcode} ({errmsg or rule.meaning})",
                         failure=rule.failure, errcode=errcode, rule=rule)
        self.errmsg = errmsg
        self.api = api


class WeChatTransportError(WeChatError):
    """Timeout, connection failure, 5xx or an unreadable body: transient by definition.

    `maybe_delivered`: the request may have reached WeChat (it was written and no complete answer came: a
    timeout, a reset); False when it surely did not (no connection was made, no token). `api`: the call."""

    def __init__(self, message: str, *, maybe_delivered: bool = False, api: str | None = None) -> None:
        super().__init__(message, failure=FailureClass.TRANSIENT, rule=ERRCODES[-1])
        self.maybe_delivered = maybe_delivered
        self.api = api


class PartialSendError(WeChatError):
    """A multi-part text failed after some parts went out; `sent` holds their receipts."""

    def __init__(self, cause: WeChatError, sent: list[tuple[int, str | None]]) -> None:
        super().__init__(str(cause), failure=cause.failure, errcode=cause.errcode, rule=cause.rule)
        self.cause = cause
        self.sent = sent


def parse_answer(api: str, status: int, body: bytes) -> dict[str, Any]:
    """The JSON object WeChat answered `api` with; a 5xx or an unreadable body is a WeChatTransportError, a
    non-zero errcode a classified WeChatAPIError. The body is read whatever its content-type (WeChat sometimes
    says text/plain), and only its errcode and errmsg reach an error's text."""
    if status >= 500:
        raise WeChatTransportError(f"{api}: HTTP {status}", api=api)
    try:
        data = json.loads(body)
    except ValueError:
        raise WeChatTransportError(f"{api}: unreadable body (HTTP {status})", api=api) from None
    if not isinstance(data, dict):
        raise WeChatTransportError(f"{api}: body is not a JSON object", api=api)
    errcode = data.get("errcode") or 0
    if errcode:
        try:
            code = int(errcode)
        except (TypeError, ValueError):
            raise WeChatTransportError(f"{api}: unreadable errcode (HTTP {status})", api=api) from None
        raise WeChatAPIError(code, str(data.get("errmsg", "")), api=api)
    return data
