"""Which items fall in a time range, and where a recurring item sits in it (pure, over rows)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from itertools import chain, islice
from zoneinfo import ZoneInfo

from schedule.clock import from_ms, to_ms
from schedule.convert import recurrence_of
from schedule.domain import Item, Reminder, key_closes
from schedule.model import ScheduleItemRow
from schedule.recurrence import occurrences as occurrences_of
from schedule.recurrence import occurs_on as series_occurs_on

MAX_EXPANDED = 400  # occurrences of one series in one listing (a daily series over the page's longest range: 92)
MAX_PER_REQUEST = 6000  # occurrences one request may expand over all its series (the item quota and then some)
_OPEN = 1 << 62  # an open end of a range, in ms


@dataclass
class Budget:
    """Occurrences one request may still expand: spent by every occurrence a series yields, so a request's
    cost is bounded whatever its range and however many series the user holds."""

    left: int = MAX_PER_REQUEST
    exhausted: bool = False

    def spend(self) -> bool:
        """Take one occurrence; False (and exhausted from then on) when none is left."""
        if self.left <= 0:
            self.exhausted = True
            return False
        self.left -= 1
        return True


def at_occurrence(item: Item, occurrence_ms: int | None) -> Item:
    """A recurring item as seen at one occurrence (None: the item as stored)."""
    if occurrence_ms is None or item.anchor_at is None:
        return item
    if item.kind == "task":
        return replace(item, due_at=occurrence_ms)
    shift = occurrence_ms - item.anchor_at
    return replace(item, start_at=occurrence_ms, end_at=item.end_at + shift if item.end_at is not None else None)


def in_range(row: ScheduleItemRow, start_ms: int | None, end_ms: int | None,
             include_undated: bool, budget: Budget | None = None) -> tuple[ScheduleItemRow, int | None] | None:
    """Whether the item belongs to [start, end) and, for a recurring item, the occurrence shown."""
    lo = start_ms if start_ms is not None else -(1 << 62)
    hi = end_ms if end_ms is not None else 1 << 62
    anchor = row.start_at if row.kind == "event" else row.due_at
    if anchor is None:
        return (row, None) if include_undated else None
    if row.rrule or row.workdays or row.lunar:
        return occurrence_in_range(row, anchor, lo, hi, budget or Budget())
    if row.kind == "event":
        end = row.end_at if row.end_at is not None and row.end_at > anchor else None
        hit = (anchor < hi and end > lo) if end is not None else lo <= anchor < hi
        return (row, None) if hit else None
    return (row, None) if lo <= anchor < hi else None


def occurrence_in_range(row: ScheduleItemRow, anchor: int, lo: int, hi: int, budget: Budget
                        ) -> tuple[ScheduleItemRow, int | None] | None:
    tz = ZoneInfo(row.timezone)
    dtstart = from_ms(anchor)
    recurrence = recurrence_of(row)
    if lo <= anchor < hi and (recurrence is None or not key_closes(recurrence.skipped,
                                                                   dtstart.astimezone(tz).replace(tzinfo=None))):
        return row, None
    if recurrence is None or anchor >= hi or not budget.spend():
        return None  # (a series never occurs before its first day)
    occurrence = next(occurrences_of(recurrence, dtstart=dtstart, after=from_ms(max(lo, anchor) - 1),
                                     before=_moment(hi), tz=tz), None)
    return None if occurrence is None else (row, to_ms(occurrence))


def occurrences(item: Item, end_ms: int, *, limit: int = 62) -> list[Item]:
    """A recurring item listed at every occurrence from the one it is shown at up to `end_ms` (exclusive);
    a plain item is itself. Pure: expansion in the item's timezone, at most `limit` entries."""
    anchor = item.anchor_at
    if item.recurrence is None or anchor is None:
        return [item]
    later = occurrences_of(item.recurrence, dtstart=from_ms(anchor), after=from_ms(anchor), before=_moment(end_ms),
                           tz=ZoneInfo(item.timezone))
    return [item, *(at_occurrence(item, to_ms(found)) for found in islice(later, limit - 1))]


def occurs_on(item: Item, day: date) -> bool:
    """Whether a series has an occurrence on that local day, closed (skipped or done) or not (`recurrence.occurs_on`);
    False for an item that does not repeat."""
    if item.recurrence is None or item.anchor_at is None:
        return False
    return series_occurs_on(item.recurrence, anchor_ms=item.anchor_at, tz=ZoneInfo(item.timezone), day=day)


def reminder_occurrence(reminder: Reminder, series_anchor: int) -> int:
    """The occurrence a series' reminder belongs to: its time plus its lead (as firing counts it; a row with no
    lead belongs to the series' first occurrence)."""
    if reminder.offset_minutes is None:
        return series_anchor
    return reminder.remind_at + reminder.offset_minutes * 60_000


