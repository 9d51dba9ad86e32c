"""Time-driven work that turns due reminders and digests into outbox rows (intent before I/O).

Each due reminder becomes an outbox row in the same transaction that marks it fired; each due
digest subscription is claimed with SKIP LOCKED and keyed `digest:{subscription}:{date}`, so any
number of workers produce at most one digest per subscription per local date.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import partial
from typing import Any, cast
from zoneinfo import ZoneInfo

from sqlalchemy import ColumnElement, and_, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import budget, holiday_store, inbound, outbox
from schedule.budget import Firing, PushBudget
from schedule.clock import Clock, from_ms, to_ms
from schedule.convert import ITEM_COLUMNS, ITEMS, REMINDERS, item_of, recurrence_of
from schedule.db import in_transaction
from schedule.digest import next_digest_run
from schedule.domain import Item
from schedule.model import DigestSubscriptionRow, ReminderRow, ScheduleItemRow
from schedule.occurrence import at_occurrence, in_range
from schedule.recurrence import next_occurrence

RECOVERY_AFTER_MS = 60_000  # far past the 4 s reply budget: a message still processing is orphaned
DEDUPE_KEEP_MS = 2 * 86_400_000  # WeChat retries within seconds; two days is ample
ReminderText = Callable[[Item, int], str]
NEXT_DAY = "todo_next_day"  # a digest kind: the agenda of the day after the run
DigestText = Callable[[date, list[Item], str, bool], str]  # (day, agenda, tz, sent the day before)
log = logging.getLogger(__name__)




@dataclass(frozen=True, slots=True)
class _Fired:
    """The reminder columns a firing reads."""

    id: int
    user_id: int
    remind_at: int
    offset_minutes: int | None
    channel: str
    once: bool = False


@dataclass(frozen=True, slots=True)
class FireReport:
    reminders_queued: int = 0
    reminders_expired: int = 0
    digests_queued: int = 0
    inbound_recovered: int = 0
    full: bool = False  # a pass filled its batch: more may be due right now


class Scheduler:
    """Moves due reminders and digests into the outbox; one `tick()` reads the clock once."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *, reminder_text: ReminderText,
                 digest_text: DigestText, catchup_hours: int = 12, batch_size: int = 500,
                 recovery_after_ms: int = RECOVERY_AFTER_MS, push_budget: PushBudget | None = None) -> None:
        self._sessions = sessions
        self._budget = push_budget or PushBudget()
        self._clock = clock
        self._reminder_text = reminder_text
        self._digest_text = digest_text
        self._catchup_ms = catchup_hours * 3_600_000
        self._batch = batch_size
        # a message still `processing` this long after it arrived is orphaned (its process died): not before
        # the slowest answer could still arrive (timeout × attempts × tool rounds; docs/delivery.md#late-answers)
        self._recovery_after_ms = max(RECOVERY_AFTER_MS, recovery_after_ms)
        self._last_recovery = self._last_purge = -(1 << 62)

    async def tick(self) -> FireReport:
        now = self._clock.now()
        queued, expired, fired = await self.fire_reminders(now)
        digests, seen = await self.fire_digests(now)
        recovered = await self.housekeeping(now)
        return FireReport(reminders_queued=queued, reminders_expired=expired, digests_queued=digests,
                          inbound_recovered=recovered, full=fired >= self._batch or seen >= self._batch)

    async def housekeeping(self, now: datetime) -> int:
        """Close inbound messages a crashed process left unfinished (their senders get a notice), forget
        dedupe keys older than WeChat's retry horizon, and read the holiday schedules the operator loaded.
        Each runs at most once a minute / hour."""
        stamp = to_ms(now)
        recovered = 0
        if stamp - self._last_recovery >= 60_000:
            self._last_recovery = stamp
            recovered = await in_transaction(self._sessions, lambda session: inbound.recover_unfinished(
                session, received_before_ms=stamp - self._recovery_after_ms, now_ms=stamp))
        if stamp - self._last_purge >= 3_600_000:
            self._last_purge = stamp
            await in_transaction(self._sessions,
                                 lambda session: inbound.purge(session, received_before_ms=stamp - DEDUPE_KEEP_MS))
            await in_transaction(self._sessions, lambda session: budget.purge(session, now_ms=stamp))
            await holiday_store.refresh(self._sessions)  # a year's official schedule the operator loaded
        return recovered

    async def fire_reminders(self, now: datetime) -> tuple[int, int, int]:
        """(reminders queued, expired, due reminders seen)."""
        return await in_transaction(self._sessions, lambda session: self._fire_reminders(session, to_ms(now)))

    async def _fire_reminders(self, session: AsyncSession, now_ms: int) -> tuple[int, int, int]:
        """Set-based: one locked read (plain rows, no ORM objects), one multi-row outbox INSERT, one UPDATE
        per resulting status."""
        r = REMINDERS.c
        rows = (await session.execute(
            select(r.id.label("r_id"), r.user_id.label("r_user_id"), r.remind_at.label("r_remind_at"),
                   r.offset_minutes.label("r_offset_minutes"), r.channel.label("r_channel"),
                   r.once.label("r_once"), *ITEM_COLUMNS)
            .join_from(REMINDERS, ITEMS, ITEMS.c.id == r.item_id)
            .where(r.status == "pending", r.remind_at <= now_ms)
            .order_by(r.remind_at, r.id)
            .limit(self._batch)
            .with_for_update(skip_locked=True))).all()
        status: dict[str, list[int]] = {"cancelled": [], "expired": [], "locked": []}
        messages: list[dict[str, Any]] = []
        following: list[dict[str, Any]] = []
        firings: list[Firing] = []
        for row in rows:
            reminder = _Fired(row.r_id, row.r_user_id, row.r_remind_at, row.r_offset_minutes, row.r_channel,
                              bool(row.r_once))
            item_row = cast(ScheduleItemRow, row)  # the items columns, by the same names
            if item_row.status != "active":
                status["cancelled"].append(reminder.id)
                continue
            following += await self._schedule_next(session, reminder, item_row, now_ms)
            item = self._item_at(item_row, reminder)
            # due_at, remind_at, tz, all_day: what the channels word at send time (the countdown, WeChat's time)
            payload = {"text": self._reminder_text(item, reminder.remind_at), "title": item.title, "when": _when(item),
                       "due_at": item.anchor_at, "remind_at": reminder.remind_at, "tz": item.timezone,
                       "all_day": item.all_day}
            if now_ms - reminder.remind_at > self._catchup_ms:
                status["expired"].append(reminder.id)
                log.info("reminder %s expired after downtime: reported in the in-app queue", reminder.id)
                # Too late to push, never silently dropped: the in-app queue reports it on the next reply.
                # Its text names the item's time with no countdown ("还有 30 分钟" is untrue by the time it is read).
                missed = self._reminder_text(item, item.anchor_at or reminder.remind_at)
                messages.append({"user_id": reminder.user_id, "kind": "notice", "channel": "inapp",
                                 "idempotency_key": f"expired:{reminder.id}:{reminder.remind_at}",
                                 "reminder_id": reminder.id, "payload": {**payload, "text": missed, "expired": True}})
                continue
            status["locked"].append(reminder.id)
            messages.append({"user_id": reminder.user_id, "kind": "reminder", "channel": reminder.channel,
                             "idempotency_key": f"reminder:{reminder.id}:{reminder.remind_at}",
                             "reminder_id": reminder.id, "payload": payload})
            series = budget.series_of(item_row.id) if recurrence_of(item_row) else None
            firings.append(Firing(messages[-1], series, reminder.remind_at, read_later=partial(
                self._reminder_text, item, item.anchor_at or reminder.remind_at)))
        await budget.hold_pushes(session, firings, self._budget, now_ms=now_ms)  # over a budget: in-app queue
        await outbox.enqueue_many(session, messages, now_ms=now_ms)
        if following:  # one row per (item, instant, channel): those already there (one query a batch) are left out
            unique = {(f["item_id"], f["remind_at"], f["channel"]): f for f in following}
            held = {tuple(found) for found in (await session.execute(
                select(r.item_id, r.remind_at, r.channel).where(r.item_id.in_({k[0] for k in unique}),
                                                                r.remind_at.in_({k[1] for k in unique})))).all()}
            fresh = [f for key, f in unique.items() if tuple(key) not in held]
            if fresh:
                await session.execute(insert(REMINDERS), fresh)
        for new_status, ids in status.items():
            if ids:
                await session.execute(update(ReminderRow).where(ReminderRow.id.in_(ids))
                                      .values(status=new_status, updated_at=now_ms)
                                      .execution_options(synchronize_session=False))
        return len(status["locked"]), len(status["expired"]), len(rows)

    def _item_at(self, row: ScheduleItemRow, reminder: _Fired) -> Item:
        """The item as seen at the occurrence this reminder belongs to."""
        item = item_of(row)
        if recurrence_of(row) is None or item.anchor_at is None:
            return item
        lead = reminder.offset_minutes * 60_000 if reminder.offset_minutes is not None else 0
        return at_occurrence(item, reminder.remind_at + lead)

    async def _schedule_next(self, session: AsyncSession, reminder: _Fired, row: ScheduleItemRow,
                             now_ms: int) -> list[dict[str, Any]]:
        """A recurring item's next occurrence gets its reminder, with the same lead time (the row to add)."""
        recurrence = recurrence_of(row)
        anchor = row.start_at if row.kind == "event" else row.due_at
        if recurrence is None or anchor is None or reminder.once:  # a snooze stays on its occurrence
            return []
        lead = reminder.offset_minutes * 60_000 if reminder.offset_minutes is not None else anchor - reminder.remind_at
        if lead < 0:  # after its occurrence began: a snooze of that occurrence (the page's), not the series' plan
            return []
        occurrence = from_ms(reminder.remind_at + lead)
        nxt = next_occurrence(recurrence, dtstart=from_ms(anchor), after=occurrence, tz=ZoneInfo(row.timezone))
        if nxt is None:
            return []
        remind_at = to_ms(nxt) - lead  # (one already there is left out for the whole batch at once)
        return [{"user_id": row.user_id, "item_id": row.id, "remind_at": remind_at, "offset_minutes": lead // 60_000,
                 "channel": reminder.channel, "status": "pending", "attempts": 0, "next_attempt_at": remind_at,
                 "created_at": now_ms, "updated_at": now_ms}]

    async def fire_digests(self, now: datetime) -> tuple[int, int]:
        """(digests queued, due subscriptions seen)."""
        return await in_transaction(self._sessions, lambda session: self._fire_digests(session, now))

    async def _fire_digests(self, session: AsyncSession, now: datetime) -> tuple[int, int]:
        """Set-based: the batch's agendas in one read, one multi-row outbox INSERT, grouped UPDATEs."""
        now_ms = to_ms(now)
        subs = (await session.execute(
            select(DigestSubscriptionRow.id, DigestSubscriptionRow.user_id, DigestSubscriptionRow.timezone,
                   DigestSubscriptionRow.next_run_at, DigestSubscriptionRow.last_run_local_date,
                   DigestSubscriptionRow.local_time, DigestSubscriptionRow.workdays, DigestSubscriptionRow.channel,
                   DigestSubscriptionRow.kind, DigestSubscriptionRow.rrule)
            .where(DigestSubscriptionRow.status == "active", DigestSubscriptionRow.next_run_at <= now_ms)
            .order_by(DigestSubscriptionRow.next_run_at)
            .limit(self._batch)
            .with_for_update(skip_locked=True))).all()
        due: list[tuple[Any, date, ZoneInfo]] = []
        updates: dict[tuple[int, str | None], list[int]] = defaultdict(list)
        for sub in subs:
            tz = ZoneInfo(sub.timezone)
            run_at = from_ms(sub.next_run_at or now_ms)
            day = run_at.astimezone(tz).date()
            fresh = now_ms - to_ms(run_at) <= self._catchup_ms
            last = sub.last_run_local_date
            if fresh and last != day.isoformat():
                due.append((sub, day, tz))
                last = day.isoformat()
            after = to_ms(next_digest_run(sub.local_time, tz=tz, after=max(now, run_at), workdays=sub.workdays,
                                          rrule=sub.rrule))
            updates[(after, last)].append(sub.id)
        # todo_next_day (每晚9点发第二天的安排) covers the day after the run's local date
        shown = [(sub, day + timedelta(days=1) if sub.kind == NEXT_DAY else day, tz) for sub, day, tz in due]
        agendas = await agendas_of(session, [(sub.user_id, on, tz) for sub, on, tz in shown])
        await outbox.enqueue_many(session, [
            {"user_id": sub.user_id, "kind": "digest", "channel": sub.channel,
             "idempotency_key": f"digest:{sub.id}:{run_day.isoformat()}",
             "payload": {"text": self._digest_text(on, agendas[(sub.user_id, on)], sub.timezone, sub.kind == NEXT_DAY),
                         "title": "明日待办" if sub.kind == NEXT_DAY else "今日待办", "when": on.isoformat(),
                         "day": on.isoformat(), "tz": sub.timezone, "count": len(agendas[(sub.user_id, on)])}}
            for (sub, on, _), (_s, run_day, _t) in zip(shown, due, strict=True)], now_ms=now_ms)
        for (after, last), ids in updates.items():
            await session.execute(update(DigestSubscriptionRow).where(DigestSubscriptionRow.id.in_(ids))
                                  .values(next_run_at=after, last_run_local_date=last, updated_at=now_ms)
                                  .execution_options(synchronize_session=False))
        return len(due), len(subs)


