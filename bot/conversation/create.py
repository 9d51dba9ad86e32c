"""Create an item from a `CreateIntent` (docs/conversation.md#creating): ask when a time is missing, else store it."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from bot.conversation.context import Context
from intent.model import CreateIntent
from intent.nonexistent import missing_day
from render.outcome import Asked, Created, Failed, Outcome
from schedule.clock import to_ms
from schedule.domain import Item, Lunar, NewItem, NewReminder, Recurrence
from schedule.errors import InvalidChange, QuotaExceeded

_SUB_DAILY = re.compile(r"(?:^|;)FREQ=(?:HOURLY|MINUTELY|SECONDLY)(?:;|$)")
# A step inside a daily window (`intent.course`): minutes that divide a day, 30 or more, inside listed hours.
_IN_WINDOW = re.compile(r"^FREQ=MINUTELY;INTERVAL=(?:3\d|[4-9]\d|\d{3,});BYHOUR=")


async def run(intent: CreateIntent, ctx: Context) -> Outcome:
    if intent.recurrence is not None and _SUB_DAILY.search(intent.recurrence.rrule or "") \
            and not _IN_WINDOW.search(intent.recurrence.rrule or ""):
        return Failed("没有记录：提醒间隔最短 30 分钟，一天最多 24 次。可以说“每隔半小时提醒我喝水”"
                      "或“上午9点到下午5点每小时提醒我喝水”。")
    nonexistent = missing_day(intent.title or "") or missing_day(intent.pending.label if intent.pending else "")
    if nonexistent is not None:  # 每年2月30号…: the time words could not read it, so it stayed in the title
        return Failed(nonexistent.reply())
    if intent.needs_clarification:
        ctx.ask(intent)
        return Asked(intent.question or "这件事大概什么时候？")
    now_ms = to_ms(ctx.now)
    reminders: tuple[NewReminder, ...] = ()
    due_now = False
    if intent.reminder is not None and not intent.explicit_no_reminder:
        remind_at = to_ms(intent.reminder.remind_at)
        if remind_at <= now_ms:  # past times: an explicit past time is accepted and delivered at once
            remind_at, due_now = now_ms, True
        reminders = (NewReminder(remind_at=remind_at, offset_minutes=intent.reminder.offset_minutes),)
    try:
        item = await _store(intent, ctx, reminders)
    except QuotaExceeded as full:  # checked before anything is written: the message's other steps stand
        return Failed(f"没有记录：进行中的事项已达上限 {full.limit} 条。完成或取消一些之后再记吧。")
    except InvalidChange:
        return Failed("没有记录：这个时间规则从不发生，或者太频繁了（一天最多 24 次）。换个说法再试试？")
    anchor = intent.start_at if intent.kind == "event" else intent.due_at
    rolled = (anchor is not None and not intent.all_day and intent.recurrence is None
              and anchor.astimezone(ctx.tz).date() == ctx.now.date() + timedelta(days=1)
              and not intent.day_said)  # no day said: a clock time that had passed today
    return Created(item=item, reminder_due_now=due_now,
                   hint_lead=intent.kind == "event" and not reminders and not intent.explicit_no_reminder
                   and not intent.all_day,
                   explicit_no_reminder=intent.explicit_no_reminder, rolled=rolled)


async def _store(intent: CreateIntent, ctx: Context, reminders: tuple[NewReminder, ...]) -> Item:
    return await ctx.service.create_item(ctx.user.id, NewItem(
        kind=intent.kind, title=(intent.title or "待办")[:200], timezone=ctx.user.timezone,
        start_at=_ms(intent.start_at), end_at=_ms(intent.end_at) if intent.kind == "event" else None,
        due_at=_ms(intent.due_at), all_day=intent.all_day, recurrence=_recurrence(intent),
        location=intent.location, description=intent.note,
        source_channel="wechat", source_message_id=ctx.message_id, source_text=ctx.text[:2000],
        reminders=reminders,
    ))


def _ms(moment: datetime | None) -> int | None:
    return to_ms(moment) if moment is not None else None


def _recurrence(intent: CreateIntent) -> Recurrence | None:
    rec = intent.recurrence
    if rec is None:
        return None
    lunar = Lunar(month=rec.lunar.month, day=rec.lunar.day, leap=rec.lunar.leap) if rec.lunar else None
    return Recurrence(rrule=rec.rrule, workdays=rec.workdays, lunar=lunar)
