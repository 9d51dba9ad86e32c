"""The calendar feed (RFC 5545) with `icalendar`: what a subscribed phone calendar shows equals the page.

Every dated item is a VEVENT (Google, Apple and Outlook subscriptions ignore VTODO): a task at its deadline,
marked ☐/✓ in its title; only undated tasks stay VTODOs. A series is one VEVENT with its RRULE; 每个工作日
follows the official calendar (Mon–Fri, holidays as EXDATE, 调休 working days as RDATE, as `schedule.holidays`
knows them); a cancelled day is an EXDATE, a done day stays, overridden with ✓ (RECURRENCE-ID).
Alarms come only from pending reminders and never after the start. UIDs depend only on the item id and
the site; SEQUENCE and LAST-MODIFIED follow each edit, so a subscriber updates entries in place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr
from icalendar import Alarm, Calendar, Event, Timezone, Todo, vRecur

from render.timefmt import local
from schedule import holidays
from schedule.domain import Item, key_moment
from schedule.holidays import is_cn_workday
from schedule.recurrence import localize, next_occurrence, occurrences, occurs_on

LUNAR_YEARS = 10  # lunar dates have no RRULE: the next occurrences are listed as RDATEs
WEEKDAYS = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
CN_YEARS_AHEAD = 3  # 调休 data looked up this many years past the series' start at most (then Mon–Fri)


def calendar_feed(items: Sequence[Item], *, uid_domain: str, name: str = "我的行程",
                  tz: str = "Asia/Shanghai") -> bytes:
    """Serialise `items` as stored (a series once, from its first occurrence).

    Each item's components are serialised once per version (Item values are immutable and hashable,
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
    body = [_component_ical(item, uid_domain, holidays.version()) for item in shown]
    return b"".join([head, *timezones, *body, b"END:VCALENDAR\r\n"])


@lru_cache(maxsize=20_000)
def _component_ical(item: Item, uid_domain: str, _calendar: int) -> bytes:
    """`_calendar`: the holiday schedules' version (a newly loaded year changes a working-day series' days)."""
    return b"".join(c.to_ical() for c in _components(item, uid_domain))


@lru_cache(maxsize=256)
def _vtimezone(tzid: str, first_year: int, last_year: int) -> bytes:
    zone = Timezone.from_tzid(tzid, first_date=date(first_year, 1, 1), last_date=date(last_year, 1, 1))
    return zone.to_ical()  # type: ignore[no-any-return]


def uid_of(item: Item, uid_domain: str) -> str:
    return f"item-{item.id}@{uid_domain}"


def _components(item: Item, uid_domain: str) -> list[Event | Todo]:
    anchor = item.anchor_at
    if anchor is None:
        return [_undated_todo(item, uid_domain)]
    event = Event()
    _common(event, item, uid_domain, _title(item, done=item.status == "completed"))
    event.add("status", "CONFIRMED")
    event.add("transp", "OPAQUE" if item.kind == "event" else "TRANSPARENT")
    event.add("dtstart", _moment(item, anchor))
    end = _end(item, anchor)
    if end is not None:
        event.add("dtend", end)
    found: list[Event | Todo] = [event]
    leads = _alarm_leads(item, anchor) if item.status == "active" else []
    if item.recurrence is not None:
        _add_recurrence(event, item, anchor)
        # an override only ever names a day the series occurs on (a day done before the rule changed is not one)
        found += [_done_day(item, uid_domain, at, anchor) for key in item.recurrence.done
                  if _occurs(item, anchor, key_moment(key)[0].isoformat())
                  for at in _key_occurrences(item, key, anchor)]
        if item.status == "active":
            found += [_snoozed_day(item, uid_domain, day, anchor, sorted({*leads, *extra}))
                      for day, extra in _snoozes(item, anchor).items()]
    for lead in leads:
        event.add_component(_alarm(item, lead))
    return found


def _occurs(item: Item, anchor: int, day: str) -> bool:
    assert item.recurrence is not None
    return occurs_on(item.recurrence, anchor_ms=anchor, tz=ZoneInfo(item.timezone), day=date.fromisoformat(day))


def _snoozes(item: Item, anchor: int) -> dict[str, list[int]]:
    """The open occurrences that hold a pending snooze (a reminder of that occurrence only) still before their
    start: local day → the snoozes' leads."""
    assert item.recurrence is not None
    closed = set(item.recurrence.skipped)
    found: dict[str, list[int]] = {}
    for rem in item.reminders:
        if not rem.once or rem.status != "pending" or rem.offset_minutes is None or rem.offset_minutes < 0:
            continue
        day = local(rem.remind_at + rem.offset_minutes * 60_000, item.timezone).date().isoformat()
        if day not in closed and _occurs(item, anchor, day):
            found.setdefault(day, []).append(rem.offset_minutes * 60_000)
    return found


