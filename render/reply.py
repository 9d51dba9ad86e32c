"""Chat reply text: one message's outcomes (and waiting in-app notices) worded in short Chinese.

Built only from what the service returned, always with the absolute time and weekday, and cut to
WeChat's 2048-byte text limit ("还有 N 条" plus the page link when there is one).
"""

from __future__ import annotations

import itertools
from datetime import date, timedelta

from render import outcome as o
from render.agenda import entry_line, listing
from render.answer import answered
from render.timefmt import clock_label, day_label, local, moment_label
from render.wording import lead_label, recurrence_label, recurrence_until, verb_word
from schedule.course import last_occurrence, several_a_day, times_of_day
from schedule.domain import Item, Recurrence, Reminder, key_moment
from schedule.holidays import unpublished_years

MAX_BYTES = 2048
_UNSENT = "你有 {n} 条未送达的{what}："


def reply(turn: o.Turn) -> str:
    """The whole reply for one message, within MAX_BYTES."""
    parts = [_notices(turn)] if turn.notices else []
    listed = [x for x in turn.outcomes if isinstance(x, o.Listed)]
    # Several requests: with a listing in the same reply, the open question still comes last (after the listing).
    asked = [x for x in turn.outcomes if isinstance(x, o.Asked)] if listed else []
    others = [word(x) for x in turn.outcomes if not isinstance(x, o.Listed) and x not in asked]
    if len([x for x in turn.outcomes if isinstance(x, o.Created)]) > 1:
        others = [f"{i}. {text}" for i, text in enumerate(others, 1)]
    parts += others
    head = "\n".join(p for p in parts if p)
    tail = "".join(f"\n\n{word(x)}" for x in asked)
    for item in listed:
        budget = MAX_BYTES - len(head.encode("utf-8")) - 2 - len(tail.encode("utf-8"))
        text = listing(item, budget=budget)
        head = f"{head}\n\n{text}" if head else text
    return fit(head + tail)


def fit(text: str, limit: int = MAX_BYTES) -> str:
    """Cut at a line boundary so the text fits `limit` UTF-8 bytes."""
    if len(text.encode("utf-8")) <= limit:
        return text
    out: list[str] = []
    size = len("……".encode())
    for line in text.split("\n"):
        cost = len(line.encode("utf-8")) + 1
        if size + cost > limit:
            break
        out.append(line)
        size += cost
    return "\n".join(out) + "\n……"


def _notices(turn: o.Turn) -> str:
    lines = [_UNSENT.format(n=len(turn.notices), what="提醒" if turn.only_reminders else "消息")]
    lines += [f"· {text}" for text in turn.notices]
    if turn.expired:
        lines.append(f"（其中 {turn.expired} 条在服务中断期间过期，没能按时送达，抱歉。）")
    return "\n".join(lines)


def word(x: o.Outcome) -> str:
    """One outcome in words."""
    if isinstance(x, o.Created):
        return created(x)
    if isinstance(x, o.Asked):
        return x.question
    if isinstance(x, o.Changed):
        return changed(x)
    if isinstance(x, o.ChangedAll):
        return changed_all(x)
    if isinstance(x, o.Restored):
        return restored(x)
    if isinstance(x, o.Withdrawn):
        return withdrawn(x)
    if isinstance(x, o.Repeated):
        said = "；".join(_changed_line(item) for item in x.items)
        return f"这条已经记过了：{said}。没有重复记录；确实要再记一条的话，回复“再记一条”。"
    if isinstance(x, o.Ambiguous):
        head = f"要{verb_word(x.verb)}哪一项？最近的有这些：" if x.unnamed else \
            f"找到 {len(x.candidates)} 条符合的，要{verb_word(x.verb)}哪一个？"
        lines = [head]
        lines += [f"{i}. {entry_line(item)}" for i, item in enumerate(x.candidates, 1)]
        every = f"，都要{verb_word(x.verb)}就回“全部”" if x.verb != "update" else ""
        lines.append(f"回复序号就行（比如“2”或“第二个”）{every}。")
        return "\n".join(lines)
    if isinstance(x, o.NoMatch):
        what = f"“{x.target}”" if x.target else "这条"
        return f"没找到{what}相关的日程或待办，没有做任何改动。可以说得具体一点吗？比如带上日期。"
    if isinstance(x, o.Subscribed):
        d = x.digest
        every = recurrence_label(Recurrence(rrule=d.rrule or "FREQ=DAILY", workdays=d.workdays))  # 每周一到周五
        nxt = f"下一次：{moment_label(d.next_run_at, d.timezone)}。" if d.next_run_at is not None else ""
        what = "第二天的安排" if d.kind == "todo_next_day" else "当天的待办"
        return f"好的，{every} {d.local_time} 给你发{what}。{nxt}说“取消每日待办推送”可以随时停。"
    if isinstance(x, o.Unsubscribed):
        return "已取消每日待办推送，之后不再发送。" if x.had else "你目前没有订阅每日待办推送，不用取消。"
    if isinstance(x, o.Snoozed):
        return f"好的，{moment_label(x.reminder.remind_at, x.item.timezone)} 再提醒你：{x.item.title}。"
    if isinstance(x, o.NothingToSnooze):
        return "最近没有刚送达的提醒可以推迟。要新建提醒的话，告诉我时间和事情，比如“明天上午九点提醒我带材料”。"
    if isinstance(x, o.Dropped):
        return f"好的，刚才的“{x.label}”不记了。" if x.label else "好的，刚才的那件事不记了。"
    if isinstance(x, o.Linked):
        return linked(x)
    if isinstance(x, o.Said):
        return x.text
    if isinstance(x, o.Failed):
        return x.why
    if isinstance(x, o.Answered):
        return answered(x)
    return ""  # Listed is rendered by `listing`


