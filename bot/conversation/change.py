"""Complete, cancel and update by text, series too: find the target, ask which when several match."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time, timedelta

from bot.conversation import course, snooze
from bot.conversation.context import Context
from bot.conversation.focus import TTL_MS as FOCUS_TTL_MS
from bot.conversation.snooze import RECENT_MS
from intent.dialogue import EVERY_PICKED, LEAD_CLOCK
from intent.model import CancelIntent, Changes, CompleteIntent, Pending, Reminder, SnoozeIntent, UpdateIntent
from intent.target import Candidate, rank
from render.outcome import Ambiguous, Asked, Changed, ChangedAll, Failed, NoMatch, Outcome
from schedule.clock import from_ms, to_ms
from schedule.domain import Item, ItemChanges, NewItem, NewReminder, Recurrence
from schedule.domain import Reminder as StoredReminder
from schedule.errors import InvalidChange, NotFound
from schedule.occurrence import at_occurrence
from schedule.recurrence import localize, next_occurrence

Targeted = UpdateIntent | CancelIntent | CompleteIntent
MAX_CHOICES = 9


async def run(intent: Targeted, ctx: Context) -> Outcome:
    if "changes" in intent.needs_clarification or (isinstance(intent, UpdateIntent) and intent.changes is None):
        ctx.ask(intent)
        return Asked(intent.question or "要改成什么？比如“改到明天下午四点”或“提前15分钟提醒”。")
    items = await _chosen(intent, ctx)
    if items is None and "target" in intent.needs_clarification:  # the follow-up names no item: the focus
        focused = await _in_focus(intent, ctx)
        if focused is not None:
            intent, items = focused
    if items is None and "target" in intent.needs_clarification:  # 搞定了 / 下午三点那个 with no words
        later = _later(intent, ctx) if isinstance(intent, UpdateIntent) else None
        if later is not None and await _just_reminded_item(ctx) is not None:
            # 推迟到下午3点 right after a reminder: remind again then, as 10分钟后再提醒我 does
            return await snooze.run(SnoozeIntent(reminder=Reminder(remind_at=later), rule="update.as_snooze"), ctx)
        just_reminded = await _just_reminded(intent, ctx) if isinstance(intent, CompleteIntent) else None
        if just_reminded is not None:
            intent, item = just_reminded
            items = [item]
        else:
            items = await _matches(intent, ctx)  # a clock said alone can still name it
            if not items:
                return await _ask_which(intent, ctx)
            intent = intent.model_copy(update={"needs_clarification": [
                m for m in intent.needs_clarification if m != "target"]})
    if items is None:
        items = await _matches(intent, ctx)
    if not items and isinstance(intent, UpdateIntent) and intent.or_focus:
        focused = await _in_focus(intent, ctx)
        if focused is not None:
            intent, items = focused
    if not items:
        return NoMatch(intent.action, intent.target_text or "")
    if intent.every and not isinstance(intent, UpdateIntent) and len(items) > 1:
        if len(items) > MAX_CHOICES:
            return Failed(f"符合的有 {len(items)} 条，一次最多处理 {MAX_CHOICES} 条，没有做任何改动。"
                          "带上日期或名称再说一次吧，比如“明天的会都取消”。")
        return await _apply_every(intent, items, ctx)
    if len(items) > 1:
        shown = tuple(items[:MAX_CHOICES])
        ask = intent.model_copy(update={"needs_clarification": ["target"], "choice": None,
                                        "question": "要选哪一个？回复序号就行。"})
        ctx.ask(ask, candidates=tuple(i.id for i in shown))
        return Ambiguous(intent.action, shown)
    try:
        return await _apply(intent, items[0], ctx)
    except (NotFound, InvalidChange) as exc:
        return Failed(f"这条没改成：{_why(exc)}。")


async def _in_focus(intent: Targeted, ctx: Context) -> tuple[Targeted, list[Item]] | None:
    """The items in focus for a follow-up naming none, unless a reminder delivered since is newer."""
    ids = ctx.focus_ids
    reminded = await _just_reminded_item(ctx) if not ids or not isinstance(intent, CancelIntent) else None
    if reminded is not None and (reminded[0].sent_at or 0) > (ctx.focus.at if ids else 0) \
            and to_ms(ctx.now) - (reminded[0].sent_at or 0) < FOCUS_TTL_MS:
        # a reminder just delivered is the focus; 搞定了 / 推迟到… keep their own reminder paths
        if isinstance(intent, CompleteIntent) or (isinstance(intent, UpdateIntent) and _later(intent, ctx)):
            return None
        ids = (reminded[1].id,)
    if not ids:
        return None
    items = await ctx.active_items(ids)
    if not items:
        return None
    update: dict[str, object] = {"needs_clarification": [m for m in intent.needs_clarification if m != "target"]}
    on = ctx.focus.day(ctx.now_ms)
    if len(items) == 1 and items[0].recurrence is not None and ctx.focus.op != "created" and on is not None \
            and not isinstance(intent, UpdateIntent):
        update["target_date"] = on  # the occurrence talked about, never the whole series
    return intent.model_copy(update=update), items


async def _ask_which(intent: Targeted, ctx: Context) -> Outcome:
    """Nothing named and nothing in focus: offer the likely items as a numbered list (never a bare question)."""
    now_ms = to_ms(ctx.now)
    soon = await ctx.service.list_items(ctx.user.id, start_ms=now_ms - 3_600_000, end_ms=now_ms + 7 * 86_400_000,
                                        include_undated_tasks=True)
    shown = tuple(soon[:5])
    ask = intent.model_copy(update={"needs_clarification": ["target"], "choice": None,
                                    "question": "要选哪一个？回复序号就行。"})
    if not shown:
        return Asked("你现在还没有要办的日程或待办，没有可以改的。要新记一条的话，告诉我时间和事情。")
    ctx.ask(ask, candidates=tuple(i.id for i in shown))
    return Ambiguous(intent.action, shown, unnamed=True)


async def _chosen(intent: Targeted, ctx: Context) -> list[Item] | None:
    """The item picked by number from the list offered before ("2", "第二个", "后面那个"), or all of them ("全部")."""
    if not ctx.candidates:
        return None
    if intent.every and intent.rule == EVERY_PICKED:
        return [item for item in [await _still_there(ctx, i) for i in ctx.candidates] if item is not None]
    if intent.choice is None:
        return None
    index = len(ctx.candidates) - 1 if intent.choice == -1 else intent.choice - 1
    if not 0 <= index < len(ctx.candidates):
        return []
    try:
        return [await ctx.service.get_item(ctx.user.id, ctx.candidates[index])]
    except NotFound:
        return []


async def _matches(intent: Targeted, ctx: Context) -> list[Item]:
    day = intent.target_date
    if day is not None:  # occurrences on that day (recurring items at that occurrence)
        lo = localize(datetime.combine(day, time()), ctx.tz)
        items = await ctx.service.list_items(ctx.user.id, start_ms=to_ms(lo), end_ms=to_ms(lo + timedelta(days=1)))
    else:
        items = await ctx.service.list_items(ctx.user.id, include_undated_tasks=True)
    if not items:
        return []
    if intent.reminders:
        return _alarms(intent, items, ctx)
    by_id = {i.id: i for i in items}
    candidates = [_candidate(i, ctx) for i in items]
    minute = intent.target_minute
    # A clock with no words and no day (下午三点那个) may mean any day's: the implied day would rule out all but today.
    implied = intent.target_on if intent.target_text or intent.target_on_said else None
    ranked = rank(intent.target_text, candidates, target_date=day or implied, target_minute=minute)
    found = [by_id[c.id] for c in ranked]
    if len(found) > 1:  # prefer what is still ahead over what is past
        upcoming = [i for i in found if i.anchor_at is None or i.anchor_at >= to_ms(ctx.now) - 3_600_000]
        found = upcoming or found
    return found


def _alarms(intent: Targeted, items: list[Item], ctx: Context) -> list[Item]:
    """关掉闹钟 / 取消明早的闹钟 / 把7点那个闹钟关了: the tasks still to be reminded at their own time (what the
    user set as an alarm), narrowed by the clock said, a bare hour standing for either half of the day."""
    now_ms = to_ms(ctx.now)
    alarms = [i for i in items if i.kind == "task" and any(r.status == "pending" and r.remind_at >= now_ms
                                                           for r in i.reminders)]
    minute = intent.target_minute
    if minute is not None:
        alarms = [i for i in alarms if (_candidate(i, ctx).at_minute or 0) % 720 == minute % 720]
    return sorted(alarms, key=lambda i: i.anchor_at or 0)


async def _just_reminded_item(ctx: Context) -> tuple[StoredReminder, Item] | None:
    """The reminder delivered in the last 12 hours (the snooze window) and its item, if still open."""
    last = await ctx.service.last_delivered_reminder(ctx.user.id, since_ms=to_ms(ctx.now) - RECENT_MS)
    return last if last is not None and last[1].status == "active" else None


def _later(intent: UpdateIntent, ctx: Context) -> datetime | None:
    """推迟半小时 / 推迟到下午3点 with nothing named: the later instant asked for, if any."""
    changes = intent.changes
    if changes is None:
        return None
    if changes.shift_minutes is not None and changes.shift_minutes > 0:
        return ctx.now + timedelta(minutes=changes.shift_minutes)
    if changes.start_at is not None and changes.start_at > ctx.now:
        return changes.start_at
    return None


async def _just_reminded(intent: CompleteIntent, ctx: Context) -> tuple[CompleteIntent, Item] | None:
    """"搞定了" right after a reminder: the item (for a series, the occurrence) it was about, if still open."""
    last = await _just_reminded_item(ctx)
    if last is None:
        return None
    reminder, item = last
    day = from_ms(reminder.remind_at + (reminder.offset_minutes or 0) * 60_000).astimezone(ctx.tz).date()
    done = intent.model_copy(update={"needs_clarification": [], "question": None,
                                     "target_date": day if item.recurrence is not None else None})
    return done, item


async def _still_there(ctx: Context, item_id: int) -> Item | None:
    try:
        return await ctx.service.get_item(ctx.user.id, item_id)
    except NotFound:
        return None


async def _apply_every(intent: CancelIntent | CompleteIntent, items: list[Item], ctx: Context) -> Outcome:
    """Each match in turn, in the message's one unit of work; the reply lists exactly those changed."""
    done: list[Changed] = []
    for item in items:
        try:
            outcome = await _apply(intent, item, ctx)
        except (NotFound, InvalidChange):
            continue
        assert isinstance(outcome, Changed)
        done.append(outcome)
    if not done:
        return Failed("这几条都没改成，可能刚被改过或已删除。发“看看日程”可以核对。")
    return ChangedAll(intent.action, tuple(done), skipped=len(items) - len(done))


