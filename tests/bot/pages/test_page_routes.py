"""Pages over the real app on both backends: links, tokens, share/revoke, ownership, in-app queue, feed."""

from __future__ import annotations

import logging
from datetime import date, timedelta
from urllib.parse import urlsplit

import pytest
from icalendar import Calendar
from page_world import BASE, World, app_fixture, ms, path_of, seed, world_fixture  # noqa: F401 (pytest fixtures `app`, `world`)
from sqlalchemy import func, select

from bot.pages.links import PageLinks
from bot.settings import load_settings
from schedule import outbox
from schedule.domain import ItemChanges, NewItem, Recurrence
from schedule.model import AppSecretRow, OutboundMessageRow, ReminderRow


async def test_private_page_shows_the_week_with_safe_headers(world: World) -> None:
    url = await world.links.itinerary_url(world.user.id)
    assert url.startswith(f"{BASE}/p/")
    response = await world.client.get(path_of(url))
    assert response.status_code == 200
    assert response.headers["cache-control"] == "private, no-store"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "<title>我的行程 · 6月18日–6月24日</title>" in html
    for title in ("项目会议", "带材料", "交周报", "报销单", "取护照"):
        assert title in html
    assert 'class="day today" id="d-2026-06-18"' in html and 'name="csrf"' in html


async def test_range_link_opens_that_range(world: World) -> None:
    url = await world.links.itinerary_url(world.user.id, start_ms=ms(2026, 6, 20), end_ms=ms(2026, 6, 21))
    assert url.endswith("?from=2026-06-20&to=2026-06-20")
    html = (await world.client.get(path_of(url))).text
    assert "<title>我的行程 · 6月20日</title>" in html and "取护照" in html and "项目会议" not in html
    bad = await world.client.get(path_of(url).split("?")[0] + "?from=2026-13-01")
    assert bad.status_code == 400 and "日期不对" in bad.text


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),  # forged signature
    lambda t: "p.2" + t[3:],  # another user's id under this signature
    lambda t: "x",
    lambda t: t + "." * 300,
    lambda t: "p.1.ffffffff..%E4%BD%A0%E5%A5%BD",
])
async def test_forged_tokens_get_a_friendly_404(world: World, mangle) -> None:  # type: ignore[no-untyped-def]
    token = path_of(await world.links.itinerary_url(world.user.id)).split("/")[-1]
    response = await world.client.get(f"/p/{mangle(token)}")
    assert response.status_code == 404
    assert "找不到这个行程页" in response.text and "项目会议" not in response.text


async def test_scopes_do_not_mix(world: World) -> None:
    feed_token = urlsplit(await world.links.feed_url(world.user.id)).path.split("/")[-1].removesuffix(".ics")
    page_token = path_of(await world.links.itinerary_url(world.user.id)).split("/")[-1]
    assert (await world.client.get(f"/p/{feed_token}")).status_code == 404
    assert (await world.client.get(f"/ics/{page_token}.ics")).status_code == 404


async def test_expired_link_gets_410(world: World) -> None:
    url = await world.links.itinerary_url(world.user.id)
    world.clock.advance(timedelta(days=7, minutes=1))
    response = await world.client.get(path_of(url))
    assert response.status_code == 410 and "链接已失效" in response.text


async def test_share_link_is_read_only_stable_and_revocable(world: World) -> None:
    first = await world.links.share_url(world.user.id)
    assert await world.links.share_url(world.user.id) == first
    page = await world.client.get(path_of(first))
    assert page.status_code == 200 and "项目会议" in page.text
    assert "<form" not in page.text and "csrf" not in page.text and "只读分享" in page.text
    later = await world.client.get(path_of(first) + "?from=2026-06-01&to=2026-08-31")
    assert "<title>行程 · 6月18日–6月24日</title>" in later.text  # the query cannot widen a share
    token = path_of(first).split("/")[-1]
    posted = await world.client.post(f"/p/{token}", data={"csrf": "x", "do": f"complete:{world.items['report'].id}"})
    assert posted.status_code == 404
    assert (await world.service.get_item(world.user.id, world.items["report"].id)).status == "active"

    assert await world.links.revoke_share(world.user.id) is True
    assert await world.links.revoke_share(world.user.id) is False
    gone = await world.client.get(path_of(first))
    assert gone.status_code == 410 and "项目会议" not in gone.text
    fresh = await world.links.share_url(world.user.id)
    assert fresh != first and (await world.client.get(path_of(fresh))).status_code == 200


async def test_one_users_link_never_shows_or_touches_anothers_data(world: World) -> None:
    bob, bobs = await seed(world.service, "bob")
    await world.service.update_item(bob.id, bobs["meeting"].id, ItemChanges(
        title="鲍勃的私事"))
    alice_page = await world.client.get(path_of(await world.links.itinerary_url(world.user.id)))
    assert "鲍勃的私事" not in alice_page.text
    html = alice_page.text
    csrf = html.split('name="csrf" value="')[1].split('"')[0]
    token = path_of(await world.links.itinerary_url(world.user.id)).split("/")[-1]
    reminder_id = bobs["meeting"].reminders[0].id
    for do in (f"complete:{bobs['report'].id}", f"cancel:{bobs['report'].id}", f"snooze:{bobs['report'].id}:1h",
               f"dismiss:{reminder_id}"):
        response = await world.client.post(f"/p/{token}", data={"csrf": csrf, "do": do})
        assert response.status_code == 404, do
    assert (await world.service.get_item(bob.id, bobs["report"].id)).status == "active"
    assert (await world.service.get_item(bob.id, bobs["meeting"].id)).reminders[0].status == "pending"


