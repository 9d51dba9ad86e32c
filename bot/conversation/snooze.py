"""Snooze: a new reminder for the item whose reminder was delivered last."""

from __future__ import annotations

from bot.conversation.context import Context
from intent.model import SnoozeIntent
from render.outcome import Asked, Failed, NothingToSnooze, Outcome, Snoozed
from schedule.clock import to_ms
from schedule.domain import NewReminder
from schedule.errors import InvalidChange
from schedule.occurrence import reminder_occurrence

RECENT_MS = 12 * 3_600_000  # "right after a reminder": one delivered within the last 12 hours


async def run(intent: SnoozeIntent, ctx: Context) -> Outcome:
    if intent.needs_clarification or intent.reminder is None:
        ctx.ask(intent)
        return Asked(intent.question or "好的，多久之后再提醒你？10 分钟、1 小时，还是明早？")
    now_ms = to_ms(ctx.now)
    last = await ctx.service.last_delivered_reminder(ctx.user.id, since_ms=now_ms - RECENT_MS)
    if last is None:
        return NothingToSnooze()
    delivered, item = last
    remind_at = max(to_ms(intent.reminder.remind_at), now_ms)
    again = NewReminder(remind_at=remind_at)
    if item.recurrence is not None and item.anchor_at is not None:  # about that occurrence only, never the series
        occurs = reminder_occurrence(delivered, item.anchor_at)
        again = NewReminder(remind_at=remind_at, offset_minutes=(occurs - remind_at) // 60_000, once=True)
    try:
        reminder = await ctx.service.create_reminder(ctx.user.id, item.id, again)
    except InvalidChange:
        return Failed(f"“{item.title}”已经完成或取消了，不再提醒。")
    return Snoozed(item=item, reminder=reminder)
