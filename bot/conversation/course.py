"""Follow-ups about a series several times a day or a course: one of its times moves (早上那次改到八点), the
course ends (停药: past doses kept, nothing after now), and "吃了" closes the dose that is due."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from bot.conversation.context import Context
from intent.course import rule_for_times
from intent.model import Changes
from render.outcome import Changed, Failed, Outcome
from render.timefmt import clock_label, day_label
from schedule.clock import from_ms, to_ms
from schedule.course import due_dose, ended_rule, several_a_day, times_of_day
from schedule.domain import Item, ItemChanges, NewReminder, Recurrence, occurrence_key
from schedule.errors import InvalidChange
from schedule.recurrence import localize, next_occurrence

_PERIODS = {  # which of a day's times a part of the day names: (from, to) hours
    "凌晨": (0, 6), "早上": (4, 11), "早晨": (4, 11), "清晨": (4, 9), "早": (4, 11), "上午": (6, 12),
    "中午": (11, 14), "下午": (12, 18), "傍晚": (16, 20), "晚上": (17, 24), "晚": (17, 24), "夜里": (19, 24),
    "睡前": (19, 24),
}


async def dose_done(item: Item, on: date | None, ctx: Context) -> Outcome | None:
    """吃了: for a series several times a day, the open dose nearest now (on the day said, if any) is done;
    None for other series (their day is closed, as before)."""
    stored = await ctx.service.get_item(ctx.user.id, item.id)
    if not several_a_day(stored.recurrence):
        return None
    dose = due_dose(stored, ctx.now, on)
    if dose is None:
        return Failed(f"“{stored.title}”附近没有待完成的一次，没有做任何改动。")
    await ctx.service.complete_occurrence(ctx.user.id, item.id, dose)
    return Changed("complete", stored, before=item, occurrence_on=occurrence_key(dose))


def _pick(times: list[time], which: str) -> time | None:
    if ":" in which:
        wanted = time(int(which[:2]), int(which[3:5]))
        return wanted if wanted in times else None
    if which.startswith("第"):
        index = "一二三四1234".find(which[1]) % 4
        return times[index] if index < len(times) else None
    if which == "最后一次":
        return times[-1] if times else None
    low, high = _PERIODS.get(which, (0, 24))
    inside = [t for t in times if low <= t.hour < high]
    if not inside:
        return None
    return inside[-1] if low >= 17 else inside[0]


async def apply(changes: Changes, item: Item, ctx: Context) -> Outcome:
    stored = await ctx.service.get_item(ctx.user.id, item.id)
    if changes.end_series:
        return await _end(stored, ctx)
    return await _retime(stored, changes, ctx)


async def _retime(item: Item, changes: Changes, ctx: Context) -> Outcome:
    rec = item.recurrence
    if rec is None or not rec.rrule or item.anchor_at is None or changes.dose_to is None \
            or changes.dose_from is None:
        return Failed(f"“{item.title}”不是每天几次的重复事项，没有做任何改动。可以直接说“改到早上8点”。")
    today = ctx.now.date()
    later = max(today, from_ms(item.anchor_at).astimezone(ctx.tz).date() + timedelta(days=1))
    times = times_of_day(item, later) or times_of_day(item)
    old = _pick(times, changes.dose_from)
    if old is None:
        listed = "、".join(clock_label(datetime.combine(today, t)) for t in times)
        return Failed(f"“{item.title}”的时间是 {listed}，没找到{changes.dose_from}那次，没有做任何改动。")
    new = changes.dose_to
    if new in times and new != old:
        return Failed(f"“{item.title}”已经有 {clock_label(datetime.combine(today, new))} 这一次了，没有做任何改动。")
    wanted = sorted({*(t for t in times if t != old), new})
    kept = [p for p in rec.rrule.split(";") if p.split("=", 1)[0].upper() not in ("BYHOUR", "BYMINUTE", "BYSETPOS",
                                                                                  "INTERVAL", "FREQ")]
    parts = rec.rrule.upper().split(";")
    freq = next((p for p in parts if p.startswith("FREQ=")), "FREQ=DAILY")
    interval = next((p for p in parts if p.startswith("INTERVAL=")), None)
    if freq in ("FREQ=HOURLY", "FREQ=MINUTELY"):
        freq, interval = "FREQ=DAILY", None  # a step inside a window becomes the list of its times
    body = ";".join([freq, *([interval] if interval else []), rule_for_times(wanted), *kept])
    rule = Recurrence(rrule=body, workdays=rec.workdays)
    anchor = from_ms(item.anchor_at).astimezone(ctx.tz)
    update = ItemChanges(recurrence=rule)
    now_ms = to_ms(ctx.now)
    if item.anchor_at > now_ms and anchor.time().replace(tzinfo=None) == old:
        begin = localize(datetime.combine(anchor.date(), time()), ctx.tz)
        first = next_occurrence(rule, dtstart=begin, after=begin - timedelta(seconds=1), tz=ctx.tz)
        if first is not None:
            moved = to_ms(first)
            update = ItemChanges(recurrence=rule, start_at=moved if item.kind == "event" else None,
                                 due_at=moved if item.kind == "task" else None)
    try:
        updated = await ctx.service.update_item(ctx.user.id, item.id, update)
    except InvalidChange:
        return Failed("这条没改成：新的时间规则不成立，没有做任何改动。")
    await _replan(updated, old, ctx)
    updated = await ctx.service.get_item(ctx.user.id, item.id)
    nxt = _next(updated, new, ctx)
    said = "、".join(clock_label(datetime.combine(today, t)) for t in wanted)
    text = (f"已改好：“{item.title}”{changes.dose_from if ':' not in changes.dose_from else ''}那次从 "
            f"{clock_label(datetime.combine(today, old))} 改到 {clock_label(datetime.combine(today, new))}，"
            f"现在是每天 {said}。")
    if nxt is not None:
        text += f"改后的第一次是{day_label(nxt.date())}{clock_label(nxt)}。"
    return Changed("update", updated, before=item, text=text)


def _next(item: Item, at: time, ctx: Context) -> datetime | None:
    """The first occurrence at the new time from now on."""
    if item.recurrence is None or item.anchor_at is None:
        return None
    cursor = ctx.now
    for _ in range(48):
        found = next_occurrence(item.recurrence, dtstart=from_ms(item.anchor_at), after=cursor, tz=ctx.tz)
        if found is None:
            return None
        if found.astimezone(ctx.tz).time().replace(tzinfo=None) == at:
            return found.astimezone(ctx.tz)
        cursor = found
    return None


async def _replan(item: Item, old: time, ctx: Context) -> None:
    """A pending reminder of a dose at the time that moved goes to the series' next occurrence after now."""
    if item.recurrence is None or item.anchor_at is None:
        return
    now_ms = to_ms(ctx.now)
    for rem in item.reminders:
        if rem.status != "pending":
            continue
        occurs = rem.remind_at + (rem.offset_minutes or 0) * 60_000
        if from_ms(occurs).astimezone(ctx.tz).time().replace(tzinfo=None) != old or occurs == item.anchor_at:
            continue
        await ctx.service.cancel_reminder(ctx.user.id, rem.id)
        nxt = next_occurrence(item.recurrence, dtstart=from_ms(item.anchor_at), after=from_ms(now_ms), tz=ctx.tz)
        if nxt is not None:
            lead = (rem.offset_minutes or 0) * 60_000
            await ctx.service.create_reminder(ctx.user.id, item.id, NewReminder(
                remind_at=max(to_ms(nxt) - lead, now_ms), offset_minutes=rem.offset_minutes, channel=rem.channel))