def created(x: o.Created) -> str:
    return _created(x) + _unpublished_note(x.item)


UNPUBLISHED_NOTICE_DAYS = 90  # a working-day series whose next three months reach an unpublished year says so


def _unpublished_note(item: Item) -> str:
    """A working-day series reaching a year whose 调休 is not published yet says so, once, when it is made."""
    if item.recurrence is None or item.recurrence.workdays != "cn" or item.anchor_at is None:
        return ""
    first = local(item.anchor_at, item.timezone).date()
    last = first + timedelta(days=UNPUBLISHED_NOTICE_DAYS)
    until = recurrence_until(item.recurrence)
    years = unpublished_years(first, min(last, until) if until is not None else last)
    if not years:
        return ""
    return (f"（{'、'.join(map(str, years))}年的调休安排还没公布：先按法定节假日放假、周末休息算，"
            "公布后按官方安排。）")


def _created(x: o.Created) -> str:
    item = x.item
    reminder = _open_reminder(item)
    when = _when(item, rolled=x.rolled)
    label = f"{when}{'' if item.all_day else ' '}{item.title}" if when else item.title
    if item.recurrence is not None and item.anchor_at is not None:
        label += _course_span(item)
    if item.location:
        label += f"，地点：{item.location}"
    if item.description:
        label += f"，备注：{item.description}"
    if reminder is None:
        if item.kind == "task" or x.explicit_no_reminder:
            where = "待办列表" if item.kind == "task" else "日程"
            hint = "" if x.explicit_no_reminder else "需要提醒的话，告诉我什么时候提醒你。"
            return f"已记录到{where}：{label}，未设置提醒。{hint}"
        hint = "需要我提前提醒的话，可以告诉我提前多久。" if x.hint_lead else ""
        return f"已记录：{label}。{hint}"
    return f"已记录：{label}。{_reminder_sentence(item, reminder, due_now=x.reminder_due_now)}"


def _reminder_sentence(item: Item, reminder: Reminder, *, due_now: bool) -> str:
    if due_now:
        return "时间已到，会立即提醒你。"
    anchor = item.anchor_at
    at = local(reminder.remind_at, item.timezone)
    same_day = anchor is not None and local(anchor, item.timezone).date() == at.date()
    at_text = clock_label(at) if same_day else moment_label(reminder.remind_at, item.timezone)
    if anchor is not None and reminder.remind_at == anchor and not item.all_day:
        return "到时提醒你。"
    if reminder.offset_minutes and anchor is not None and not item.all_day:
        return f"我会提前 {lead_label(reminder.offset_minutes)}，也就是 {at_text} 提醒你。"
    return f"我会在 {at_text} 提醒你。"


def _course_span(item: Item) -> str:
    """，首次是…，最后一次是…，共 N 次 (a series with an end) / ，首次是… (one that goes on)."""
    assert item.anchor_at is not None
    assert item.recurrence is not None
    first = local(item.anchor_at, item.timezone)
    ended = last_occurrence(item)
    timed = not item.all_day and (ended is not None or several_a_day(item.recurrence))
    text = f"，首次是{day_label(first.date())}{clock_label(first) if timed else ''}"
    if ended is not None:
        last, count = ended
        at = last.astimezone(first.tzinfo)
        year = f"{at.year}年" if at.year != first.year else ""  # 还12期: the last one is next year
        return text + f"，最后一次是{year}{day_label(at.date())}{clock_label(at) if timed else ''}，共 {count} 次"
    until = recurrence_until(item.recurrence)
    return text + (f"，到{day_label(until)}为止" if until is not None else "")


