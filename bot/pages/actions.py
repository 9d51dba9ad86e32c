"""One-tap actions of the private page, each a ScheduleService call (the one write path).

A button posts `do=verb:id[:choice][:YYYY-MM-DD]`; the date names one occurrence of a series, and then the
tap acts on that occurrence only (完成 = this day done, 取消 = skip this day, snooze = this occurrence).
Ending a whole series is its own verb, offered behind 更多 with a confirmation. Every tap returns what it
did (`did`), which the next page view says, with the value that undoes it.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from render.itinerary import Flash
from render.timefmt import clock_label, day_label, local
from schedule.clock import from_ms, to_ms
from schedule.domain import Item, ItemChanges, NewReminder, Reminder
from schedule.errors import InvalidChange, NotFound, QuotaExceeded
from schedule.occurrence import occurs_on
from schedule.recurrence import localize
from schedule.service import ScheduleService

SNOOZE_CHOICES = ("10m", "1h", "morning")
MORNING = time(8, 0)
VERBS = frozenset({"complete", "cancel", "snooze", "dismiss", "end", "postpone",
                   "undo-complete", "undo-cancel", "undo-snooze", "undo-end", "undo-dismiss"})
# what a tap can come back as (`did`) without being one: an undo over the quota, a day the series does not
# occur on (a stale page after the series changed, or a hand-made form)
REFUSED = frozenset({"full", "gone"})
_ON_ONE_DAY = frozenset({"complete", "cancel", "snooze"})
_TAP = re.compile(r"^([a-z-]{3,16}):([0-9]{1,18})(?::(10m|1h|morning))?(?::([0-9]{4}-[0-9]{2}-[0-9]{2}))?$")
MAX_POSTPONED = 200


class BadTap(ValueError):
    """A `do` value that names no action (or a date that is not one)."""


@dataclass(frozen=True, slots=True)
class Tap:
    verb: str
    target: int  # an item id (a reminder id for dismiss / undo-snooze; 0 for postpone)
    choice: str | None = None  # snooze delay
    on: date | None = None  # one occurrence of a series

    @classmethod
    def parse(cls, raw: str, *, verbs: frozenset[str] = VERBS) -> Tap:
        found = _TAP.match(raw)
        if found is None or found.group(1) not in verbs:
            raise BadTap(raw[:40])
        verb, target, choice, on = found.groups()
        if (verb == "snooze") != (choice is not None):
            raise BadTap(raw[:40])
        try:
            day = date.fromisoformat(on) if on else None
        except ValueError as exc:
            raise BadTap(raw[:40]) from exc
        return cls(verb, int(target), choice, day)

    def __str__(self) -> str:
        return ":".join([self.verb, str(self.target), *([self.choice] if self.choice else []),
                         *([self.on.isoformat()] if self.on else [])])


def snooze_at(choice: str, *, now_ms: int, tz: str) -> int:
    """10 分钟 / 1 小时 later (to the minute, so a double tap is one reminder), or the next 08:00."""
    if choice == "10m":
        return (now_ms + 10 * 60_000) // 60_000 * 60_000
    if choice == "1h":
        return (now_ms + 60 * 60_000) // 60_000 * 60_000
    if choice == "morning":
        zone = ZoneInfo(tz)
        now = from_ms(now_ms).astimezone(zone)
        day = now.date() if now.time() < MORNING else now.date() + timedelta(days=1)
        return to_ms(localize(datetime.combine(day, MORNING), zone))
    raise ValueError(f"unknown snooze choice {choice!r}")


class PageActions:
    """The taps for one user; a tap on something already closed changes nothing (a second tap is harmless)."""

    def __init__(self, service: ScheduleService) -> None:
        self._service = service

    async def perform(self, user_id: int, tap: Tap, *, now_ms: int, tz: str) -> Tap | None:
        """Do the tap; returns what was done (for the next view's message), None when nothing changed."""
        service, verb = self._service, tap.verb
        if verb in ("dismiss", "undo-snooze"):
            await service.cancel_reminder(user_id, tap.target)
            return tap
        if verb == "undo-dismiss":  # 不用提醒, taken back: the same reminder again, while it is still ahead
            rem = await service.get_reminder(user_id, tap.target)
            if rem.status != "cancelled" or rem.remind_at <= now_ms:
                return None
            with suppress(InvalidChange):
                made = await service.create_reminder(user_id, rem.item_id, NewReminder(
                    remind_at=rem.remind_at, offset_minutes=rem.offset_minutes, channel=rem.channel))
                return Tap("undo-dismiss", made.id)
            return None
        if verb == "postpone":
            moved = await self.postpone_overdue(user_id, now_ms=now_ms, tz=tz)
            return Tap("postpone", moved)
        item = await service.get_item(user_id, tap.target)
        if tap.on is not None and item.recurrence is None:
            raise NotFound(f"item {item.id} has no occurrences")
        if tap.on is not None and verb in _ON_ONE_DAY and not occurs_on(item, tap.on):
            return Tap("gone", item.id, None, tap.on)  # refused: nothing is stored for a day it does not occur on
        try:
            if verb == "snooze":
                assert tap.choice is not None
                return await self._snooze(user_id, item, tap, snooze_at(tap.choice, now_ms=now_ms, tz=tz))
            if verb in ("undo-complete", "undo-cancel", "undo-end"):
                if tap.on is not None:
                    await service.reopen_occurrence(user_id, item.id, tap.on)
                else:
                    await service.reopen_item(user_id, item.id)
                return tap
            if item.status != "active":
                return None
            if verb == "end":  # the whole series (confirmed behind 更多)
                await service.cancel_item(user_id, item.id)
            elif tap.on is not None:
                if verb == "complete":
                    await service.complete_occurrence(user_id, item.id, tap.on)
                else:
                    await service.skip_occurrence(user_id, item.id, tap.on)
            elif item.recurrence is not None:
                return None  # a one-tap button on a series always names its day: never end it by accident
            elif verb == "complete" and item.kind == "task":
                await service.complete_item(user_id, item.id)
            elif verb == "cancel":
                await service.cancel_item(user_id, item.id)
            else:
                return None
        except QuotaExceeded:  # reopening counts towards the quota as creating does
            return Tap("full", item.id, None, tap.on)
        except InvalidChange:
            return None
        return tap

    async def _snooze(self, user_id: int, item: Item, tap: Tap, remind_at: int) -> Tap | None:
        offset = None
        if tap.on is not None and item.recurrence is not None and item.anchor_at is not None:
            # the reminder belongs to this occurrence: its lead counts back from the occurrence's time
            clock = local(item.anchor_at, item.timezone).time()
            occurs = to_ms(localize(datetime.combine(tap.on, clock), ZoneInfo(item.timezone)))
            offset = (occurs - remind_at) // 60_000
        with suppress(InvalidChange):  # the item was closed meanwhile: nothing to remind of
            made = await self._service.create_reminder(user_id, item.id, NewReminder(
                remind_at=remind_at, offset_minutes=offset, once=offset is not None))  # that occurrence only
            return Tap("snooze", made.id, tap.choice)  # names the new reminder (its 撤销 cancels it)
        return None

    async def postpone_overdue(self, user_id: int, *, now_ms: int, tz: str) -> int:
        """全部顺延到今天: every overdue one-off task is due today (its own clock time when still ahead, else
        23:59); how many moved."""
        zone = ZoneInfo(tz)
        today = from_ms(now_ms).astimezone(zone).date()
        midnight = to_ms(localize(datetime.combine(today, time()), zone))
        late = [i for i in await self._service.list_items(user_id, end_ms=midnight, kind="task")
                if i.recurrence is None and i.due_at is not None][:MAX_POSTPONED]
        for item in late:
            assert item.due_at is not None
            if item.all_day:
                changes = ItemChanges(due_at=midnight)
            else:
                due = to_ms(localize(datetime.combine(today, local(item.due_at, tz).time()), zone))
                changes = ItemChanges(due_at=due if due > now_ms else
                                      to_ms(localize(datetime.combine(today, time(23, 59)), zone)))
            await self._service.update_item(user_id, item.id, changes)
        return len(late)

    async def describe(self, user_id: int, raw: str | None, *, tz: str) -> Flash | None:
        """The message for what a tap did (`did` in the page's address), or None. Only the user's own items."""
        if not raw:
            return None
        try:
            tap = Tap.parse(raw, verbs=VERBS | REFUSED)
        except BadTap:
            return None
        if tap.verb == "postpone":
            return Flash(f"已把 {tap.target} 项过期待办顺延到今天。")
        try:
            if tap.verb in ("dismiss", "undo-dismiss"):
                rem, item = await self._reminder(user_id, tap.target)
                when = local(rem.remind_at, tz)
                if tap.verb == "undo-dismiss":
                    return Flash(f"已撤销：{day_label(when.date())}{clock_label(when)} 照常提醒“{item.title}”。")
                return Flash(f"好的，{day_label(when.date())}{clock_label(when)} 不再提醒“{item.title}”。",
                             undo=f"undo-dismiss:{rem.id}")
            if tap.verb in ("snooze", "undo-snooze"):
                rem, item = await self._reminder(user_id, tap.target)
                if tap.verb == "undo-snooze":
                    return Flash(f"已撤销：不再额外提醒“{item.title}”。")
                when = local(rem.remind_at, tz)
                return Flash(f"好的，{day_label(when.date())}{clock_label(when)} 再提醒你：{item.title}。",
                             undo=f"undo-snooze:{rem.id}")
            item = await self._service.get_item(user_id, tap.target)
        except NotFound:
            return None
        name = f"{day_label(tap.on)}的“{item.title}”" if tap.on else f"“{item.title}”"
        if tap.verb == "gone":
            return Flash(f"{day_label(tap.on) if tap.on else '那天'}没有“{item.title}”（这个系列可能已经改过），"
                         "没有做任何改动；下面是最新的安排。")
        if tap.verb == "full":
            return Flash(f"没能撤销：进行中的事项已达上限 {self._service.max_active_items} 条，"
                         f"先完成或取消一些，再恢复{name}。")
        words = {"complete": f"已完成{name}" + ("，以后的照常。" if tap.on else "。"),
                 "cancel": f"已取消{name}" + ("这一次，以后的照常。" if tap.on else "。"),
                 "end": f"已结束整个系列“{item.title}”，以后不再提醒。",
                 "undo-complete": f"已撤销：{name}又回到待办。", "undo-cancel": f"已撤销：{name}恢复了。",
                 "undo-end": f"已撤销：系列“{item.title}”恢复了。"}
        undoable = tap.verb in ("complete", "cancel", "end")
        undo = str(Tap(f"undo-{tap.verb}", tap.target, None, tap.on)) if undoable else ""
        return Flash(words[tap.verb], undo=undo) if tap.verb in words else None

    async def _reminder(self, user_id: int, reminder_id: int) -> tuple[Reminder, Item]:
        rem = await self._service.get_reminder(user_id, reminder_id)
        return rem, await self._service.get_item(user_id, rem.item_id)
