"""Which items fall in a time range, and where a recurring item sits in it (pure, over rows)."""

from __future__ import annotations

from dataclasses import replace
from zoneinfo import ZoneInfo

from schedule.clock import from_ms, to_ms
from schedule.convert import recurrence_of
from schedule.domain import Item
from schedule.model import ScheduleItemRow
from schedule.recurrence import next_occurrence


def at_occurrence(item: Item, occurrence_ms: int | None) -> Item:
    """A recurring item as seen at one occurrence (None: the item as stored)."""
    if occurrence_ms is None or item.anchor_at is None:
        return item
    if item.kind == "task":
        return replace(item, due_at=occurrence_ms)
    shift = occurrence_ms - item.anchor_at
    return replace(item, start_at=occurrence_ms, end_at=item.end_at + shift if item.end_at is not None else None)


def in_range(row: ScheduleItemRow, start_ms: int | None, end_ms: int | None,
              include_undated: bool) -> tuple[ScheduleItemRow, int | None] | None:
    """Whether the item belongs to [start, end) and, for a recurring item, the occurrence shown."""
    lo = start_ms if start_ms is not None else -(1 << 62)
    hi = end_ms if end_ms is not None else 1 << 62
    anchor = row.start_at if row.kind == "event" else row.due_at
    if anchor is None:
        return (row, None) if include_undated else None
    if row.rrule or row.workdays or row.lunar:
        return occurrence_in_range(row, anchor, lo, hi)
    if row.kind == "event":
        end = row.end_at if row.end_at is not None and row.end_at > anchor else None
        hit = (anchor < hi and end > lo) if end is not None else lo <= anchor < hi
        return (row, None) if hit else None
    return (row, None) if lo <= anchor < hi else None


def occurrence_in_range(row: ScheduleItemRow, anchor: int, lo: int, hi: int
                         ) -> tuple[ScheduleItemRow, int | None] | None:
    tz = ZoneInfo(row.timezone)
    dtstart = from_ms(anchor)
    recurrence = recurrence_of(row)
    if lo <= anchor < hi and (recurrence is None or dtstart.astimezone(tz).date().isoformat()
                              not in recurrence.skipped):
        return row, None
    after = from_ms(max(lo, anchor) - 1)
    occurrence = next_occurrence(recurrence, dtstart=dtstart, after=after, tz=tz) if recurrence else None
    if occurrence is None or to_ms(occurrence) >= hi:
        return None
    return row, to_ms(occurrence)


def occurrences(item: Item, end_ms: int, *, limit: int = 62) -> list[Item]:
    """A recurring item listed at every occurrence from the one it is shown at up to `end_ms` (exclusive);
    a plain item is itself. Pure: expansion in the item's timezone, at most `limit` entries."""
    anchor = item.anchor_at
    if item.recurrence is None or anchor is None:
        return [item]
    tz = ZoneInfo(item.timezone)
    found, at = [item], anchor
    while len(found) < limit:
        nxt = next_occurrence(item.recurrence, dtstart=from_ms(anchor), after=from_ms(at), tz=tz)
        if nxt is None or to_ms(nxt) >= end_ms:
            break
        at = to_ms(nxt)
        found.append(at_occurrence(item, at))
    return found
