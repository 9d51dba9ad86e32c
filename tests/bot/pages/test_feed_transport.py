"""The calendar feed as phones poll it, on both backends: a re-poll with the validators gets 304 with no body
(and no render); the validators move with every kind of change the feed shows, even within one millisecond;
gzip when taken; SEQUENCE counts each item's changes (a done day's override too); the calendar says how
often to poll; a feed link lives past 400 days until revoked; HEAD answers like GET without a body."""

from __future__ import annotations

import gzip
from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import pytest
from icalendar import Calendar
from page_world import World, app_fixture, ms, path_of, world_fixture  # noqa: F401 (pytest fixtures)
from sqlalchemy import update

import bot.pages.feed as feed_module
from bot.pages import tokens
from bot.pages.feed import accepts_gzip
from bot.pages.tokens import Claims
from schedule.domain import ItemChanges, NewItem, NewReminder, Recurrence
from schedule.model import ReminderRow, UserRow

TZ = "Asia/Shanghai"
DAY_MS = 86_400_000


async def feed_path(world: World) -> str:
    return urlsplit(await world.links.feed_url(world.user.id)).path


async def test_a_repoll_with_the_validators_gets_304_and_nothing_is_rendered(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    path = await feed_path(world)
    first = await world.client.get(path)
    assert first.status_code == 200 and b"BEGIN:VCALENDAR" in first.content
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert etag.startswith('W/"') and modified.endswith(" GMT")
    assert first.headers["cache-control"] == "private, no-cache" and first.headers["vary"] == "Accept-Encoding"
    renders: list[int] = []
    real = feed_module.calendar_feed
    monkeypatch.setattr(feed_module, "calendar_feed", lambda *a, **k: renders.append(1) or real(*a, **k))
    for conditional in ({"If-None-Match": etag}, {"If-None-Match": f'"other", {etag}'}, {"If-None-Match": "*"},
                        {"If-None-Match": etag.removeprefix("W/")}, {"If-Modified-Since": modified}):
        again = await world.client.get(path, headers=conditional)
        assert again.status_code == 304, conditional
        assert again.content == b"" and again.headers["etag"] == etag and again.headers["last-modified"] == modified
        assert "content-encoding" not in again.headers
        head = await world.client.head(path, headers=conditional)
        assert head.status_code == 304 and head.content == b""
    assert renders == []  # a 304 never loads or renders the items
    for stale in ({"If-None-Match": 'W/"0123"'}, {"If-Modified-Since": "Mon, 01 Jun 2026 00:00:00 GMT"},
                  {"If-None-Match": 'W/"0123"', "If-Modified-Since": modified},  # If-None-Match decides
                  {"If-Modified-Since": "not a date"}, {"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"}):
        full = await world.client.get(path, headers=stale)
        assert full.status_code == 200 and full.content == first.content, stale
    assert renders == []  # this version's compressed body is kept: a poll without validators renders nothing
    await world.service.update_item(world.user.id, world.items["passport"].id, ItemChanges(title="取护照和签证"))
    changed = await world.client.get(path)
    assert changed.status_code == 200 and "取护照和签证" in changed.text and len(renders) == 1
    assert (await world.client.get(path)).content == changed.content and len(renders) == 1
    plain = await world.client.get(path, headers={"Accept-Encoding": "identity"})  # only gzip bodies are kept
    assert plain.content == changed.content and len(renders) == 2


async def _poll(world: World, path: str, etag: str, modified: str) -> tuple[int, str, str]:
    """A client's re-poll with its validators: (status, the validators it keeps)."""
    answer = await world.client.get(path, headers={"If-None-Match": etag})
    by_date = await world.client.get(path, headers={"If-Modified-Since": modified})
    assert by_date.status_code == answer.status_code  # both validators say the same
    return answer.status_code, answer.headers["etag"], answer.headers["last-modified"]


async def test_every_kind_of_change_the_feed_shows_moves_its_validators(world: World) -> None:
    """The clock never moves between the changes: a version made of timestamps alone would miss them all."""
    service, uid, sessions = world.service, world.user.id, world.app.state.sessions
    pills = await service.create_item(uid, NewItem(
        kind="task", title="吃药", timezone=TZ, due_at=ms(2026, 6, 18, 22), recurrence=Recurrence(rrule="FREQ=DAILY"),
        reminders=(NewReminder(remind_at=ms(2026, 6, 18, 22)),)))
    path = await feed_path(world)
    first = await world.client.get(path)
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    meeting = world.items["meeting"]
    seen = {etag}
    lasts = [modified]

    async def via_db(**values: object) -> None:
        async with sessions.begin() as session:
            await session.execute(update(UserRow).where(UserRow.id == uid).values(**values))

    async def sent() -> None:  # what delivery writes when a reminder went out
        async with sessions.begin() as session:
            await session.execute(update(ReminderRow).where(ReminderRow.item_id == meeting.id).values(
                status="sent", sent_at=ms(2026, 6, 18, 10), updated_at=ms(2026, 6, 18, 10)))

    snooze: list[int] = []

    async def snoozed() -> None:
        snooze.append((await service.create_reminder(uid, pills.id, NewReminder(
            remind_at=ms(2026, 6, 18, 22, 10), offset_minutes=-10))).id)

    changes: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("create", lambda: service.create_item(uid, NewItem(kind="event", title="新会", timezone=TZ,
                                                            start_at=ms(2026, 6, 21, 10)))),
        ("edit", lambda: service.update_item(uid, world.items["passport"].id, ItemChanges(title="取护照和签证"))),
        ("edit again", lambda: service.update_item(uid, world.items["passport"].id, ItemChanges(location="出入境"))),
        ("complete", lambda: service.complete_item(uid, world.items["report"].id)),
        ("reopen", lambda: service.reopen_item(uid, world.items["report"].id)),
        ("cancel", lambda: service.cancel_item(uid, world.items["papers"].id)),
        ("skip a day", lambda: service.skip_occurrence(uid, pills.id, date(2026, 6, 20))),
        ("a day done", lambda: service.complete_occurrence(uid, pills.id, date(2026, 6, 21))),
        ("a day reopened", lambda: service.reopen_occurrence(uid, pills.id, date(2026, 6, 21))),
        ("snooze", snoozed),
        ("reminder cancelled", lambda: service.cancel_reminder(uid, snooze[0])),
        ("reminder re-led", lambda: service.set_reminder_lead(uid, pills.id, 15)),
        ("reminder sent", sent),
        ("timezone", lambda: via_db(timezone="Asia/Tokyo")),
        ("delete", lambda: service.delete_item(uid, world.items["late"].id)),
    ]
    for name, change in changes:
        status, unchanged, _ = await _poll(world, path, etag, lasts[-1])
        assert status == 304 and unchanged == etag, f"before {name}"
        await change()
        status, etag, modified = await _poll(world, path, etag, lasts[-1])
        assert status == 200 and etag not in seen, name
        assert parsedate_to_datetime(modified) > parsedate_to_datetime(lasts[-1]), name
        seen.add(etag)
        lasts.append(modified)
    # nothing changes, but a one-off item falls behind the feed's history (180 days): it leaves the feed
    world.clock.advance(days=100)
    assert (await _poll(world, path, etag, lasts[-1]))[0] == 304
    world.clock.advance(days=90)
    status, etag, modified = await _poll(world, path, etag, lasts[-1])
    assert status == 200 and etag not in seen
    assert f"item-{meeting.id}@" not in (await world.client.get(path)).text
    await service.update_item(uid, meeting.id, ItemChanges(title="早已过去"))  # not in the feed: no new version
    assert (await _poll(world, path, etag, modified))[0] == 304


