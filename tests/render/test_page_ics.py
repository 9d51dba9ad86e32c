"""The calendar feed parsed back with icalendar and checked field by field."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from icalendar import Calendar
from page_samples import SH, at, event, reminder, task

from render.ics import calendar_feed
from schedule.domain import Lunar, Recurrence


def parse(data: bytes) -> Calendar:
    return Calendar.from_ical(data)


def by_uid(cal: Calendar) -> dict[str, object]:
    return {str(c["UID"]): c for c in cal.walk() if c.name in ("VEVENT", "VTODO")}


def test_weekly_series_with_one_cancelled_occurrence() -> None:
    series = event(7, "周会", at(2026, 6, 22, 9, 30), at(2026, 6, 22, 10, 30),
                   recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO", skipped=("2026-06-29",)),
                   reminders=(reminder(1, 7, at(2026, 6, 22, 9, 15), offset=15),))
    cal = parse(calendar_feed([series], uid_domain="pages.example"))
    vevent = by_uid(cal)["item-7@pages.example"]
    assert vevent["SUMMARY"] == "周会"
    start = vevent.decoded("DTSTART")
    assert start == datetime(2026, 6, 22, 9, 30, tzinfo=ZoneInfo(SH)) and vevent["DTSTART"].params["TZID"] == SH
    assert vevent.decoded("DTEND") == datetime(2026, 6, 22, 10, 30, tzinfo=ZoneInfo(SH))
    rule = vevent["RRULE"]
    assert rule["FREQ"] == ["WEEKLY"] and rule["BYDAY"] == ["MO"]
    exdates = [d.dt for d in vevent["EXDATE"].dts]
    assert exdates == [datetime(2026, 6, 29, 9, 30, tzinfo=ZoneInfo(SH))]
    assert vevent["EXDATE"].params["TZID"] == SH
    alarms = [c for c in vevent.subcomponents if c.name == "VALARM"]
    assert len(alarms) == 1 and alarms[0].decoded("TRIGGER") == -timedelta(minutes=15)
    assert alarms[0]["ACTION"] == "DISPLAY"
    zones = list(cal.walk("VTIMEZONE"))
    assert [str(z["TZID"]) for z in zones] == [SH]


def test_all_day_event_and_tasks() -> None:
    holiday = event(1, "端午假期", at(2026, 6, 19), at(2026, 6, 20), all_day=True, local_date="2026-06-19")
    papers = task(2, "带材料", at(2026, 6, 19, 9, 0), reminders=(reminder(3, 2, at(2026, 6, 19, 8, 0)),))
    done = task(4, "买票", at(2026, 6, 17, 18, 0), status="completed")
    loose = task(5, "看书", None)
    due_day = task(6, "交材料", at(2026, 6, 26), all_day=True, local_date="2026-06-26")
    items = by_uid(parse(calendar_feed([holiday, papers, done, loose, due_day], uid_domain="x")))
    assert items["item-1@x"].decoded("DTSTART") == date(2026, 6, 19)
    assert items["item-1@x"].decoded("DTEND") == date(2026, 6, 20)
    assert items["item-1@x"]["DTSTART"].params["VALUE"] == "DATE"
    # a dated task is an event at its deadline (subscribed calendars ignore VTODO), marked ☐ / ✓
    dated = items["item-2@x"]
    assert dated.name == "VEVENT" and dated["SUMMARY"] == "☐ 带材料" and "DTEND" not in dated
    assert dated.decoded("DTSTART") == datetime(2026, 6, 19, 9, 0, tzinfo=ZoneInfo(SH))
    alarm = dated.subcomponents[0]
    assert alarm.decoded("TRIGGER") == -timedelta(hours=1) and "RELATED" not in alarm["TRIGGER"].params
    assert items["item-4@x"].name == "VEVENT" and items["item-4@x"]["SUMMARY"] == "✓ 买票"
    assert items["item-4@x"].subcomponents == []  # done: no alarm
    assert items["item-5@x"].name == "VTODO" and items["item-5@x"]["SUMMARY"] == "看书"  # undated: a to-do
    assert items["item-6@x"].decoded("DTSTART") == date(2026, 6, 26) and items["item-6@x"].decoded("DTEND") == \
        date(2026, 6, 27)
    for component in items.values():
        assert component["SEQUENCE"] >= 0 and "LAST-MODIFIED" in component


def test_uids_and_bytes_are_stable_and_cancelled_items_are_left_out() -> None:
    items = [event(1, "会议, 讨论; 预算\n第二行", at(2026, 6, 18, 15, 0)), task(2, "已取消", at(2026, 6, 18, 9, 0),
                                                                              status="cancelled")]
    first, second = calendar_feed(items, uid_domain="x"), calendar_feed(list(items), uid_domain="x")
    assert first == second
    parsed = by_uid(parse(first))
    assert list(parsed) == ["item-1@x"]
    assert parsed["item-1@x"]["SUMMARY"] == "会议, 讨论; 预算\n第二行"
    assert parsed["item-1@x"].decoded("DTSTAMP") == datetime(2026, 6, 2, tzinfo=ZoneInfo(SH))
    assert all(len(line) <= 75 for line in first.split(b"\r\n"))  # RFC 5545 folding (octets)


def test_lunar_series_lists_its_next_occurrences_and_dst_zones_get_both_rules() -> None:
    birthday = event(1, "妈妈生日", at(2026, 9, 25, 9, 0), recurrence=Recurrence(lunar=Lunar(8, 15)))
    standup = event(2, "standup", at(2026, 3, 2, 9, 0, tz="America/New_York"), tz="America/New_York",
                    recurrence=Recurrence(rrule="FREQ=DAILY;COUNT=30"))
    cal = parse(calendar_feed([birthday, standup], uid_domain="x"))
    rdates = [d.dt for prop in [by_uid(cal)["item-1@x"]["RDATE"]] for d in prop.dts]
    assert rdates[0] == datetime(2027, 9, 15, 9, 0, tzinfo=ZoneInfo(SH))  # 八月十五 2027
    assert len(rdates) >= 5
    ny = next(z for z in cal.walk("VTIMEZONE") if str(z["TZID"]) == "America/New_York")
    assert {c.name for c in ny.subcomponents} == {"STANDARD", "DAYLIGHT"}
    assert by_uid(cal)["item-2@x"]["RRULE"]["COUNT"] == [30]


def test_a_bounded_series_ends_in_utc_beside_its_local_start() -> None:
    """UNTIL is stored as local wall time (下周一到周五 → …T235959); the feed gives it in UTC as RFC 5545 asks."""
    series = task(8, "打卡", at(2026, 12, 7, 8, 0),
                  recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20261211T235959"))
    holiday = task(9, "值班", at(2026, 12, 7), all_day=True, local_date="2026-12-07",
                   recurrence=Recurrence(rrule="FREQ=DAILY;UNTIL=20261209T235959"))
    found = by_uid(parse(calendar_feed([series, holiday], uid_domain="pages.example")))
    assert found["item-8@pages.example"]["RRULE"]["UNTIL"] == [datetime(2026, 12, 11, 15, 59, 59, tzinfo=ZoneInfo("UTC"))]
    assert found["item-9@pages.example"]["RRULE"]["UNTIL"] == [date(2026, 12, 9)]
