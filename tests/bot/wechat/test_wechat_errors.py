"""Every errcode of the failure table lands in its failure class, with the retry hints the worker needs."""

from __future__ import annotations

import pytest

from bot.wechat.errors import ERRCODES, FailureClass, WeChatAPIError, WeChatTransportError, classify, rule_for

SPEC_TABLE = {
    -1: FailureClass.TRANSIENT,
    45011: FailureClass.RATE_LIMIT,
    45009: FailureClass.RATE_LIMIT,
    40001: FailureClass.AUTH,
    40014: FailureClass.AUTH,
    42001: FailureClass.AUTH,
    45015: FailureClass.WINDOW,
    45047: FailureClass.WINDOW,
    43004: FailureClass.GONE,
    43019: FailureClass.GONE,
    45002: FailureClass.INVALID_PAYLOAD,
}
NOT_RETRIED = {  # the same call would fail the same way
    43101: FailureClass.WINDOW,  # the user refused the message: next rung
    40003: FailureClass.GONE,  # bad openid
    47003: FailureClass.INVALID_PAYLOAD,  # one row's template data: that row goes down the ladder
}
# Configuration incidents: only the account owner can fix them
CONFIGURATION = {40013: "WECHAT_APP_ID", 40125: "WECHAT_APP_SECRET", 40164: "IP whitelist", 41001: "WECHAT_APP_ID",
                 40037: "WECHAT_TEMPLATE_ID_REMINDER"}


@pytest.mark.parametrize(("errcode", "failure"), sorted(SPEC_TABLE.items()))
def test_spec_errcodes_classified(errcode: int, failure: FailureClass) -> None:
    assert classify(errcode) is failure
    assert WeChatAPIError(errcode, "x").failure is failure


def test_table_is_exactly_the_spec() -> None:
    assert set(ERRCODES) == set(SPEC_TABLE) | set(NOT_RETRIED) | set(CONFIGURATION)


@pytest.mark.parametrize(("errcode", "failure"), sorted(NOT_RETRIED.items()))
def test_errcodes_that_are_not_retried(errcode: int, failure: FailureClass) -> None:
    assert classify(errcode) is failure and not WeChatAPIError(errcode, "").retryable


@pytest.mark.parametrize(("errcode", "setting"), sorted(CONFIGURATION.items()))
def test_configuration_errcodes_name_the_setting_and_wait(errcode: int, setting: str) -> None:
    rule = rule_for(errcode)
    assert rule.failure is FailureClass.CONFIG and rule.alert
    assert rule.setting is not None and setting in rule.setting
    assert (rule.retry_after_s or 0) >= 600  # rows wait for the operator instead of burning attempts
    assert rule.ladder == (errcode == 40037)  # a bad template id: only that rung is closed


@pytest.mark.parametrize("errcode", [48001, 99999, 1])
def test_other_errcodes_are_unknown(errcode: int) -> None:
    assert classify(errcode) is FailureClass.UNKNOWN
    assert WeChatAPIError(errcode, "").retryable


def test_rate_limit_hints() -> None:
    assert rule_for(45011).retry_after_s == 60
    assert rule_for(45009).until_tomorrow
    assert WeChatAPIError(45011, "").retryable
    assert not WeChatAPIError(45009, "").retryable


def test_payload_hints() -> None:
    assert rule_for(45002).split and not rule_for(45002).alert
    # one row's bad data is no incident: no alert, no pause, that row alone goes on down the ladder
    assert not rule_for(47003).alert and rule_for(47003).ladder and not WeChatAPIError(47003, "").retryable
    assert rule_for(47003).retry_after_s is None


@pytest.mark.parametrize("errcode", [45015, 45047, 43004, 43019, 40001])
def test_non_retryable_classes(errcode: int) -> None:
    assert not WeChatAPIError(errcode, "").retryable


def test_transport_errors_are_transient() -> None:
    exc = WeChatTransportError("timeout")
    assert exc.failure is FailureClass.TRANSIENT and exc.retryable
