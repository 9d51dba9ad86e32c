"""`schedbot wechat menu|template` against the fake WeChat API over loopback HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.wechat.admin import DEFAULT_MENU, menu_problems
from bot.wechat.messages import CLICK_TEXT
from fakes.wechat import FakeWeChatAPI
from tests.bot.test_cli import run

REMINDER = {"template_id": "tpl_reminder_ok", "title": "日程提醒",
            "content": "{{first.DATA}}\n事项：{{thing1.DATA}}\n时间：{{time2.DATA}}\n{{remark.DATA}}",
            "primary_industry": "IT科技", "deputy_industry": "互联网|电子商务", "example": ""}
OTHER = {"template_id": "tpl_order", "title": "订单通知", "content": "{{keyword1.DATA}}",
         "primary_industry": "IT科技", "deputy_industry": "互联网|电子商务", "example": ""}


@pytest.fixture
def fake() -> Iterator[FakeWeChatAPI]:
    with FakeWeChatAPI() as api:
        yield api


def wechat(fake: FakeWeChatAPI, tmp_path: Path, *args: str, **env: str):  # type: ignore[no-untyped-def]
    return run(["wechat", *args], tmp_path, WECHAT_APP_ID=fake.app_id, WECHAT_APP_SECRET=fake.app_secret,
               WECHAT_TOKEN="tok", WECHAT_API_BASE=fake.base_url, **env)


def test_menu_create_show_delete_round_trip(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    created = wechat(fake, tmp_path, "menu")
    assert created.returncode == 0, created.stdout + created.stderr
    assert "✔ menu created: 今日 | 本周 | 更多" in created.stdout
    assert fake.menu == DEFAULT_MENU
    assert [c.endpoint for c in fake.calls] == ["stable_token", "menu/create"]

    shown = wechat(fake, tmp_path, "menu", "--show")
    assert shown.returncode == 0
    assert json.loads(shown.stdout)["button"] == DEFAULT_MENU["button"]

    deleted = wechat(fake, tmp_path, "menu", "--delete")
    assert deleted.returncode == 0 and fake.menu is None
    empty = wechat(fake, tmp_path, "menu", "--show")
    assert empty.returncode == 0 and "no custom menu" in empty.stdout


def test_default_menu_uses_the_click_keys_the_webhook_understands() -> None:
    keys = {b["key"] for top in DEFAULT_MENU["button"] for b in [top, *top.get("sub_button", [])] if "key" in b}
    assert {"TODAY", "WEEK", "PAGE"} <= keys
    assert keys <= set(CLICK_TEXT)
    assert menu_problems(DEFAULT_MENU) == []


def test_menu_from_a_toml_file_replaces_the_default(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    (tmp_path / "menu.toml").write_text(
        '[[button]]\ntype = "click"\nname = "今天"\nkey = "TODAY"\n\n'
        '[[button]]\ntype = "view"\nname = "官网"\nurl = "https://example.com/"\n', encoding="utf-8")
    result = wechat(fake, tmp_path, "menu", "--file", "menu.toml")
    assert result.returncode == 0, result.stdout
    assert fake.menu == {"button": [{"type": "click", "name": "今天", "key": "TODAY"},
                                    {"type": "view", "name": "官网", "url": "https://example.com/"}]}


def test_a_menu_over_wechats_limits_is_refused_before_any_call(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    menu = {"button": [{"type": "click", "name": f"按钮{i}", "key": f"K{i}"} for i in range(4)]}
    (tmp_path / "menu.json").write_text(json.dumps(menu), encoding="utf-8")
    too_many = wechat(fake, tmp_path, "menu", "--file", "menu.json")
    assert too_many.returncode == 2 and "1–3 top-level buttons" in too_many.stdout
    menu = {"button": [{"type": "click", "name": "一个非常长的菜单名字", "key": "K"}, {"type": "click", "name": "x"}]}
    (tmp_path / "menu.json").write_text(json.dumps(menu), encoding="utf-8")
    bad = wechat(fake, tmp_path, "menu", "--file", "menu.json")
    assert bad.returncode == 2
    assert "'一个非常长的菜单名字': a name is 1–16 bytes" in bad.stdout and "'x': a click button needs a key" in bad.stdout
    (tmp_path / "broken.toml").write_text("[[button]\n", encoding="utf-8")
    broken = wechat(fake, tmp_path, "menu", "--file", "broken.toml")
    assert broken.returncode == 2 and "cannot read the menu file" in broken.stdout
    for args in (["--file", "missing.toml"], ["--file", "missing.toml", "--dry-run"], ["--file", "broken.toml",
                                                                                    "--dry-run"]):
        unreadable = wechat(fake, tmp_path, "menu", *args)
        assert unreadable.returncode == 2 and "cannot read the menu file" in unreadable.stdout
        assert "Traceback" not in unreadable.stderr
    assert fake.calls == []


def test_whitelist_error_names_the_ip_to_add(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    fake.script("stable_token", 40164)
    result = wechat(fake, tmp_path, "menu")
    assert result.returncode == 1
    assert "errcode 40164" in result.stdout and "add 127.0.0.1 to the IP whitelist" in result.stdout
    assert fake.menu is None


def test_menu_create_errcode_is_reported(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    fake.script("menu/create", 48001)
    result = wechat(fake, tmp_path, "menu")
    assert result.returncode == 1 and "errcode 48001" in result.stdout and "verified service account" in result.stdout


def test_missing_credentials_say_which_variables(tmp_path: Path) -> None:
    result = run(["wechat", "menu"], tmp_path)
    assert result.returncode == 2 and "set WECHAT_APP_ID, WECHAT_APP_SECRET" in result.stdout


def test_template_unset_prints_fields_and_the_templates_that_fit(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    fake.private_templates = [OTHER, REMINDER]
    result = wechat(fake, tmp_path, "template")
    assert result.returncode == 1
    assert "{{thing1.DATA}}" in result.stdout and "{{time2.DATA}}" in result.stdout
    assert "WECHAT_TEMPLATE_ID_REMINDER is not set" in result.stdout
    assert "tpl_reminder_ok  日程提醒" in result.stdout and "tpl_order" not in result.stdout


def test_template_checks_the_configured_id(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    fake.private_templates = [OTHER, REMINDER]
    good = wechat(fake, tmp_path, "template", WECHAT_TEMPLATE_ID_REMINDER="tpl_reminder_ok")
    assert good.returncode == 0 and "✔ WECHAT_TEMPLATE_ID_REMINDER=tpl_reminder_ok (日程提醒)" in good.stdout
    unknown = wechat(fake, tmp_path, "template", WECHAT_TEMPLATE_ID_REMINDER="tpl_gone")
    assert unknown.returncode == 1 and "is not among the account's 2 templates" in unknown.stdout
    wrong = wechat(fake, tmp_path, "template", WECHAT_TEMPLATE_ID_REMINDER="tpl_order")
    assert wrong.returncode == 1
    assert "tpl_order (订单通知) lacks {{thing1.DATA}}, {{time2.DATA}}" in wrong.stdout
    assert "tpl_reminder_ok" in wrong.stdout
    assert [c.endpoint for c in fake.calls].count("template/get_all_private_template") == 3


def test_an_auth_errcode_refetches_the_token_once_and_never_forces_it(fake: FakeWeChatAPI, tmp_path: Path) -> None:
    """A command never forces a refresh (that would invalidate the token the running bot uses): on 40001 it asks
    for the current token once, and when WeChat hands the same one back it reports the errcode, no retry, no loop."""
    fake.script("menu/create", 40001)
    refused = wechat(fake, tmp_path, "menu")
    assert refused.returncode == 1 and "errcode 40001" in refused.stdout and fake.menu is None
    assert [c.endpoint for c in fake.calls] == ["stable_token", "menu/create", "stable_token"]
    assert not any(c.body.get("force_refresh") for c in fake.calls_to("stable_token"))
    again = wechat(fake, tmp_path, "menu")  # the next command's token works
    assert again.returncode == 0 and fake.menu == DEFAULT_MENU


async def test_the_fields_checked_are_the_fields_the_template_channel_fills() -> None:
    from typing import Any

    from bot.wechat.admin import REMINDER_FIELDS
    from bot.wechat.delivery import WeChatTemplateChannel
    from schedule.channel import Outgoing

    class CapturingClient:
        def __init__(self) -> None:
            self.data: dict[str, Any] = {}

        async def send_template(self, openid: str, template_id: str, data: dict[str, Any], **_: Any) -> str:
            self.data = data
            return "1"

    client = CapturingClient()
    channel = WeChatTemplateChannel(client, "tpl")  # type: ignore[arg-type]
    await channel.send(Outgoing(outbox_id=1, user_id=1, openid="o", kind="reminder", idempotency_key="k",
                                payload={"text": "提醒：开会", "title": "开会", "when": "6月19日 15:00"}))
    assert set(client.data) == set(REMINDER_FIELDS)
