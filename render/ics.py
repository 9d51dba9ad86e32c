"""The calendar feed (RFC 5545) with `icalendar`: VEVENT/VTODO, VALARM, RRULE + EXDATE, VTIMEZONE.

UIDs depend only on the item id and the site, so a subscribed calendar updates entries in place.
DTSTAMP is the item's last change, so an unchanged item serialises identically on every poll.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from icalendar import Alarm, Calendar, Event, Timezone, Todo, vRecur

from render.timefmt import local
from schedule.domain import Item
from schedule.recurrence import localize, next_occurrence

LUNAR_YEARS = 10  # lunar dates have no RRULE: the next occurrences are listed as RDATEs
WEEKDAYS_CN = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"  # 调休 cannot be said in RRULE; Mon–Fri is the closest rule


def calendar_feed(items: Sequence[Item], *, uid_domain: str, name: str = "我的行程",
                  tz: str = "Asia/Shanghai") -> bytes:
    """Serialise `items` as stored (a series once, from its first occurrence; its skipped
    occurrences become EXDATEs at the series' local time of day).

    Each item's component is serialised once per version (Item values are immutable and hashable,
    and `updated_at` changes with every edit), so a calendar polling the feed costs little.
    """
    cal = Calendar()
    cal.add("prodid", "-//schedbot//itinerary//ZH")
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", "PUBLISH")
    cal.add("x-wr-calname", name)
    cal.add("x-wr-timezone", tz)
    cal.add("refresh-interval", timedelta(hours=1), parameters={"VALUE": "DURATION"})
    cal.add("x-published-ttl", "PT1H")
    shown = [item for item in items if item.status not in ("cancelled", "deleted")]
    zones: dict[str, list[int]] = {}
    for item in shown:
        if item.anchor_at is not None and not item.all_day:
            zones.setdefault(item.timezone, []).append(local(item.anchor_at, item.timezone).year)
    head = cal.to_ical().removesuffix(b"END:VCALENDAR\r\n")
    timezones = [_vtimezone(zone, min(years) - 1, max(years) + LUNAR_YEARS + 1)
                 for zone, years in sorted(zones.items())]
    body = [_component_ical(item, uid_domain) for item in shown]
    return b"".join([head, *timezones, *body, b"END:VCALENDAR\r\n"])


@lru_cache(maxsize=20_000)
def _component_ical(item: Item, uid_domain: str) -> bytes:
    return _component(item, uid_domain).to_ical()  # type: ignore[no-any-return]


@lru_cache(maxsize=256)
def _vtimezone(tzid: str, first_year: int, last_year: int) -> bytes:
    zone = Timezone.from_tzid(tzid, first_date=date(first_year, 1, 1), last_date=date(last_year, 1, 1))
    return zone.to_ical()  # type: ignore[no-any-return]


def uid_of(item: Item, uid_domain: str) -> str:
    return f"item-{item.id}@{uid_domain}"


def _component(item: Item, uid_domain: str) -> Event | Todo:
    component: Event | Todo = Event() if item.kind == "event" else Todo()
    component.add("uid", uid_of(item, uid_domain))
    component.add("dtstamp", _utc(item.updated_at or item.created_at))
    if item.created_at:
        component.add("created", _utc(item.created_at))
    component.add("summary", item.title)
    if item.description:
        component.add("description", item.description)
    if item.location:
        component.add("location", item.location)
    anchor = item.anchor_at
    if isinstance(component, Event):
        component.add("status", "CONFIRMED")
        if anchor is not None:
            component.add("dtstart", _moment(item, anchor))
            end = _end(item, anchor)
            if end is not None:
                component.add("dtend", end)
    else:
        done = item.status == "completed"
        component.add("status", "COMPLETED" if done else "NEEDS-ACTION")
        if done:
            component.add("completed", _utc(item.updated_at))
        if anchor is not None:
            if item.recurrence is not None:
                component.add("dtstart", _moment(item, anchor))  # a recurring VTODO counts from DTSTART
            component.add("due", _moment(item, anchor))
    if anchor is not None and item.recurrence is not None:
        _add_recurrence(component, item, anchor)
    if anchor is not None and item.status == "active":
        for lead in sorted({anchor - r.remind_at for r in item.reminders if r.status != "cancelled"}):
            component.add_component(_alarm(item, lead))
    return component


def _add_recurrence(component: Event | Todo, item: Item, anchor: int) -> None:
    recurrence = item.recurrence
    assert recurrence is not None
    if recurrence.lunar is not None:
        zone = ZoneInfo(item.timezone)
        cursor = local(anchor, item.timezone)
        dates = []
        for _ in range(LUNAR_YEARS):
            found = next_occurrence(recurrence, dtstart=cursor, after=cursor, tz=zone)
            if found is None:
                break
            dates.append(found.date() if item.all_day else found)
            cursor = found
        if dates:
            component.add("rdate", dates)
    else:
        body = _until_for_ics(recurrence.rrule or WEEKDAYS_CN, item)
        component.add("rrule", vRecur.from_ical(body.removeprefix("RRULE:")))
    if recurrence.skipped:
        start = local(anchor, item.timezone)
        zone = ZoneInfo(item.timezone)
        days = sorted(date.fromisoformat(day) for day in recurrence.skipped)
        component.add("exdate", days if item.all_day else [localize(datetime.combine(d, start.time()), zone)
                                                            for d in days])


def _until_for_ics(body: str, item: Item) -> str:
    """UNTIL is stored as local wall time; RFC 5545 wants UTC beside a DTSTART with TZID, a DATE beside a DATE."""
    found = re.search(r"(?<![A-Z])UNTIL=(\d{8}T\d{6})(?!Z)", body)
    if found is None:
        return body
    wall = datetime.strptime(found.group(1), "%Y%m%dT%H%M%S")  # noqa: DTZ007 - local wall time, localized below
    until = wall.strftime("%Y%m%d") if item.all_day else \
        localize(wall, ZoneInfo(item.timezone)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return body[:found.start(1)] + until + body[found.end(1):]


def _alarm(item: Item, lead_ms: int) -> Alarm:
    alarm = Alarm()
    alarm.add("action", "DISPLAY")
    alarm.add("description", item.title)
    params = {"RELATED": "END"} if item.kind == "task" else {}  # a task's reminder is relative to its DUE
    alarm.add("trigger", -timedelta(milliseconds=lead_ms), parameters=params)
    return alarm


def _moment(item: Item, ms: int) -> date | datetime:
    moment = local(ms, item.timezone)
    return moment.date() if item.all_day else moment


def _end(item: Item, anchor: int) -> date | datetime | None:
    if item.all_day:
        start = local(anchor, item.timezone).date()
        end = local(item.end_at, item.timezone).date() if item.end_at is not None else start
        return max(end, start + timedelta(days=1))
    if item.end_at is None or item.end_at <= anchor:
        return None
    return local(item.end_at, item.timezone)


def _utc(ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
