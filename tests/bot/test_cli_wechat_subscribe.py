"""`schedbot wechat template` lists and checks the subscription-message (订阅通知) templates too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.wechat import FakeWeChatAPI
from tests.bot.test_cli import run

REMINDER = {"template_id": "tpl_reminder_ok", "title": "日程提醒",
            "content": "{{first.DATA}}\n事项：{{thing1.DATA}}\n时间：{{time2.DATA}}\n{{remark.DATA}}",
            "primary_industry": "IT科技", "deputy_industry": "互联网|电子商务", "example": ""}
SUB_OK = {"priTmplId": "sub_ok", "title": "日程提醒", "content": "事项:{{thing1.DATA}}\n时间:{{time2.DATA}}\n",
          "example": "", "type": 2}
SUB_OTHER = {"priTmplId": "sub_order", "title": "订单发货", "content": "单号:{{character_string1.DATA}}\n",
             "example": "", "type": 2}


@pytest.fixture
def fake() -> Iterator[FakeWeChatAPI]:
    with FakeWeChatAPI() as api:
        api.private_templates = [REMINDER]
        api.subscribe_templates = [SUB_OTHER, SUB_OK]
        yield api


def template(fake: FakeWeChatAPI, tmp_path: Path, **env: str):  # type: ignore[no-untyped-def]
    return run(["wechat", "template"], tmp_path, WECHAT_APP_ID=fake.app_id, WECHAT_APP_SECRET=fake.app_secret,
               WECHAT_TOKEN="tok", WECHAT_API_BASE=fake.base_url, WECHAT_TEMPLATE_ID_REMINDER="tpl_reminder_ok", **env)


def test_unset_it_lists_the_subscription_templates_that_fit(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    result = template(fake, tmp_path)
    assert result.returncode == 0, result.stdout
    assert "WECHAT_SUBSCRIBE_TEMPLATE_ID is not set (optional)" in result.stdout
    assert "sub_ok  日程提醒  (one-time)" in result.stdout and "sub_order" not in result.stdout


def test_the_configured_subscription_template_is_checked(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    good = template(fake, tmp_path, WECHAT_SUBSCRIBE_TEMPLATE_ID="sub_ok")
    assert good.returncode == 0 and "✔ WECHAT_SUBSCRIBE_TEMPLATE_ID=sub_ok (日程提醒, one-time)" in good.stdout
    wrong = template(fake, tmp_path, WECHAT_SUBSCRIBE_TEMPLATE_ID="sub_order")
    assert wrong.returncode == 1 and "sub_order (订单发货) lacks {{thing1.DATA}}, {{time2.DATA}}" in wrong.stdout
    gone = template(fake, tmp_path, WECHAT_SUBSCRIBE_TEMPLATE_ID="sub_gone")
    assert gone.returncode == 1 and "not among the account's 2 subscription templates" in gone.stdout
    kind = template(fake, tmp_path, WECHAT_SUBSCRIBE_TEMPLATE_ID="sub_ok", WECHAT_SUBSCRIBE_LONG_TERM="1")
    assert kind.returncode == 1 and "is one-time: set WECHAT_SUBSCRIBE_LONG_TERM=0" in kind.stdout
    assert {c.endpoint for c in fake.calls} >= {"wxaapi/newtmpl/gettemplate"}
