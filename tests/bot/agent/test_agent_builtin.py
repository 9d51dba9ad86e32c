"""No LLM configured: the built-in responder; build_agent picks the implementation from settings."""

from __future__ import annotations

import pytest

from bot.agent import BuiltinResponder, build_agent
from bot.agent.openai_agent import OpenAIAgent
from bot.settings import ConfigError, Settings, load_settings
from schedule.domain import User
from schedule.testing import FrozenClock

USER = User(id=1, wechat_openid="o", timezone="Asia/Shanghai", subscribed=True)


@pytest.mark.parametrize(("text", "opening"), [
    ("你好", "你好！我是日程助手"), ("在吗？", "你好！我是日程助手"), ("谢谢你", "不客气"), ("Thanks!", "不客气"),
    ("明天会下雨吗", "这个我暂时回答不了"), ("推荐一本书", "这个我暂时回答不了"),
])
async def test_builtin_says_what_the_bot_can_do(text: str, opening: str, clock: FrozenClock) -> None:
    answer = await BuiltinResponder().answer(USER, text, now=clock.now())
    assert answer.startswith(opening)
    examples = [line for line in answer.splitlines() if line.startswith("· ")]
    assert len(examples) == 4 and "明天下午三点开会，提前半小时提醒我" in answer


@pytest.mark.parametrize("text", ["好的", "嗯嗯", "OK", "收到！", "知道了。", "👌"])
async def test_an_acknowledgement_gets_a_short_word_not_the_menu(text: str, clock: FrozenClock) -> None:
    assert await BuiltinResponder().answer(USER, text, now=clock.now()) == "好的，有需要随时告诉我。"


async def test_a_sentence_holding_ok_is_not_an_acknowledgement(clock: FrozenClock) -> None:
    answer = await BuiltinResponder().answer(USER, "好的电影推荐一下", now=clock.now())
    assert answer.startswith("这个我暂时回答不了")


def _settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


async def test_build_agent_chooses_by_settings(sessions, clock: FrozenClock) -> None:
    from schedule.service import ScheduleService
    service = ScheduleService(sessions, clock)
    assert isinstance(build_agent(_settings(), service=service, sessions=sessions, clock=clock), BuiltinResponder)
    only_url = _settings(AGENT_BASE_URL="http://127.0.0.1:9/v1")
    assert isinstance(build_agent(only_url, service=service, sessions=sessions, clock=clock), BuiltinResponder)
    agent = build_agent(_settings(AGENT_BASE_URL="http://127.0.0.1:9/v1", AGENT_MODEL="qwen-plus"),
                        service=service, sessions=sessions, clock=clock)
    assert isinstance(agent, OpenAIAgent)
    await agent.aclose()


def test_a_bad_agent_url_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="AGENT_BASE_URL"):
        load_settings(_env_file=None, AGENT_BASE_URL="api.deepseek.com")
    with pytest.raises(ConfigError, match="AGENT_TIMEOUT_S"):
        load_settings(_env_file=None, AGENT_TIMEOUT_S=0)


@pytest.mark.parametrize(("text", "answer"), [
    ("今天几号", "今天是6月18日（周四）。"), ("明天星期几？", "明天是6月19日（周五）。"), ("昨天是几号", "昨天是6月17日（周三）。"),
    ("现在几点", "现在是 6月18日（周四） 10:00。"), ("几点了？", "现在是 6月18日（周四） 10:00。"),
])
async def test_the_date_and_time_are_answered_from_the_clock(text: str, answer: str, clock: FrozenClock) -> None:
    assert await BuiltinResponder().answer(USER, text, now=clock.now()) == answer