async def _end(item: Item, ctx: Context) -> Outcome:
    """停药: the series ends now; what was before stays listed (and done where done), nothing comes after."""
    rec = item.recurrence
    if rec is None or not rec.rrule or item.anchor_at is None:
        return Failed(f"“{item.title}”不是重复的事项，没有做任何改动。要取消的话可以说“取消{item.title}”。")
    now_local = ctx.now.astimezone(ctx.tz).replace(tzinfo=None, microsecond=0)
    if item.anchor_at > to_ms(ctx.now):  # not begun yet: nothing to keep
        cancelled = await ctx.service.cancel_item(ctx.user.id, item.id)
        return Changed("cancel", cancelled, before=item,
                       text=f"好的，“{item.title}”还没开始，已整个取消，不会再提醒。")
    rule = Recurrence(rrule=ended_rule(rec.rrule, now_local), workdays=rec.workdays)
    updated = await ctx.service.update_item(ctx.user.id, item.id, ItemChanges(recurrence=rule))
    for rem in updated.reminders:  # nothing more is pushed, a late one for an earlier dose neither
        if rem.status == "pending":
            await ctx.service.cancel_reminder(ctx.user.id, rem.id)
    updated = await ctx.service.get_item(ctx.user.id, item.id)
    last = _last_before(updated, ctx)
    said = f"最后一次是{day_label(last.date())}{clock_label(last)}，" if last is not None else ""
    return Changed("update", updated, before=item,
                   text=f"好的，“{item.title}”到此结束：{said}之前的记录都保留，以后不再提醒。")


def _last_before(item: Item, ctx: Context) -> datetime | None:
    from schedule.course import last_occurrence

    found = last_occurrence(item)
    return found[0].astimezone(ctx.tz) if found is not None else None
