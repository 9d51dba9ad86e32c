"""One vocabulary of failure classes: the schedule package's `Failure`. WeChat's errcodes map onto it, the
delivery channels hand it to the worker unchanged, and a name outside it is refused."""

from __future__ import annotations

import pytest

from bot.wechat.delivery import failure_of
from bot.wechat.errors import ERRCODES, WeChatAPIError
from schedule.channel import DeliveryFailure, Failure


@pytest.mark.parametrize("errcode", sorted(ERRCODES))
def test_an_errcode_reaches_the_worker_as_the_schedule_packages_failure_class(errcode: int) -> None:
    error = WeChatAPIError(errcode, "")
    assert type(error.failure) is Failure
    delivered = failure_of(error)
    assert delivered.failure is error.failure and delivered.code == str(errcode)


def test_a_failure_named_by_its_stored_value_is_the_same_class() -> None:
    assert DeliveryFailure("window", "closed").failure is Failure.WINDOW  # as the outbox row stores it


def test_a_name_outside_the_vocabulary_is_refused() -> None:
    with pytest.raises(ValueError, match="windw"):
        DeliveryFailure("windw", "closed")  # a typo, accepted before the class was checked
