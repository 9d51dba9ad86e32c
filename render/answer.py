"""The answer to a question about one item: its time (跟王总吃饭是哪天) or its place (周会在哪开), from its row."""

from __future__ import annotations

from render import outcome as o
from render.timefmt import clock_label, local, moment_label
from render.wording import recurrence_label
from schedule.domain import Item


def answered(x: o.Answered) -> str:
    item = x.item
    if item is None:
        return f"没找到“{x.about}”相关的日程或待办。要新建的话，告诉我时间和事情就行。"
    more = f"（还有 {x.others} 条也叫这个名字，说得具体一点我再查。）" if x.others else ""
    when = _when(item)
    if x.asked == "where":
        if item.location:
            return f"{item.title}的地点：{item.location}（{when or '未定时间'}）。{more}"
        return f"{item.title}还没记地点{f'，时间是 {when}' if when else ''}。要补上的话，说“地点在…”就行。{more}"
    if not when:
        return f"{item.title}还没定时间。要定的话，告诉我哪天几点。{more}"
    place = f"，地点：{item.location}" if item.location else ""
    return f"{item.title}：{when}{place}。{more}"


def _when(item: Item) -> str:
    anchor = item.anchor_at
    if anchor is None:
        return ""
    if item.recurrence is not None:
        first = local(anchor, item.timezone)
        return f"{recurrence_label(item.recurrence)}{'' if item.all_day else clock_label(first)}"
    return moment_label(anchor, item.timezone, all_day=item.all_day)