def expand(item: Item, start_ms: int | None, end_ms: int | None, *, limit: int = MAX_EXPANDED,
           budget: Budget | None = None) -> list[Item]:
    """`each_occurrence` as a list of at most `limit` occurrences."""
    found = []
    for occurrence in each_occurrence(item, start_ms, end_ms, budget or Budget()):
        found.append(occurrence)
        if len(found) >= limit:
            break
    return found


def each_occurrence(item: Item, start_ms: int | None, end_ms: int | None, budget: Budget) -> Iterator[Item]:
    """Every occurrence of a stored series that overlaps [start, end), each an Item of its own: its own time,
    its own reminders only, and status "completed" on a day done. Cancelled days are left out. A closed series
    lists only what it had before it was closed. Pure and lazy, in time order; each occurrence spends one of
    the request's `budget`, and the series ends early when it runs out."""
    if item.recurrence is None or item.anchor_at is None:
        yield item
        return
    times, build = occurrence_plan(item, start_ms, end_ms, budget)
    for occ in times:
        yield build(occ)


def occurrence_plan(item: Item, start_ms: int | None, end_ms: int | None, budget: Budget
                    ) -> tuple[Iterator[int], Callable[[int], Item]]:
    """`each_occurrence` in two parts: the occurrences' instants (lazy, each spending the budget) and what
    builds the Item of one, so a merged listing builds only the entries it keeps."""
    anchor, recurrence = item.anchor_at, item.recurrence
    assert recurrence is not None
    assert anchor is not None
    lo = start_ms if start_ms is not None else anchor
    hi = end_ms if end_ms is not None else _OPEN
    if item.status != "active":
        hi = min(hi, item.updated_at)
    span = item.end_at - anchor if item.kind == "event" and item.end_at is not None and item.end_at > anchor else 0
    tz = ZoneInfo(item.timezone)
    kept = replace(recurrence, skipped=recurrence.cancelled)  # done days stay in the series' list
    done = set(recurrence.done)
    by_occurrence: dict[int, list[Reminder]] = {}
    plan: list[tuple[int, Reminder]] = []  # (from which occurrence on, the series' open reminder)
    for rem in item.reminders:
        occurs = reminder_occurrence(rem, anchor)
        by_occurrence.setdefault(occurs, []).append(rem)
        if rem.status in ("pending", "locked") and occurs >= rem.remind_at and not rem.once:
            plan.append((occurs, rem))  # a snooze (once) stays on its occurrence
    first: list[int] = []
    if anchor < hi and (anchor + span > lo if span else anchor >= lo) and \
            not key_closes(kept.skipped, from_ms(anchor).astimezone(tz).replace(tzinfo=None)):
        first.append(anchor)
    after = max(anchor, lo - span if span else lo - 1)
    later = (to_ms(found) for found in occurrences_of(kept, dtstart=from_ms(anchor), after=from_ms(after),
                                                      before=_moment(hi), tz=tz))
    # lazily: a page cut before expansion pulls only what it lists
    return (_spending(chain(first, later), budget),
            lambda occ: _at(item, occ, anchor, tz, done, by_occurrence.get(occ, []), plan))


def _spending(times: Iterator[int], budget: Budget) -> Iterator[int]:
    for occ in times:
        if not budget.spend():
            return
        yield occ


def _at(item: Item, occ: int, anchor: int, tz: ZoneInfo, done: set[str], own: list[Reminder],
        plan: list[tuple[int, Reminder]]) -> Item:
    is_done = key_closes(done, from_ms(occ).astimezone(tz).replace(tzinfo=None))
    if not is_done and item.status == "active":
        # A series holds a row for its next reminder only; a later occurrence is reminded the same way
        # when its turn comes (firing adds the row): shown as planned, with the id of the stored reminder
        # it will be made from.
        held = {(r.remind_at, r.channel) for r in own}
        own = own + [Reminder(id=rem.id, item_id=item.id, remind_at=occ - (first - rem.remind_at),
                              offset_minutes=(first - rem.remind_at) // 60_000, channel=rem.channel,
                              status="pending", planned=True) for first, rem in plan
                     if occ > first and (occ - (first - rem.remind_at), rem.channel) not in held]
    times = {"due_at": occ} if item.kind == "task" else \
        {"start_at": occ, "end_at": item.end_at + occ - anchor if item.end_at is not None else None}
    return replace(item, **times, reminders=tuple(sorted(own, key=lambda r: (r.remind_at, r.id))),
                   status="completed" if is_done else item.status)  # as at_occurrence, in one copy


def _moment(ms: int) -> datetime:
    """An instant in ms as an aware datetime; an end beyond what datetime holds is its last moment."""
    try:
        return from_ms(ms)
    except (OverflowError, ValueError, OSError):
        return datetime.max.replace(tzinfo=UTC) - timedelta(days=2)
