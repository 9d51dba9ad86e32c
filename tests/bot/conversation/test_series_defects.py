"""Series stay right everywhere: a snooze stays on its occurrence (worker, page, API, feed), lunar and
working-day series made in chat never make the API fail, a tap on a day that is not an occurrence is refused
(page, service) and the feed carries no override for it, and an expanded API listing says which series and
occurrence each entry is, every reminder with a stored id. Chat, page, API and worker of one app; the clock is
Thursday 2026-06-18 10:00 in Shanghai; both backends."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import recurring_ical_events
from conftest import SH, Bot, at
from icalendar import Calendar

from fakes.wechat import signed_in
from schedule.clock import now_ms
from schedule.errors import NotAnOccurrence
from schedule.model import ReminderRow, ScheduleItemRow

WEEK = {"from": at(6, 18), "to": at(6, 25)}


async def api(bot: Bot) -> dict[str, str]:
    _, token, _ = await bot.app.state.service.issue_api_token("o-alice")
    return {"Authorization": f"Bearer {token}"}


async def page(bot: Bot, days: int = 7) -> tuple[str, str]:
    user = await bot.app.state.service.get_or_create_user("o-alice")
    url = await bot.app.state.page_links.itinerary_url(user.id, start_ms=at(6, 18),
                                                       end_ms=at(6, 18) + days * 86_400_000)
    parts = urlsplit(url)
    path = parts.path + "?" + parts.query
    bot.client.headers.update(await signed_in(bot.app.state.page_links, "o-alice", now_ms=now_ms(bot.clock)))  # the owner
    return path, (await bot.client.get(path)).text


async def tap(bot: Bot, do: str) -> str:
    """Post one tap from a fresh page; the page it leads back to."""
    path, html = await page(bot)
    csrf = html.split('name="csrf" value="')[1].split('"')[0]
    answer = await bot.client.post(path.split("?")[0], data={"csrf": csrf, "do": do, "from": "2026-06-18",
                                                              "to": "2026-06-24"})
    assert answer.status_code == 303, answer.text
    return answer.headers["location"].split("#")[0]


async def feed(bot: Bot) -> Calendar:
    user = await bot.app.state.service.get_or_create_user("o-alice")
    answer = await bot.client.get(urlsplit(await bot.app.state.page_links.feed_url(user.id)).path)
    assert answer.status_code == 200
    return Calendar.from_ical(answer.content)


def alarms_by_day(cal: Calendar, start: date, end: date) -> dict[date, list[timedelta]]:
    """What a subscribed calendar shows: each occurrence's day and its alarms' triggers."""
    found: dict[date, list[timedelta]] = {}
    for event in recurring_ical_events.of(cal).between(start, end):
        moment = event["DTSTART"].dt
        day = moment.astimezone(SH).date() if isinstance(moment, datetime) else moment
        found[day] = sorted(alarm["TRIGGER"].dt for alarm in event.walk("VALARM"))
    return found


def master(cal: Calendar) -> Any:
    """The series' own VEVENT (not an override)."""
    return next(c for c in cal.walk("VEVENT") if "RRULE" in c)


async def listed(bot: Bot, **params: Any) -> list[dict[str, Any]]:
    answer = await bot.client.get("/api/schedule/items", headers=await api(bot), params=params)
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


