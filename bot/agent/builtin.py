"""The answer when no LLM is configured: say plainly what the bot can do, with example sentences."""

from __future__ import annotations

from datetime import datetime

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


class BuiltinResponder:
    """No model behind it: a greeting, a thank-you, or the capability list."""

    async def answer(self, user: User, text: str, *, now: datetime) -> str:
        said = text.strip().lower()
        if said.strip(_END) in ACKS:
            return "好的，有需要随时告诉我。"
        if any(word in said for word in THANKS):
            return "不客气！有事随时告诉我，比如：\n" + EXAMPLES
        if len(said) <= 12 and any(word in said for word in GREETINGS):
            return "你好！我是日程助手，可以帮你记待办、日程和提醒。试试这样说：\n" + EXAMPLES
        return "这个我暂时回答不了。我能帮你记待办、日程和提醒，例如：\n" + EXAMPLES

    async def aclose(self) -> None:
        return None