async def agendas_of(session: AsyncSession, wanted: list[tuple[int, date, ZoneInfo]]
                     ) -> dict[tuple[int, date], list[Item]]:
    """Many users' agendas (see `agenda`) from one read of their candidate items."""
    if not wanted:
        return {}
    latest = max(to_ms(datetime.combine(day + timedelta(days=1), datetime.min.time(), tz)) for _, day, tz in wanted)
    rows = (await session.scalars(select(ScheduleItemRow).where(
        ScheduleItemRow.user_id.in_(sorted({user for user, _, _ in wanted})), ScheduleItemRow.status == "active",
        _candidate(latest)))).all()
    by_user: dict[int, list[ScheduleItemRow]] = defaultdict(list)
    for row in rows:
        by_user[row.user_id].append(row)
    return {(user, day): _agenda(by_user[user], day, tz) for user, day, tz in wanted}


def _candidate(end: int) -> ColumnElement[bool]:
    return or_(ScheduleItemRow.rrule.is_not(None), ScheduleItemRow.workdays.is_not(None),
               ScheduleItemRow.lunar.is_not(None),
               and_(ScheduleItemRow.kind == "task", ScheduleItemRow.due_at < end),
               and_(ScheduleItemRow.kind == "event", ScheduleItemRow.start_at < end))