async def test_a_page_snooze_stays_on_its_occurrence_in_the_worker_the_page_the_api_and_the_feed(bot: Bot) -> None:
    await bot.chat().say("每天下午3点提醒我吃药")  # today 15:00 is the first occurrence, still ahead
    [series] = await bot.rows(ScheduleItemRow)
    assert isinstance(series, ScheduleItemRow)
    cal = await feed(bot)
    plan = alarms_by_day(cal, date(2026, 6, 18), date(2026, 6, 25))
    assert len(plan) == 7 and len({tuple(a) for a in plan.values()}) == 1
    series_alarms = plan[date(2026, 6, 19)]
    version = master(cal)["SEQUENCE"]

    bot.clock.set(datetime(2026, 6, 18, 10, 1, tzinfo=SH))
    back = await tap(bot, f"snooze:{series.id}:10m:2026-06-18")  # 10 分钟后: 10:11 today
    assert parse_qs(urlsplit(back).query)["did"][0].startswith("snooze:")
    # the API: today's occurrence has the snooze, no later one has it
    entries = await listed(bot, include_reminders="true", **WEEK)
    times = {e["due_at"]: sorted(r["remind_at"] for r in e["reminders"]) for e in entries}
    assert at(6, 18, 10, 11) in times[at(6, 18, 15)]
    assert all(not any(t % 86_400_000 == at(6, 18, 10, 11) % 86_400_000 for t in rems)
               for occ, rems in times.items() if occ != at(6, 18, 15)), times
    # the page: the snooze's chip on today's card only
    _, html = await page(bot)
    cards = dict(re.findall(r'id="item-\d+-([0-9-]+)"(.*?)</li>', html, re.S))
    assert "10:11" in cards["2026-06-18"] and not any("10:11" in c for on, c in cards.items() if on != "2026-06-18")
    # the feed: today's occurrence alone gets the snooze's alarm (an override), the others keep the series' own
    after = await feed(bot)
    assert master(after)["SEQUENCE"] > version  # the feed changed: subscribers update the series
    snoozed = alarms_by_day(after, date(2026, 6, 18), date(2026, 6, 25))
    assert snoozed[date(2026, 6, 18)] == sorted([*series_alarms, -timedelta(hours=4, minutes=49)])
    assert all(snoozed[day] == series_alarms for day in snoozed if day != date(2026, 6, 18))
    # the worker: the snooze fires at 10:11 and is carried to no other day; 15:00 carries the series on
    bot.clock.set(datetime(2026, 6, 18, 10, 11, tzinfo=SH))
    await bot.deliver()
    bot.clock.set(datetime(2026, 6, 18, 15, 0, tzinfo=SH))
    await bot.deliver()
    pending = sorted(r.remind_at for r in await bot.rows(ReminderRow) if isinstance(r, ReminderRow)
                     and r.status == "pending")
    assert pending == [at(6, 19, 15)]