def _times_label(item: Item) -> str:
    """07:30、21:00 — or, for a step inside a window, 09:00–21:00 每 2 小时（一天 7 次）."""
    times = times_of_day(item)
    clocks = [f"{t.hour:02d}:{t.minute:02d}" for t in times]
    steps = {(b.hour * 60 + b.minute) - (a.hour * 60 + a.minute) for a, b in itertools.pairwise(times)}
    if len(times) >= 4 and len(steps) == 1:
        step = steps.pop()
        every = "每小时" if step == 60 else f"每 {lead_label(step)}"
        return f"{clocks[0]}–{clocks[-1]} {every}（一天 {len(times)} 次）"
    return "、".join(clocks)


def _occurrence_label(key: str) -> str:
    day, clock = key_moment(key)
    return day_label(day) + (f"{clock[0]:02d}:{clock[1]:02d} " if clock is not None else "")


def changed(x: o.Changed) -> str:
    item = x.item
    if x.text is not None:
        return x.text
    if x.occurrence_on is not None and len(x.occurrence_on) > 10:
        done = "好的，已完成" if x.verb == "complete" else "已取消"
        return f"{done}{_occurrence_label(x.occurrence_on)}这一次的“{item.title}”，其余的照常。"
    if x.occurrence_on is not None and x.verb == "update":
        day = date.fromisoformat(x.occurrence_on)
        text = f"已改好：{day_label(day)}这一次的“{item.title}”改到 " \
               f"{moment_label(item.anchor_at or 0, item.timezone, all_day=item.all_day)}，以后的照常。"
        reminder = _open_reminder(item)
        return text + (_reminder_sentence(item, reminder, due_now=False) if reminder is not None else "")
    if x.occurrence_on is not None:
        day = date.fromisoformat(x.occurrence_on)
        done = "好的，已完成" if x.verb == "complete" else "已取消"
        return f"{done}{day_label(day)}这一次的“{item.title}”，以后的照常。"
    label = entry_line(item)
    if x.verb == "complete":
        return f"好的，已完成：{_changed_line(item)}。" + ("相关提醒已取消。" if _had_open(x.before) else "")
    if x.verb == "cancel":
        series = "整个系列" if item.recurrence is not None else ""
        return f"已取消{series}：{_changed_line(item)}。" + ("相关提醒也一并取消了。" if _had_open(x.before) else "")
    before = x.before
    moved = before is not None and before.anchor_at != item.anchor_at and item.anchor_at is not None
    if moved and before is not None:
        old = entry_line(before)
        text = f"已改好：“{item.title}”从 {old.removesuffix(' ' + before.title)} 改到 " \
               f"{moment_label(item.anchor_at or 0, item.timezone, all_day=item.all_day)}。"
    elif before is not None and before.end_at != item.end_at and item.end_at is not None:
        text = f"已改好：{_when(item)} {item.title}。"
    elif item.recurrence is not None and (before is None or before.recurrence != item.recurrence):
        text = f"已改好：{_changed_line(item)}，首次是{day_label(local(item.anchor_at or 0, item.timezone).date())}。"
    else:
        text = f"已改好：{label}。"
    if item.location and (before is None or before.location != item.location):
        text = text.removesuffix("。") + f"，地点：{item.location}。"
    if item.description and (before is None or before.description != item.description):
        text = text.removesuffix("。") + f"，备注：{item.description}。"
    reminder = _open_reminder(item)
    several = sorted(r.remind_at for r in item.reminders if r.status in ("pending", "locked"))
    if len(several) > 1:
        day = local(item.anchor_at or several[0], item.timezone).date()
        times = "、".join(clock_label(local(at, item.timezone)) if local(at, item.timezone).date() == day
                         else moment_label(at, item.timezone) for at in several)
        text += f"我会在 {times} 各提醒你一次。"
    elif reminder is not None:
        text += _reminder_sentence(item, reminder, due_now=False)
    elif _had_open(before):
        text += "原来的提醒已取消。"
    return text


def changed_all(x: o.ChangedAll) -> str:
    """已取消 2 条：a numbered list of exactly what was changed, then what happened to their reminders."""
    done = "已完成" if x.verb == "complete" else "已取消"
    lines = [f"{'好的，' if x.verb == 'complete' else ''}{done} {len(x.changes)} 条："]
    for i, c in enumerate(x.changes, 1):
        day = key_moment(c.occurrence_on)[0] if c.occurrence_on else None
        once = f"（只{'完成' if x.verb == 'complete' else '取消'}{day_label(day)}这一次，以后的照常）" \
            if day is not None else ""
        series = "（整个系列）" if c.item.recurrence is not None and not once and x.verb == "cancel" else ""
        lines.append(f"{i}. {entry_line(c.item) if once else _changed_line(c.item)}{once}{series}")
    if any(_had_open(c.before) for c in x.changes):
        lines.append("相关提醒也一并取消了。")
    if x.skipped:
        lines.append(f"另有 {x.skipped} 条没改成（可能刚被改过或已删除），发“看看日程”可以核对。")
    return "\n".join(lines)


