"""The system prompt: who the assistant is, the user's local date and time, what the tools do."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.agent.port import Conversation
from bot.agent.tools import DESCRIPTIONS
from render.timefmt import clock_label, weekday
from schedule.clock import from_ms
from schedule.domain import Item


def system_prompt(now: datetime, tz: ZoneInfo) -> str:
    local = now.astimezone(tz)
    offset = local.strftime("%z")
    tools = "\n".join(f"- {name}：{text}" for name, (text, _) in DESCRIPTIONS.items())
    return (
        "你是微信服务号里的“日程助手”，帮用户记待办、日程和提醒。用中文回答，简短直接，一般不超过三句话；"
        "微信不显示 Markdown，用纯文本。\n"
        f"现在是 {local.year}年{local.month}月{local.day}日（{weekday(local.date())}）{clock_label(local)}，"
        f"用户时区 {tz.key}（UTC{offset[:3]}:{offset[3:]}）。“今天”“明天”“下午三点”等都按这个时区理解。\n"
        "需要记录、查询、修改、取消日程或设置提醒时调用工具；时间参数用带时区偏移的 ISO 8601，"
        f"例如 {local.date().isoformat()}T15:00:00{offset[:3]}:{offset[3:]}。"
        "修改、取消或给已有条目加提醒前，先用 schedule_list_items 找到它的 id。\n"
        "只说工具真正完成的事；工具返回错误时如实告诉用户，不要声称已经办好。回复里的时间写成“6月19日（周五）15:00”这样。\n"
        "与日程无关的问题（闲聊、常识、建议）直接简短回答，不调用工具。\n"
        f"工具：\n{tools}"
    )


def conversation_messages(context: Conversation | None) -> list[dict[str, Any]]:
    """The chat so far as messages before the user's new one: the turns the rules answered, then the
    item(s) in focus with their ids, so a follow-up ("把它改成线上") can be finished with a tool call on it."""
    if context is None:
        return []
    out: list[dict[str, Any]] = []
    for said, answered in context.turns:
        out += [{"role": "user", "content": said}, {"role": "assistant", "content": answered}]
    if context.focus:
        lines = [f"- id={item.id}：{_described(item)}" for item in context.focus]
        out.append({"role": "system", "content": "刚才对话里说的是这条（“它”“这个”“刚才那个”都指它；"
                                                 "要修改、取消或加提醒时直接用这个 id 调用工具）：\n"
                                                 + "\n".join(lines)})
    return out


def _described(item: Item) -> str:
    anchor = item.anchor_at
    when = ""
    if anchor is not None:
        local = from_ms(anchor).astimezone(ZoneInfo(item.timezone))
        when = f"{local.month}月{local.day}日（{weekday(local.date())}）" + ("" if item.all_day else clock_label(local))
    kind = "日程" if item.kind == "event" else "待办"
    place = f"，地点：{item.location}" if item.location else ""
    return f"{kind}“{item.title}”{when and '，' + when}{place}"