async def _occurrence_due(item: Item, ctx: Context) -> date | None:
    """The occurrence a "done" is about: today's if the series has one today, else its next; None when over."""
    stored = await ctx.service.get_item(ctx.user.id, item.id)  # the series' own start, not a shown occurrence
    if stored.recurrence is None or stored.anchor_at is None:
        return None
    today = localize(datetime.combine(ctx.now.date(), time()), ctx.tz)
    found = next_occurrence(stored.recurrence, dtstart=from_ms(stored.anchor_at), after=today - timedelta(seconds=1),
                            tz=ctx.tz)
    return found.astimezone(ctx.tz).date() if found is not None else None


async def named(words: str, ctx: Context) -> list[Item]:
    """The open items the words name best (跟王总吃饭 → that dinner), what is still ahead first."""
    items = await ctx.service.list_items(ctx.user.id, include_undated_tasks=True)
    by_id = {i.id: i for i in items}
    found = [by_id[c.id] for c in rank(words, [_candidate(i, ctx) for i in items])]
    upcoming = [i for i in found if i.anchor_at is None or i.anchor_at >= to_ms(ctx.now) - 3_600_000]
    return upcoming or found


def _candidate(item: Item, ctx: Context) -> Candidate:
    anchor = item.anchor_at
    if anchor is None:
        return Candidate(id=item.id, title=item.title, kind=item.kind)
    at = from_ms(anchor).astimezone(ctx.tz)
    return Candidate(id=item.id, title=item.title, on=at.date(),
                     at_minute=None if item.all_day else at.hour * 60 + at.minute, kind=item.kind)


