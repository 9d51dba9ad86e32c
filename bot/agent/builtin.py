"""The answer when no LLM is configured: say plainly what the bot can do, with example sentences."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.agent.port import Conversation
from render.timefmt import clock_label, day_label
from schedule.domain import User

EXAMPLES = (
    "· 明天下午三点开会，提前半小时提醒我\n"
    "· 周五前交材料\n"
    "· 看看明天的行程\n"
    "· 每天早上7点给我发当天待办"
)
GREETINGS = ("你好", "您好", "在吗", "嗨", "哈喽", "hi", "hello", "早上好", "晚上好")
THANKS = ("谢谢", "多谢", "感谢", "谢啦", "thx", "thanks", "thank you")
# A bare acknowledgement ("好的" after a reply) wants no capability list back, only a short word.
ACKS = frozenset({"好", "好的", "好滴", "好哒", "好嘞", "好吧", "嗯", "嗯嗯", "恩", "哦", "哦哦", "ok", "okay",
                  "收到", "知道了", "明白", "明白了", "行", "可以", "没问题", "👌", "👍", "好的呀", "好的吧"})
_END = "。.!！~～ "
# 今天几号 / 明天星期几 / 现在几点: the clock can answer these without a model.
_WHICH_DAY = re.compile(
    r"^(今天|明天|后天|昨天)(?:是)?(?:几号|几月几号|几月几日|星期几|周几|礼拜几|什么日子)[?？吗呀啊]*$")
_WHAT_TIME = re.compile(r"^(?:现在)?(?:几点了?|什么时间|几点钟)[?？了呀啊]*$|^现在时间[?？]*$")
_OFFSET = {"昨天": -1, "今天": 0, "明天": 1, "后天": 2}
# 你是谁 / 你能干嘛 / 你叫什么: questions about the bot itself, which the responder can answer.
_ABOUT_ME = re.compile(
    r"^(?:这个|这)?(?:怎么用|怎么使用|如何使用|咋用)[?？!！。.~～]*$"
    r"|^(?:请问)?(?:你|您)(?:都|还)?(?:是谁|是什么|是啥|叫什么(?:名字)?|是机器人吗|是人吗|是真人吗|是ai吗|是做什么的|是干什么的|是干嘛的|"
    r"能(?:干|做)(?:些|点)?(?:嘛|啥|什么)|会(?:干|做)?(?:些|点)?(?:嘛|啥|什么)|可以(?:干|做|帮我做)?(?:些)?(?:嘛|啥|什么)|有(?:什么|啥)(?:用|功能)|都?能帮我(?:干|做)?(?:嘛|啥|什么))"
    r"(?:呀|啊|呢|吗|嘛|事|事情|功能)?[?？!！。.~～]*$")


class BuiltinResponder:
    """No model behind it: a greeting, a thank-you, or the capability list."""

    async def answer(self, user: User, text: str, *, now: datetime, context: Conversation | None = None) -> str:
        said = text.strip().lower()
        local = now.astimezone(ZoneInfo(user.timezone))
        which = _WHICH_DAY.match(said)
        if which is not None:
            day = local.date() + timedelta(days=_OFFSET[which.group(1)])
            return f"{which.group(1)}是{day_label(day)}。"
        if _WHAT_TIME.match(said):
            return f"现在是 {day_label(local.date())} {clock_label(local)}。"
        if _ABOUT_ME.match(said):
            return ("我是日程助手，可以帮你记待办、日程和提醒，到点在微信里提醒你，也能列出你的行程。试试这样说：\n"
                    + EXAMPLES)
        if said.strip(_END) in ACKS:
            return "好的，有需要随时告诉我。"
        if any(word in said for word in THANKS):
            return "不客气！有事随时告诉我，比如：\n" + EXAMPLES
        if len(said) <= 12 and any(word in said for word in GREETINGS):
            return "你好！我是日程助手，可以帮你记待办、日程和提醒。试试这样说：\n" + EXAMPLES
        return "这个我暂时回答不了。我能帮你记待办、日程和提醒，例如：\n" + EXAMPLES

    async def aclose(self) -> None:
        return None