def _snoozed_day(item: Item, uid_domain: str, day: str, anchor: int, leads: list[int]) -> Event:
    """One occurrence with a snooze of its own: the same occurrence (RECURRENCE-ID override) with the series'
    alarms and the snooze's; the other occurrences keep the series' alarms only."""
    override = _override(item, uid_domain, _occurrence(item, date.fromisoformat(day), anchor), anchor, done=False)
    override.add("transp", "OPAQUE" if item.kind == "event" else "TRANSPARENT")
    for lead in leads:
        override.add_component(_alarm(item, lead))
    return override


def _common(component: Event | Todo, item: Item, uid_domain: str, summary: str) -> None:
    component.add("uid", uid_of(item, uid_domain))
    component.add("dtstamp", _utc(item.updated_at or item.created_at))
    if item.created_at:
        component.add("created", _utc(item.created_at))
    component.add("last-modified", _utc(item.updated_at or item.created_at))
    # One more with every change of the item; a done day's override carries its series' count, which moved on
    # when the day was marked, so no client keeps an older version of either.
    component.add("sequence", item.sequence)
    component.add("summary", summary)
    if item.description:
        component.add("description", item.description)
    if item.location:
        component.add("location", item.location)


def _title(item: Item, *, done: bool) -> str:
    if item.kind == "event":
        return f"✓ {item.title}" if done else item.title
    return f"{'✓' if done else '☐'} {item.title}"


def _undated_todo(item: Item, uid_domain: str) -> Todo:
    todo = Todo()
    _common(todo, item, uid_domain, item.title)
    done = item.status == "completed"
    todo.add("status", "COMPLETED" if done else "NEEDS-ACTION")
    if done:
        todo.add("completed", _utc(item.updated_at))
    return todo


def _done_day(item: Item, uid_domain: str, at: date | datetime, anchor: int) -> Event:
    """One done occurrence of a series: kept, its title marked ✓, no alarm (RECURRENCE-ID override)."""
    return _override(item, uid_domain, at, anchor, done=True)


def _override(item: Item, uid_domain: str, at: date | datetime, anchor: int, *, done: bool) -> Event:
    override = Event()
    _common(override, item, uid_domain, _title(item, done=done))
    override.add("recurrence-id", at)
    override.add("status", "CONFIRMED")
    override.add("dtstart", at)
    if isinstance(at, datetime):
        end = _end(item, anchor)
        if isinstance(end, datetime):
            override.add("dtend", at + (end - local(anchor, item.timezone)))
    else:
        override.add("dtend", at + timedelta(days=1))
    return override


def _alarm_leads(item: Item, anchor: int) -> list[int]:
    """Leads of the reminders still to come (pending), never after the start: a series' own plan (its
    next reminder's lead applies to every occurrence); a snooze (its occurrence's own) or a past reminder adds
    no alarm here."""
    leads: set[int] = set()
    for rem in item.reminders:
        if rem.status != "pending" or rem.once:
            continue
        if item.recurrence is not None:
            lead = rem.offset_minutes * 60_000 if rem.offset_minutes is not None else anchor - rem.remind_at
        else:
            lead = anchor - rem.remind_at
        if lead >= 0:
            leads.add(lead)
    return sorted(leads)


def _add_recurrence(event: Event, item: Item, anchor: int) -> None:
    recurrence = item.recurrence
    assert recurrence is not None
    closed = sorted({at for key in recurrence.cancelled for at in _key_occurrences(item, key, anchor)},
                    key=_sort_key)
    exdates: list[date] = []
    rdates: list[date] = []
    if recurrence.lunar is not None:
        zone = ZoneInfo(item.timezone)
        cursor = local(anchor, item.timezone)
        for _ in range(LUNAR_YEARS):
            found = next_occurrence(recurrence, dtstart=cursor, after=cursor, tz=zone)
            if found is None:
                break
            rdates.append(found.date())
            cursor = found
    else:
        body = recurrence.rrule or "FREQ=DAILY"
        if recurrence.workdays == "cn":
            body, extra, off = _workday_rule(body, local(anchor, item.timezone))
            rdates += extra
            exdates = sorted({*exdates, *off})
        event.add("rrule", vRecur.from_ical(_until_for_ics(body, item).removeprefix("RRULE:")))
    if rdates:
        event.add("rdate", [at for d in rdates if d.isoformat() not in recurrence.cancelled
                            for at in _at_times(item, d, anchor)])
    shown = sorted({*closed, *(at for d in exdates for at in _at_times(item, d, anchor))}, key=_sort_key)
    if shown:
        event.add("exdate", shown)


