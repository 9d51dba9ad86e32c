"""Texts of requests the bot runs later: the replies that set, list and cancel them, the pushed
answer's head, and the notices when a run failed or was missed."""

from __future__ import annotations

from datetime import datetime

from render.agenda import entry_line
from render.timefmt import clock_label, day_label, local
from render.wording import recurrence_label
from schedule.domain import Item, ScheduledRequest

NEEDS_LLM = ("这类请求需要接入大模型才能定时帮你完成，现在还做不到，所以没有记下。"
             "我可以定时发你的日程，例如“每天早上8点告诉我今天有什么安排”。")


def quota_reached(limit: int) -> str:
    return (f"你已经有 {limit} 个定时请求了，这个没有记下。说“我有哪些定时任务”看看，"
            "取消不需要的（例如“天气不用发了”）再来设。")


def _you(text: str) -> str:
    """告诉我今天的天气 → 告诉你今天的天气 (the bot speaks of the user as 你)."""
    return text.replace("我", "你")


def when_label(request: ScheduledRequest) -> str:
    """每天 08:00 / 6月18日（周四）08:00"""
    first = local(request.first_at, request.timezone)
    if request.recurrence is not None:
        return f"{recurrence_label(request.recurrence)} {clock_label(first)}"
    return f"{day_label(first.date())}{clock_label(first)}"


def created(request: ScheduledRequest) -> str:
    what = _you(request.text)
    head = f"好的，{when_label(request)} {'提醒你' + request.remind + '，并' if request.remind else ''}{what}。"
    if request.recurrence is None:
        return head
    nxt = local(request.run_at, request.timezone)
    return f"{head}第一次是{day_label(nxt.date())}{clock_label(nxt)}。不需要时说“{_short(request)}不用发了”。"


def _short(request: ScheduledRequest) -> str:
    return request.title.removeprefix("今天的").removeprefix("今天") or request.title


def listed(requests: list[ScheduledRequest]) -> str:
    if not requests:
        return "你还没有定时请求。可以说“每天早上8点告诉我今天有什么安排”。"
    lines = [f"你的定时请求（{len(requests)} 个）："]
    lines += [f"{i}. {when_label(r)} {_you(r.text)}" for i, r in enumerate(requests, 1)]
    return "\n".join(lines)


def cancelled(requests: list[ScheduledRequest]) -> str:
    if len(requests) == 1:
        r = requests[0]
        return f"好的，以后不再{when_label(r)} {_you(r.text)}了。"
    return "好的，这些定时请求已取消：\n" + "\n".join(f"· {when_label(r)} {_you(r.text)}" for r in requests)


def retimed(request: ScheduledRequest) -> str:
    nxt = local(request.run_at, request.timezone)
    return (f"好的，改为{when_label(request)} {_you(request.text)}。"
            f"下一次是{day_label(nxt.date())}{clock_label(nxt)}。")


def which(requests: list[ScheduledRequest]) -> str:
    lines = ["有几个定时请求都对得上，请说得具体一点（例如带上时间）："]
    return "\n".join(lines + [f"{i}. {when_label(r)} {_you(r.text)}" for i, r in enumerate(requests, 1)])


def no_match(words: str | None) -> str:
    named = f"“{words}”的" if words else ""
    return f"没有找到{named}定时请求。说“我有哪些定时任务”可以查看。"


def answer_head(request: ScheduledRequest) -> str:
    return f"⏰ 提醒：{request.remind}。\n" if request.remind else ""


def failed(request: ScheduledRequest, upcoming: datetime | None) -> str:
    then = ""
    if upcoming is not None:
        at = upcoming.astimezone(local(request.first_at, request.timezone).tzinfo)
        then = f"下次 {day_label(at.date())}{clock_label(at)} 会再试。"
    return f"抱歉，定时请求“{request.title}”这次没能完成。{then}"


def missed(request: ScheduledRequest) -> str:
    at = local(request.run_at, request.timezone)
    return f"系统维护期间错过了 {day_label(at.date())}{clock_label(at)} 的定时请求“{request.title}”。"


def done_list(items: list[Item], *, label: str) -> str:
    """这周完成的事: what was marked done in the range (by its own time)."""
    if not items:
        return f"{label}还没有完成的事项。"
    return "\n".join([f"{label}完成的事（{len(items)} 项）：", *(f"· {entry_line(i)}" for i in items)])