async def test_a_chat_snooze_of_a_series_reminder_stays_on_that_occurrence(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天中午12点开站会，提前1小时提醒我")  # today 12:00, reminded at 11:00
    bot.clock.set(datetime(2026, 6, 18, 11, 0, tzinfo=SH))
    await bot.deliver()
    await chat.say("10分钟后再提醒我")  # 11:10, still before the meeting
    bot.clock.set(datetime(2026, 6, 18, 11, 10, tzinfo=SH))
    await bot.deliver()
    pending = sorted(r.remind_at for r in await bot.rows(ReminderRow) if isinstance(r, ReminderRow)
                     and r.status == "pending")
    assert pending == [at(6, 19, 11)]  # the series' own next reminder, no 11:10 on any other day
    entries = await listed(bot, include_reminders="true", **WEEK)
    assert all([r["remind_at"] for r in e["reminders"]] == [e["start_at"] - 3_600_000]
               for e in entries if e["start_at"] > at(6, 19))


@pytest.mark.parametrize("said", ["每年农历九月初九给爷爷打电话", "每个工作日上午9点提醒我打卡",
                                  "每年农历八月十五下午6点跟家里视频"])
async def test_lunar_and_workday_series_made_in_chat_never_fail_the_api(bot: Bot, said: str) -> None:
    await bot.chat().say(said)
    [series] = await bot.rows(ScheduleItemRow)
    assert isinstance(series, ScheduleItemRow)
    anchor = series.start_at if series.kind == "event" else series.due_at
    assert anchor is not None
    headers = await api(bot)
    for params in ({}, {"include_reminders": "true"}, {"from": anchor - 86_400_000, "to": anchor + 86_400_000},
                   {"from": at(6, 18), "to": at(6, 18) + 800 * 86_400_000, "include_reminders": "true"},
                   {"from": anchor}):
        answer = await bot.client.get("/api/schedule/items", headers=headers, params=params)
        assert answer.status_code == 200, (params, answer.text)
        assert answer.json()["items"], params
    one = await bot.client.get(f"/api/schedule/items/{series.id}", headers=headers)
    assert one.status_code == 200, one.text
    body = one.json()
    if series.lunar:
        assert body["recurrence"]["lunar"]["month"] in (8, 9) and body["rrule"] is None
    else:
        assert body["recurrence"]["workdays"] == "cn"


async def test_a_tap_on_a_day_the_series_does_not_occur_on_is_refused_and_the_feed_has_no_override(bot: Bot) -> None:
    await bot.chat().say("每周一上午10点上英语课")
    [series] = await bot.rows(ScheduleItemRow)
    assert isinstance(series, ScheduleItemRow)
    reminders = len(await bot.rows(ReminderRow))
    for do in (f"complete:{series.id}:2026-06-23", f"cancel:{series.id}:2026-06-23",
               f"snooze:{series.id}:1h:2026-06-23"):  # a Tuesday: a stale page or a hand-made form
        back = await tap(bot, do)
        shown = (await bot.client.get(back)).text
        flash = shown.split('<p class="flash" role="status">')[1].split("</p>")[0]
        assert "没有“上英语课”" in flash and "没有做任何改动" in flash, flash
    [after] = await bot.rows(ScheduleItemRow)
    assert isinstance(after, ScheduleItemRow)
    assert not (after.metadata_json or {}).get("skipped") and not (after.metadata_json or {}).get("done")
    assert len(await bot.rows(ReminderRow)) == reminders  # no snooze stored
    user = await bot.app.state.service.get_or_create_user("o-alice")
    with pytest.raises(NotAnOccurrence):
        await bot.app.state.service.complete_occurrence(user.id, series.id, date(2026, 6, 24))
    for verb in ("complete", "cancel"):  # the REST API: the same refusal, said plainly
        refused = await bot.client.post(f"/api/schedule/items/{series.id}/{verb}", headers=await api(bot),
                                        params={"on": "2026-06-23"})
        assert refused.status_code == 422 and "no occurrence on 2026-06-23" in refused.text, refused.text
    cal = await feed(bot)
    assert not [c for c in cal.walk("VEVENT") if "RECURRENCE-ID" in c]
    done = await bot.client.post(f"/api/schedule/items/{series.id}/complete", headers=await api(bot),
                                 params={"on": "2026-06-29"})
    assert done.status_code == 200 and done.json()["status"] == "active", done.text
    # the real day still works
    back = await tap(bot, f"complete:{series.id}:2026-06-22")
    assert "did=complete" in back


async def test_a_done_day_that_is_no_occurrence_any_more_leaves_no_override_in_the_feed(bot: Bot) -> None:
    await bot.chat().say("每周一上午10点上英语课")
    [series] = await bot.rows(ScheduleItemRow)
    assert isinstance(series, ScheduleItemRow)
    user = await bot.app.state.service.get_or_create_user("o-alice")
    await bot.app.state.service.complete_occurrence(user.id, series.id, date(2026, 6, 29))  # the second class
    assert len([c for c in (await feed(bot)).walk("VEVENT") if "RECURRENCE-ID" in c]) == 1
    moved = await bot.client.patch(f"/api/schedule/items/{series.id}", headers=await api(bot),
                                   json={"recurrence": {"rrule": "FREQ=WEEKLY;BYDAY=TU"}})  # now on Tuesdays
    assert moved.status_code == 200, moved.text
    cal = await feed(bot)
    assert not [c for c in cal.walk("VEVENT") if "RECURRENCE-ID" in c]
    days = alarms_by_day(cal, date(2026, 6, 23), date(2026, 7, 8))
    assert list(days) == [date(2026, 6, 23), date(2026, 6, 30), date(2026, 7, 7)], days


async def test_an_expanded_listing_names_each_occurrence_and_every_reminder_has_a_stored_id(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天下午3点提醒我吃药")
    await chat.say("明天上午11点开会")
    rows = [r for r in await bot.rows(ReminderRow) if isinstance(r, ReminderRow)]
    series = next(r for r in await bot.rows(ScheduleItemRow) if isinstance(r, ScheduleItemRow) and r.rrule)
    stored = {r.id for r in rows}
    entries = await listed(bot, include_reminders="true", **WEEK)
    pills = [e for e in entries if e["id"] == series.id]
    assert [e["occurrence_start"] for e in pills] == [at(6, 18 + n, 15) for n in range(7)]
    assert all(e["series_id"] == series.id and e["due_at"] == e["occurrence_start"] for e in pills)
    meeting = [e for e in entries if e["id"] != series.id]
    assert meeting and all(e["series_id"] is None and e["occurrence_start"] is None for e in meeting)
    reminders = [r for e in entries for r in e["reminders"]]
    assert reminders and all(r["id"] in stored for r in reminders), reminders
    later = [r for e in pills[1:] for r in e["reminders"]]
    assert later and all(r["planned"] and r["occurrence_start"] == r["remind_at"] for r in later)
    assert not pills[0]["reminders"][0]["planned"]
    # the page offers 不用提醒 on the stored reminder's own card only (on a planned one it would end them all)
    _, html = await page(bot)
    assert html.count(f'value="dismiss:{pills[0]["reminders"][0]["id"]}"') == 1