def _at_times(item: Item, day: date, anchor: int) -> list[date | datetime]:
    """Every time of day of a series several times a day on `day` (its BYHOUR × BYMINUTE, or its expansion
    there), else its one time: an added or removed working day adds or removes all of them."""
    parts = dict(p.split("=", 1) for p in (item.recurrence.rrule or "").upper().split(";") if "=" in p) \
        if item.recurrence is not None else {}
    if item.all_day or not ("," in parts.get("BYHOUR", "") or "," in parts.get("BYMINUTE", "")):
        return [_occurrence(item, day, anchor)]
    if "BYSETPOS" in parts:
        return _key_occurrences(item, day.isoformat(), anchor)
    zone = ZoneInfo(item.timezone)
    clock = local(anchor, item.timezone)
    hours = [int(h) for h in parts.get("BYHOUR", str(clock.hour)).split(",")]
    minutes = [int(m) for m in parts.get("BYMINUTE", str(clock.minute)).split(",")]
    return [localize(datetime.combine(day, time(h, m)), zone) for h in sorted(hours) for m in sorted(minutes)]


def _sort_key(at: date | datetime) -> tuple[date, str]:
    return (at.date() if isinstance(at, datetime) else at), at.isoformat()


def _key_occurrences(item: Item, key: str, anchor: int) -> list[date | datetime]:
    """The occurrences a closed key stands for: one start, or every occurrence of its day (a series several
    times a day has more than one; a day the rule does not fall on keeps the series' own time of day)."""
    day, clock = key_moment(key)
    if item.all_day:
        return [day]
    zone = ZoneInfo(item.timezone)
    if clock is not None:
        return [localize(datetime.combine(day, time(*clock)), zone)]
    recurrence = item.recurrence
    if recurrence is not None and recurrence.lunar is None:
        begin = localize(datetime.combine(day, time()), zone)
        end = localize(datetime.combine(day + timedelta(days=1), time()), zone)
        free = replace(recurrence, skipped=(), workdays=None)  # a day off still names the rule's times
        found: list[date | datetime] = [at.astimezone(zone) for at in occurrences(
            free, dtstart=local(anchor, item.timezone), after=begin - timedelta(seconds=1), before=end, tz=zone)]
        if found:
            return found
    return [_occurrence(item, day, anchor)]


def _workday_rule(body: str, start: datetime) -> tuple[str, list[date], list[date]]:
    """每个工作日 in RFC 5545: the rule's days restricted to working days. A daily rule becomes Mon–Fri with the
    weekday holidays as EXDATEs and the 调休 weekend days as RDATEs; any other rule keeps its days and loses
    the non-working ones (EXDATEs). Over CN_YEARS_AHEAD years, as the bot counts them (a year whose 调休 is
    not published yet loses its statutory holidays only). `body` keeps its UNTIL in local wall time (as stored)."""
    parts = dict(p.split("=", 1) for p in body.upper().split(";") if "=" in p)
    clock_parts = ("BYHOUR", "BYMINUTE")  # several times a day on working days: each day's times, the same way
    daily = parts.get("FREQ") == "DAILY" and parts.get("INTERVAL", "1") == "1" and "COUNT" not in parts \
        and not any(k.startswith("BY") and k not in clock_parts for k in parts)
    first = start.date()
    last = date(min(first.year + CN_YEARS_AHEAD, holidays.LAST_YEAR), 12, 31)
    if daily:
        days = (first + timedelta(days=n) for n in range((last - first).days + 1))
    else:
        rule = rrulestr(body, dtstart=start.replace(tzinfo=None))
        days = (d.date() for d in rule.between(start.replace(tzinfo=None), datetime.combine(last, time.max),
                                                inc=True))
    extra: list[date] = []
    off: list[date] = []
    for day in days:
        working = is_cn_workday(day)
        if daily and day.weekday() >= 5:
            if working:
                extra.append(day)
        elif not working:
            off.append(day)
    if daily:
        until = parts.get("UNTIL")
        times = "".join(f";{k}={parts[k]}" for k in clock_parts if k in parts)
        body = WEEKDAYS + times + (f";UNTIL={until}" if until else "")
        if until:
            stop = _until_date(until)
            extra = [d for d in extra if stop is None or d <= stop]
    return body, extra, off


def _until_date(raw: str | None) -> date | None:
    if not raw:
        return None
    return date(int(raw[:4]), int(raw[4:6]), int(raw[6:8]))


def _occurrence(item: Item, day: date, anchor: int) -> date | datetime:
    if item.all_day:
        return day
    clock = local(anchor, item.timezone).time().replace(tzinfo=None)
    return localize(datetime.combine(day, clock), ZoneInfo(item.timezone))


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
    alarm.add("trigger", -timedelta(milliseconds=lead_ms))  # before the start (a task's start is its deadline)
    return alarm


def _moment(item: Item, ms: int) -> date | datetime:
    moment = local(ms, item.timezone)
    return moment.date() if item.all_day else moment


def _end(item: Item, anchor: int) -> date | datetime | None:
    if item.all_day:
        start = local(anchor, item.timezone).date()
        end = local(item.end_at, item.timezone).date() if item.end_at is not None else start
        return max(end, start + timedelta(days=1))
    if item.kind != "event" or item.end_at is None or item.end_at <= anchor:
        return None
    return local(item.end_at, item.timezone)


def _utc(ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)