async def _apply(intent: Targeted, item: Item, ctx: Context) -> Outcome:
    service, uid = ctx.service, ctx.user.id
    if isinstance(intent, CompleteIntent) and item.recurrence is not None:
        dose = await course.dose_done(item, intent.target_date, ctx)  # several a day: the dose that is due
        if dose is not None:
            return dose
    if isinstance(intent, CompleteIntent):
        day = (intent.target_date or await _occurrence_due(item, ctx)) if item.recurrence is not None else None
        if day is not None:  # 吃药那个完成了: today's pill, not the whole daily series
            await service.complete_occurrence(uid, item.id, day)
            return Changed("complete", item, before=item, occurrence_on=day.isoformat())
        return Changed("complete", await service.complete_item(uid, item.id), before=item)
    if isinstance(intent, CancelIntent):
        if item.recurrence is not None and intent.target_date is not None:
            await service.skip_occurrence(uid, item.id, intent.target_date)
            return Changed("cancel", item, before=item, occurrence_on=intent.target_date.isoformat())
        return Changed("cancel", await service.cancel_item(uid, item.id), before=item)
    changes = intent.changes or Changes()
    if changes.no_reminder:
        return await _without_reminders(item, ctx)
    if changes.dose_to is not None or changes.end_series:  # 早上那次改到八点 / 停药
        return await course.apply(changes, item, ctx)
    updated = item
    stored = await service.get_item(uid, item.id)  # the series as stored, not the occurrence shown
    if stored.recurrence is not None and intent.target_date is not None and stored.anchor_at is not None \
            and not changes.title and not changes.location and changes.offset_minutes is None:
        moved = await _move_one_occurrence(stored, intent.target_date, changes, ctx)
        if moved is not None:
            return moved
    move = _moved_anchor(changes, stored, ctx)
    title = changes.title.strip()[:200] if changes.title else None
    end = _new_end(changes, stored, move)
    if (end is not None or changes.duration_minutes) and stored.kind != "event":
        return Failed(f"“{stored.title}”是待办，没有结束时间，没有做任何改动。")
    rule = changes.recurrence
    if move is not None or title or changes.location or end is not None or changes.note or rule is not None:
        event = stored.kind == "event"
        update = ItemChanges(title=title, start_at=move if event else None, due_at=None if event else move,
                             location=changes.location, end_at=end, description=changes.note,
                             recurrence=Recurrence(rrule=rule.rrule, workdays=rule.workdays) if rule else None)
        if move is not None and stored.all_day and changes.start_at is not None:
            update = replace(update, all_day=False)
        updated = await service.update_item(uid, item.id, update)
    if changes.offset_minutes is not None and stored.all_day and changes.offset_minutes % 1440 == 0 \
            and changes.offset_minutes > 0 and intent.rule != LEAD_CLOCK and updated is item:
        return _ask_lead_clock(intent, stored, changes.offset_minutes, ctx)  # which hour of that day?
    if changes.offset_minutes is not None and changes.another_reminder and stored.anchor_at is not None:
        at_ms = stored.anchor_at - changes.offset_minutes * 60_000
        await service.create_reminder(uid, item.id, NewReminder(remind_at=max(at_ms, to_ms(ctx.now)),
                                                                offset_minutes=changes.offset_minutes))
        updated = await service.get_item(uid, item.id)
    elif changes.offset_minutes is not None:
        updated = await service.set_reminder_lead(uid, item.id, changes.offset_minutes)
    if updated is item:
        return Failed("没听出要改成什么，没有做任何改动。可以说“改到明天下午四点”或“提前15分钟提醒”。")
    return Changed("update", updated, before=item)