async def agenda(session: AsyncSession, user_id: int, day: date, tz: ZoneInfo) -> list[Item]:
    """A day's agenda: events that day, tasks due that day, and overdue open tasks (oldest first)."""
    return (await agendas_of(session, [(user_id, day, tz)]))[(user_id, day)]


def _agenda(rows: list[ScheduleItemRow], day: date, tz: ZoneInfo) -> list[Item]:
    start = to_ms(datetime.combine(day, datetime.min.time(), tz))
    end = to_ms(datetime.combine(day + timedelta(days=1), datetime.min.time(), tz))
    items: list[Item] = []
    for row in rows:
        if row.kind == "task" and row.due_at is not None and row.due_at < start and recurrence_of(row) is None:
            items.append(item_of(row))  # overdue and still open
            continue
        hit = in_range(row, start, end, False)
        if hit is not None:
            items.append(at_occurrence(item_of(hit[0]), hit[1]))
    return sorted(items, key=lambda i: (i.anchor_at or 0, i.id))


def _when(item: Item) -> str:
    anchor = item.anchor_at
    if anchor is None:
        return ""
    moment = from_ms(anchor).astimezone(ZoneInfo(item.timezone))
    return moment.strftime("%Y-%m-%d") if item.all_day else moment.strftime("%Y-%m-%d %H:%M")