async def test_in_app_queue_stays_until_the_owner_says_seen(world: World) -> None:
    """A GET (a link preview, a reload) never consumes the notices; the owner's 知道了 (a POST) does."""
    meeting = world.items["meeting"]
    reminder_id = meeting.reminders[0].id
    async with world.app.state.sessions.begin() as session:
        rem = await session.get(ReminderRow, reminder_id)
        rem.status = "locked"
        await outbox.enqueue(session, user_id=world.user.id, idempotency_key="inapp:1", kind="reminder",
                             channel="inapp", reminder_id=reminder_id, now_ms=ms(2026, 6, 18, 9, 0),
                             payload={"text": "⏰ 提醒：项目会议 15:00"})
        await outbox.enqueue(session, user_id=world.user.id, idempotency_key="expired:9", kind="notice",
                             channel="inapp", now_ms=ms(2026, 6, 18, 9, 5),
                             payload={"text": "⏰ 提醒：昨晚 20:00 给妈妈打电话", "expired": True})
    url = path_of(await world.links.itinerary_url(world.user.id))
    share = path_of(await world.links.share_url(world.user.id))
    assert "未送达" not in (await world.client.get(share)).text  # the public page never consumes the queue
    first = (await world.client.get(url)).text
    assert "你有 2 条未送达的提醒" in first and "给妈妈打电话" in first and "项目会议 15:00" in first
    second = (await world.client.get(url)).text
    assert "你有 2 条未送达的提醒" in second  # the first view changed nothing
    async with world.app.state.sessions.begin() as session:
        assert set((await session.scalars(select(OutboundMessageRow.status).where(
            OutboundMessageRow.channel == "inapp"))).all()) == {"pending"}
        assert (await session.get(ReminderRow, reminder_id)).status == "locked"
    csrf = second.split('name="csrf" value="')[1].split('"')[0]
    seen = await world.client.post(url, data={"do": "seen:0", "csrf": csrf})
    assert seen.status_code == 303 and "did=seen" in seen.headers["location"]
    after = (await world.client.get(seen.headers["location"])).text
    assert "未送达的提醒" not in after.split('class="flash"')[0] and "已标为已读" in after
    async with world.app.state.sessions.begin() as session:
        statuses = set((await session.scalars(select(OutboundMessageRow.status).where(
            OutboundMessageRow.channel == "inapp"))).all())
        assert statuses == {"sent"}
        assert (await session.get(ReminderRow, reminder_id)).status == "sent"


async def test_calendar_feed_route(world: World) -> None:
    weekly = await world.service.create_item(world.user.id, NewItem(
        kind="event", title="周会", timezone="Asia/Shanghai", start_at=ms(2026, 6, 22, 9, 30),
        recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO")))
    await world.service.skip_occurrence(world.user.id, weekly.id, date(2026, 6, 29))
    url = await world.links.feed_url(world.user.id)
    assert url == await world.links.feed_url(world.user.id)  # stable to subscribe to
    response = await world.client.get(urlsplit(url).path)
    assert response.status_code == 200 and response.headers["content-type"] == "text/calendar; charset=utf-8"
    cal = Calendar.from_ical(response.content)
    uids = {str(c["UID"]) for c in cal.walk() if c.name in ("VEVENT", "VTODO")}
    assert f"item-{weekly.id}@pages.example" in uids and len(uids) == 6
    series = next(c for c in cal.walk("VEVENT") if str(c["UID"]) == f"item-{weekly.id}@pages.example")
    assert [d.dt.date() for d in series["EXDATE"].dts] == [date(2026, 6, 29)]


async def test_generated_secret_is_stored_once_and_shared(world: World, caplog: pytest.LogCaptureFixture) -> None:
    other = PageLinks(world.app.state.settings, world.app.state.sessions, world.clock)
    url = await other.itinerary_url(world.user.id)
    assert (await world.client.get(path_of(url))).status_code == 200  # the app's PageLinks checks it
    async with world.app.state.sessions.begin() as session:
        assert await session.scalar(select(func.count()).select_from(AppSecretRow)) == 1
    configured = PageLinks(load_settings(DATABASE_URL=world.app.state.settings.DATABASE_URL, SECRET_KEY="3OHVi2sypfSXcBRLtie5J0E_toAkJVaDKVdOnlHU",
                                         PUBLIC_BASE_URL=BASE), world.app.state.sessions, world.clock)
    foreign = await configured.itinerary_url(world.user.id)
    assert (await world.client.get(path_of(foreign))).status_code == 404


async def test_generating_the_secret_logs_one_line(app, clock, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO, logger="schedbot.pages")
    user = await app.state.service.get_or_create_user("carol")
    first = PageLinks(app.state.settings, app.state.sessions, clock)
    second = PageLinks(app.state.settings, app.state.sessions, clock)
    await first.itinerary_url(user.id)
    await second.itinerary_url(user.id)
    lines = [r.getMessage() for r in caplog.records if "SECRET_KEY" in r.getMessage()]
    assert len(lines) == 1 and "generated" in lines[0]