async def _without_reminders(item: Item, ctx: Context) -> Outcome:
    """不用提醒我了: the item stays and its open reminders go; an alarm, which is nothing but its reminder, goes."""
    service, uid = ctx.service, ctx.user.id
    stored = await service.get_item(uid, item.id)
    if stored.kind == "task" and stored.title in _ALARM_TITLES:
        return Changed("cancel", await service.cancel_item(uid, item.id), before=item)
    return Changed("update", await service.drop_reminders(uid, item.id), before=item)


_ALARM_TITLES = frozenset({"闹钟", "起床", "倒计时", "提醒"})


async def _move_one_occurrence(series: Item, on: date, changes: Changes, ctx: Context) -> Outcome | None:
    """周四的健身改到周五: that day's occurrence leaves the series (as a cancelled one does) and a one-off copy,
    reminded with the series' lead times, takes the new time; the series and its other days stay as they are."""
    if series.anchor_at is None:
        return None
    clock = from_ms(series.anchor_at).astimezone(ctx.tz).time().replace(tzinfo=None)
    occurrence = at_occurrence(series, to_ms(localize(datetime.combine(on, clock), ctx.tz)))
    move = _moved_anchor(changes, occurrence, ctx)
    if move is None or move == occurrence.anchor_at or occurrence.anchor_at is None:
        return None
    shift = move - occurrence.anchor_at
    leads = sorted({r.offset_minutes for r in series.reminders
                    if r.status not in ("cancelled", "expired") and r.offset_minutes is not None})
    event = series.kind == "event"
    await ctx.service.skip_occurrence(ctx.user.id, series.id, on)
    copy = await ctx.service.create_item(ctx.user.id, NewItem(
        kind=series.kind, title=series.title, timezone=series.timezone, all_day=series.all_day,
        start_at=move if event else None, due_at=None if event else move,
        end_at=occurrence.end_at + shift if event and occurrence.end_at is not None else None,
        description=series.description, location=series.location, source_channel="wechat",
        source_message_id=ctx.message_id, source_text=ctx.text[:2000],
        reminders=tuple(NewReminder(remind_at=max(move - lead * 60_000, to_ms(ctx.now)), offset_minutes=lead)
                        for lead in leads)))
    return Changed("update", copy, before=occurrence, occurrence_on=on.isoformat())