def restored(x: o.Restored) -> str:
    """撤销: what is back, and whether its reminders are; or plainly that there was nothing to take back."""
    series = f"系列中某一次的取消或完成（{x.series_left} 条）撤销不了，需要的话请重新记一下。" if x.series_left else ""
    if not x.items:
        return f"{series}没有做任何改动。" if series else \
            "没有可以撤销的：只能撤销 10 分钟内刚做的取消或完成，没有做任何改动。"
    lines = [f"已恢复：{_changed_line(x.items[0])}。"] if len(x.items) == 1 else \
        [f"已恢复 {len(x.items)} 条："] + [f"{i}. {_changed_line(item)}" for i, item in enumerate(x.items, 1)]
    if any(_open_reminder(item) is not None for item in x.items):
        lines.append("还没到的提醒也恢复了。")
    if series:
        lines.append("另外，" + series)
    return "\n".join(lines) if len(x.items) > 1 else "".join(lines)


def withdrawn(x: o.Withdrawn) -> str:
    """刚才那条删掉: what the last create stored is gone again, reminders with it."""
    if not x.items:
        return "刚才记录的已经不在了，没有做任何改动。"
    lines = "；".join(_changed_line(item) for item in x.items)
    reminders = "相关提醒也一并取消了。" if any(_had_open(item) for item in x.items) else ""
    return f"好的，刚才记录的已删除：{lines}。{reminders}"


def _changed_line(item: Item) -> str:
    """The item as a whole: a series by its rule (每周五16:00 写周报), not by one of its days."""
    if item.recurrence is None or item.anchor_at is None:
        return entry_line(item)
    return f"{_when(item)}{'' if item.all_day else ' '}{item.title}"


def linked(x: o.Linked) -> str:
    if x.what == "reset":
        return ("已重置链接：之前发出的行程页、分享和日历订阅链接都已失效。需要时说“生成行程页”或“订阅日历”拿新的。"
                if x.done else "链接暂时无法重置，请稍后再试。")
    if x.what == "unshare":
        return "已关闭公开分享链接，之前发出去的链接打不开了。" if x.done else "你目前没有公开的分享链接。"
    if x.what == "unfeed":
        return ("已关闭日历订阅：之前的订阅地址不再更新（日历里会提示无法刷新，可以删掉那个订阅）。"
                "想重新订阅就说“订阅日历”。")
    if x.url is None:
        return "行程页暂时无法生成，请稍后再试。"
    if x.what == "share":
        return f"公开分享链接（只读）：{x.url}\n拿到链接的人都能查看你的行程；说“取消分享”可以随时关闭。"
    if x.what == "feed":
        return f"日历订阅地址：{x.url}\n在手机或电脑日历里选“添加订阅日历”粘贴即可，日程会自动同步。"
    return f"你的行程页：{x.url}"


def _when(item: Item, *, rolled: bool = False) -> str:
    anchor = item.anchor_at
    if anchor is None:
        return ""
    text = moment_label(anchor, item.timezone, all_day=item.all_day)
    if item.recurrence is not None:
        every = recurrence_label(item.recurrence)
        first = local(anchor, item.timezone)
        if several_a_day(item.recurrence) and not item.all_day:
            every = "每个工作日" if item.recurrence.workdays == "cn" else every.replace("重复", "每天")
            return f"{every} {_times_label(item)}"
        clock = "" if item.all_day else clock_label(first)
        return f"{every}{clock}"
    if item.kind == "event" and item.end_at is not None and not item.all_day:
        end = local(item.end_at, item.timezone)
        start = local(anchor, item.timezone)
        same = end.date() == start.date()
        text += f"–{clock_label(end)}" if same else f" 至 {moment_label(item.end_at, item.timezone)}"
    elif item.kind == "event" and item.end_at is not None and item.all_day:
        last = (local(item.end_at, item.timezone) - timedelta(days=1)).date()  # the end is the next day's 00:00
        if last > local(anchor, item.timezone).date():  # 下周二到周四出差: every day it lasts
            text += f" 至 {day_label(last)}"
    return f"明天 {text}" if rolled else text


def _open_reminder(item: Item) -> Reminder | None:
    return next((r for r in item.reminders if r.status in ("pending", "locked")), None)


def _had_open(item: Item | None) -> bool:
    return item is not None and any(r.status in ("pending", "locked") for r in item.reminders)
