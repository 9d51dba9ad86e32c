"""The calendar feed as a subscriber sees it: expanded with `recurring-ical-events` (a consumer library), it
gives exactly the API's occurrences over 60 days, 调休 working days included; no alarm after an occurrence
starts; every dated task is a VEVENT; HEAD is answered; 关闭日历订阅 revokes it. Both backends."""

from __future__ import annotations

from datetime import date, datetime, time
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import recurring_ical_events
from icalendar import Calendar
from page_world import World, app_fixture, ms, world_fixture  # noqa: F401 (pytest fixtures `app`, `world`)

from bot.pages.links import webcal
from schedule.clock import to_ms
from schedule.domain import NewItem, NewReminder, Recurrence

SH = ZoneInfo("Asia/Shanghai")
TZ = "Asia/Shanghai"
DAY = 86_400_000


async def series(world: World) -> dict[str, int]:
    """A daily pill, a weekly meeting (one day skipped, one done), 每个工作日 打卡 across 国庆, a snoozed and a
    sent reminder, a dated and an undated task."""
    service, uid = world.service, world.user.id
    pills = await service.create_item(uid, NewItem(
        kind="task", title="吃药", timezone=TZ, due_at=ms(2026, 6, 18, 22), recurrence=Recurrence(rrule="FREQ=DAILY"),
        reminders=(NewReminder(remind_at=ms(2026, 6, 18, 22)),)))
    weekly = await service.create_item(uid, NewItem(
        kind="event", title="周会", timezone=TZ, start_at=ms(2026, 6, 22, 9, 30), end_at=ms(2026, 6, 22, 10, 30),
        recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"),
        reminders=(NewReminder(remind_at=ms(2026, 6, 22, 9, 15), offset_minutes=15),)))
    await service.skip_occurrence(uid, weekly.id, date(2026, 6, 29))
    await service.complete_occurrence(uid, weekly.id, date(2026, 7, 6))
    punch = await service.create_item(uid, NewItem(
        kind="task", title="打卡", timezone=TZ, due_at=ms(2026, 6, 22, 9),
        recurrence=Recurrence(rrule="FREQ=DAILY", workdays="cn"), reminders=(NewReminder(remind_at=ms(2026, 6, 22, 9)),)))
    await service.create_reminder(uid, pills.id, NewReminder(remind_at=ms(2026, 6, 18, 22, 10), offset_minutes=-10))
    return {"pills": pills.id, "weekly": weekly.id, "punch": punch.id}


def occurrences(cal: Calendar, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
    found = []
    start, end = datetime.fromtimestamp(start_ms / 1000, SH), datetime.fromtimestamp(end_ms / 1000, SH)
    for component in recurring_ical_events.of(cal).between(start, end):
        at = component.decoded("DTSTART")
        at_ms = to_ms(at) if isinstance(at, datetime) else to_ms(datetime.combine(at, time(), SH))
        found.append((int(str(component["UID"]).split("-")[1].split("@")[0]), at_ms))
    return sorted(found)


async def test_the_feed_expands_to_the_apis_occurrences(world: World) -> None:
    await series(world)
    _, token, _ = await world.service.issue_api_token("alice")
    feed = await world.client.get(urlsplit(await world.links.feed_url(world.user.id)).path)
    cal = Calendar.from_ical(feed.content)
    for start in (ms(2026, 6, 18), ms(2026, 9, 20)):  # this summer; 国庆 with its 调休 Saturday 10/10
        end = start + 60 * DAY
        listed = await world.client.get("/api/schedule/items", headers={"Authorization": f"Bearer {token}"},
                                        params={"from": start, "to": end, "include_undated": "false"})
        api = sorted((i["id"], i["start_at"] if i["kind"] == "event" else i["due_at"]) for i in listed.json()["items"])
        assert occurrences(cal, start, end) == api
        assert len(api) > 60
    autumn = {at for _, at in occurrences(cal, ms(2026, 9, 20), ms(2026, 11, 19))}
    assert ms(2026, 10, 10, 9) in autumn and ms(2026, 10, 1, 9) not in autumn  # 调休 Saturday on, 国庆 off
    assert ms(2026, 6, 29, 9, 30) not in {at for _, at in occurrences(cal, ms(2026, 6, 18), ms(2026, 8, 17))}


async def test_alarms_only_ahead_tasks_as_events_done_days_kept(world: World) -> None:
    ids = await series(world)
    feed = await world.client.get(urlsplit(await world.links.feed_url(world.user.id)).path)
    cal = Calendar.from_ical(feed.content)
    events = {str(c["UID"]): c for c in cal.walk("VEVENT") if "RECURRENCE-ID" not in c}
    todos = [str(c["SUMMARY"]) for c in cal.walk("VTODO")]
    assert todos == []  # the world's tasks all have a deadline: every one is an event
    for component in events.values():
        for alarm in component.walk("VALARM"):
            assert alarm.decoded("TRIGGER").total_seconds() <= 0  # never after the start
    pills = events[f"item-{ids['pills']}@pages.example"]
    assert [a.decoded("TRIGGER").total_seconds() for a in pills.walk("VALARM")] == [0]  # the snooze adds none
    meeting = events[f"item-{world.items['meeting'].id}@pages.example"]
    assert [a.decoded("TRIGGER").total_seconds() for a in meeting.walk("VALARM")] == [-3600]
    standup_done = [c for c in cal.walk("VEVENT") if "RECURRENCE-ID" in c]
    assert [(str(c["SUMMARY"]), c.decoded("DTSTART")) for c in standup_done] == [
        ("✓ 周会", datetime(2026, 7, 6, 9, 30, tzinfo=SH))]  # done is kept, marked; the skipped day is gone
    weekly = events[f"item-{ids['weekly']}@pages.example"]
    assert [d.dt for d in weekly["EXDATE"].dts] == [datetime(2026, 6, 29, 9, 30, tzinfo=SH)]
    assert str(events[f"item-{world.items['report'].id}@pages.example"]["SUMMARY"]) == "☐ 交周报"
    assert all("SEQUENCE" in c and "LAST-MODIFIED" in c for c in events.values())


async def test_head_webcal_and_revocation(world: World) -> None:
    url = await world.links.feed_url(world.user.id)
    assert webcal(url).startswith("webcal://pages.example/ics/")
    head = await world.client.head(urlsplit(url).path)
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) > 100
    page_path = urlsplit(await world.links.itinerary_url(world.user.id)).path
    page = (await world.client.get(page_path)).text
    assert f'href="{page_path}/calendar"' in page and "/ics/" not in page  # a forwarded page carries no feed
    subscribe = await world.client.get(f"{page_path}/calendar", follow_redirects=False)
    assert subscribe.status_code == 303 and subscribe.headers["location"] == webcal(url)
    assert await world.links.revoke_feed(world.user.id)
    gone = await world.client.get(urlsplit(url).path)
    assert gone.status_code == 410 and "链接已失效" in gone.text
    fresh = await world.links.feed_url(world.user.id)
    assert fresh != url and (await world.client.get(urlsplit(fresh).path)).status_code == 200