def _ask_lead_clock(intent: UpdateIntent, item: Item, lead: int, ctx: Context) -> Outcome:
    """An all-day item reminded N days ahead needs a clock time: ask it, keeping the item and the lead."""
    day = from_ms(item.anchor_at or 0).astimezone(ctx.tz).date()
    days = "一天" if lead == 1440 else f"{lead // 1440} 天"
    ask = intent.model_copy(update={"needs_clarification": ["reminder_time"], "choice": 1, "target_date": None,
                                    "pending": Pending(label=item.title, on_date=day, lead_minutes=lead),
                                    "question": f"好的，提前{days}几点提醒你？"})
    ctx.ask(ask, candidates=(item.id,))
    return Asked(f"好的，“{item.title}”提前{days}几点提醒你？比如“晚上8点”。")


def _new_end(changes: Changes, item: Item, move: int | None) -> int | None:
    """四点结束 / 大概两个小时: the event's new end (a length counts from its start, moved or not)."""
    if changes.end_at is not None:
        return to_ms(changes.end_at)
    start = move if move is not None else item.anchor_at
    if changes.duration_minutes and start is not None:
        return start + changes.duration_minutes * 60_000
    return None


def _moved_anchor(changes: Changes, item: Item, ctx: Context) -> int | None:
    """The new instant for the item's time, keeping what the user did not mention (date or clock)."""
    anchor = item.anchor_at
    current = from_ms(anchor).astimezone(ctx.tz) if anchor is not None else None
    if changes.shift_minutes is not None and anchor is not None:
        return anchor + changes.shift_minutes * 60_000
    new = changes.start_at or changes.due_at
    if new is not None:
        new = new.astimezone(ctx.tz)
        if current is not None and not changes.day_said and changes.date is None:  # 改到四点: same day
            clock = new.time().replace(tzinfo=None)
            hour = changes.bare_hour  # 跑步改到九点: the item's own time picks morning or evening
            if hour is not None:
                clock = clock.replace(hour=_nearest_reading(hour, clock.minute, current.time()))
            return to_ms(localize(datetime.combine(current.date(), clock), ctx.tz))
        return to_ms(new)
    if changes.date is not None:
        clock = current.time().replace(tzinfo=None) if current is not None else time()
        return to_ms(localize(datetime.combine(changes.date, clock), ctx.tz))
    return None


def _nearest_reading(hour: int, minute: int, current: time) -> int:
    """hour or hour + 12, whichever is nearer the item's current time of day (九点 for an 08:00 run is 09:00)."""
    now = current.hour * 60 + current.minute
    morning, evening = hour * 60 + minute, (hour + 12) * 60 + minute
    return hour if abs(morning - now) < abs(evening - now) else hour + 12


def _why(exc: Exception) -> str:
    return "找不到这一条了" if isinstance(exc, NotFound) else "时间不对（结束早于开始，或这一条已经关闭）"