async def test_last_modified_moves_on_a_second_per_version_within_one_second(world: World) -> None:
    """Two versions first served within the same second still get two Last-Modified dates: an If-Modified-Since
    that names the first never matches the second."""
    path = await feed_path(world)
    first = await world.client.get(path)
    await world.service.update_item(world.user.id, world.items["passport"].id, ItemChanges(title="改了"))
    second = await world.client.get(path, headers={"If-Modified-Since": first.headers["last-modified"]})
    assert second.status_code == 200
    stamps = [r.headers["last-modified"] for r in (first, second)]
    assert parsedate_to_datetime(stamps[1]) - parsedate_to_datetime(stamps[0]) == timedelta(seconds=1)


async def test_gzip_when_taken_and_the_same_calendar_either_way(world: World) -> None:
    for n in range(30):  # a feed worth compressing
        await world.service.create_item(world.user.id, NewItem(kind="event", title=f"评审会 #{n}", timezone=TZ,
                                                               start_at=ms(2026, 6, 22, 9) + n * DAY_MS))
    path = await feed_path(world)
    plain = await world.client.get(path, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    async with world.client.stream("GET", path, headers={"Accept-Encoding": "gzip, deflate"}) as zipped:
        raw = b"".join([chunk async for chunk in zipped.aiter_raw()])
        assert zipped.headers["content-encoding"] == "gzip" and int(zipped.headers["content-length"]) == len(raw)
        assert zipped.headers["etag"] == plain.headers["etag"]  # weak: one version, either encoding
    assert gzip.decompress(raw) == plain.content and len(raw) * 4 < len(plain.content)
    refused = await world.client.get(path, headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert "content-encoding" not in refused.headers and refused.content == plain.content


def test_which_accept_encodings_take_gzip() -> None:
    taken = ["gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", "*", "x-gzip", "deflate, *;q=0.1"]
    refused = ["", "identity", "br", "gzip;q=0", "gzip;q=0, *", "*;q=0", "gzip;q=nonsense", "deflate"]
    assert [accepts_gzip(v) for v in taken] == [True] * len(taken)
    assert [accepts_gzip(v) for v in refused] == [False] * len(refused)


def _components(content: bytes) -> dict[tuple[str, str], int]:
    cal = Calendar.from_ical(content)
    return {(str(c["UID"]), str(c.get("RECURRENCE-ID").dt.date()) if "RECURRENCE-ID" in c else ""): int(c["SEQUENCE"])
            for c in cal.walk("VEVENT")}


async def test_sequence_counts_each_change_and_a_done_days_override_carries_it(world: World) -> None:
    service, uid = world.service, world.user.id
    path = await feed_path(world)
    passport, report = world.items["passport"], world.items["report"]
    weekly = await service.create_item(uid, NewItem(kind="event", title="周会", timezone=TZ,
                                                    start_at=ms(2026, 6, 22, 9, 30),
                                                    recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO")))
    uid_of = {item.id: f"item-{item.id}@pages.example" for item in (passport, report, weekly)}
    assert {key: n for key, n in _components((await world.client.get(path)).content).items()
            if key[0] in uid_of.values()} == {(uid_of[passport.id], ""): 0, (uid_of[report.id], ""): 0,
                                               (uid_of[weekly.id], ""): 0}
    world.clock.advance(hours=3)  # time alone changes no SEQUENCE
    await service.update_item(uid, passport.id, ItemChanges(title="取护照和签证"))
    await service.update_item(uid, passport.id, ItemChanges(location="出入境大厅"))
    await service.complete_item(uid, report.id)
    await service.complete_occurrence(uid, weekly.id, date(2026, 6, 29))
    await service.skip_occurrence(uid, weekly.id, date(2026, 7, 6))
    found = _components((await world.client.get(path)).content)
    assert found[(uid_of[passport.id], "")] == 2 and found[(uid_of[report.id], "")] == 1
    assert found[(uid_of[weekly.id], "")] == 2 and found[(uid_of[weekly.id], "2026-06-29")] == 2
    await service.reopen_occurrence(uid, weekly.id, date(2026, 7, 6))
    after = _components((await world.client.get(path)).content)
    assert after[(uid_of[weekly.id], "")] == 3 and after[(uid_of[weekly.id], "2026-06-29")] == 3
    assert after[(uid_of[passport.id], "")] == 2  # untouched items keep their count


async def test_the_calendar_says_how_often_to_poll(world: World) -> None:
    content = (await world.client.get(await feed_path(world))).content
    lines = content.split(b"\r\n")
    assert b"REFRESH-INTERVAL;VALUE=DURATION:PT1H" in lines and b"X-PUBLISHED-TTL:PT1H" in lines
    head = content.split(b"BEGIN:VTIMEZONE")[0]
    assert b"REFRESH-INTERVAL" in head and b"X-PUBLISHED-TTL" in head  # calendar properties, not an event's


async def test_a_feed_link_lives_past_400_days_until_it_is_revoked(world: World) -> None:
    uid = world.user.id
    url = await world.links.feed_url(uid)
    key, _ = await world.links._load_keys()  # noqa: SLF001 - signs a link as issued before (400 days)
    issued_for_400_days = tokens.sign(key, Claims("c", uid, ms(2026, 6, 18) + 400 * DAY_MS, "0-0"))
    world.clock.advance(days=401)
    assert (await world.client.get(urlsplit(url).path)).status_code == 200
    assert (await world.client.get(f"/ics/{issued_for_400_days}.ics")).status_code == 200  # links out there too
    world.clock.advance(days=5 * 365)
    assert (await world.client.get(urlsplit(url).path)).status_code == 200
    assert await world.links.feed_url(uid) == url  # one address for as long as it lives
    page = await world.links.itinerary_url(uid)  # a page link still expires after its week
    world.clock.advance(days=8)
    assert (await world.client.get(path_of(page))).status_code == 410
    assert (await world.client.get(urlsplit(url).path)).status_code == 200
    await world.links.revoke_feed(uid)  # 关闭日历订阅
    assert (await world.client.get(urlsplit(url).path)).status_code == 410
    fresh = await world.links.feed_url(uid)
    await world.links.reset_links(uid)  # 重置链接
    assert (await world.client.get(urlsplit(fresh).path)).status_code == 410
    last = await world.links.feed_url(uid)
    assert (await world.client.get(urlsplit(last).path)).status_code == 200
    await world.service.forget_user(uid)  # unfollowing, `user forget`
    for gone in (last, f"https://pages.example/ics/{issued_for_400_days}.ics"):
        assert (await world.client.get(urlsplit(gone).path)).status_code == 410


async def test_head_answers_like_get_without_a_body(world: World) -> None:
    page = path_of(await world.links.itinerary_url(world.user.id))
    for path in (page, await feed_path(world)):
        got, head = await world.client.get(path), await world.client.head(path)
        assert head.status_code == got.status_code == 200, path
        assert head.content == b"" and got.content != b""
        for name in ("content-type", "content-length", "content-encoding", "cache-control", "etag"):
            assert head.headers.get(name) == got.headers.get(name), (path, name)
    gone = await world.client.head("/p/p.1.2.3.forged")
    assert gone.status_code == 404 and gone.content == b""
