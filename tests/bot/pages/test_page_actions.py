"""One-tap actions: each needs the page token and a fresh CSRF token, goes through ScheduleService,
and answers POST/redirect/GET back to the same range. Buttons post `do=action:id` to /p/{token}."""

from __future__ import annotations

from datetime import timedelta

import pytest
from page_world import World, app_fixture, ms, path_of, seed, world_fixture  # noqa: F401 (pytest fixtures `app`, `world`)

from bot.pages.actions import snooze_at
from schedule.testing import active_items, fill_to_quota


async def page_and_csrf(world: World, url: str | None = None) -> tuple[str, str]:
    url = url or await world.links.itinerary_url(world.user.id, start_ms=ms(2026, 6, 18), end_ms=ms(2026, 6, 25))
    html = (await world.client.get(path_of(url))).text
    return path_of(url).split("?")[0], html.split('name="csrf" value="')[1].split('"')[0]


def targets(world: World) -> list[str]:
    report, meeting = world.items["report"], world.items["meeting"]
    return [f"complete:{report.id}", f"cancel:{report.id}", f"snooze:{meeting.id}:10m",
            f"dismiss:{meeting.reminders[0].id}"]


async def unchanged(world: World) -> bool:
    report = await world.service.get_item(world.user.id, world.items["report"].id)
    meeting = await world.service.get_item(world.user.id, world.items["meeting"].id)
    return report.status == "active" and [r.status for r in meeting.reminders] == ["pending"]


async def test_every_action_refuses_a_missing_wrong_foreign_or_stale_csrf(world: World) -> None:
    base, csrf = await page_and_csrf(world)
    bob, _ = await seed(world.service, "bob")
    _bob_base, bob_csrf = await page_and_csrf(world, await world.links.itinerary_url(bob.id))
    for do in targets(world):
        for bad in ({}, {"csrf": ""}, {"csrf": "1.x"}, {"csrf": csrf[:-1] + ("B" if csrf.endswith("A") else "A")}, {"csrf": bob_csrf},
                    {"csrf": "你好"}):
            response = await world.client.post(base, data={"do": do, **bad})
            assert response.status_code == 403, (do, bad)
            assert "页面已过时" in response.text and f'href="{base}' in response.text  # back to a fresh page
    world.clock.advance(timedelta(hours=25))
    for do in targets(world):
        stale = await world.client.post(base, data={"do": do, "csrf": csrf})
        assert stale.status_code == 403
    assert await unchanged(world)


async def test_complete_then_the_page_shows_it_done(world: World) -> None:
    base, csrf = await page_and_csrf(world)
    report = world.items["report"]
    response = await world.client.post(base, data={"do": f"complete:{report.id}", "csrf": csrf,
                                                   "from": "2026-06-18", "to": "2026-06-24"})
    assert response.status_code == 303
    assert response.headers["location"] == \
        f"{base}?from=2026-06-18&to=2026-06-24&did=complete%3A{report.id}#item-{report.id}"
    assert (await world.service.get_item(world.user.id, report.id)).status == "completed"
    html = (await world.client.get(response.headers["location"].split("#")[0])).text
    entry = html.split(f'id="item-{report.id}"')[0].rsplit("<li", 1)[1]
    assert "tone-done" in entry
    flash = html.split('<p class="flash" role="status">')[1].split("</p>")[0]
    assert flash == f'已完成“交周报”。 <button name="do" value="undo-complete:{report.id}">撤销</button>'
    again = await world.client.post(base, data={"do": f"complete:{report.id}", "csrf": csrf})
    assert again.status_code == 303  # a second tap is harmless


async def test_cancel_and_dismiss(world: World) -> None:
    base, csrf = await page_and_csrf(world)
    passport, meeting = world.items["passport"], world.items["meeting"]
    assert (await world.client.post(base, data={"do": f"cancel:{passport.id}", "csrf": csrf})).status_code == 303
    assert (await world.service.get_item(world.user.id, passport.id)).status == "cancelled"
    rid = meeting.reminders[0].id
    assert (await world.client.post(base, data={"do": f"dismiss:{rid}", "csrf": csrf})).status_code == 303
    assert (await world.service.get_item(world.user.id, meeting.id)).reminders[0].status == "cancelled"
    html = (await world.client.get(base)).text
    assert "取护照" not in html


@pytest.mark.parametrize(("delay", "expected"), [("10m", ms(2026, 6, 18, 10, 10)), ("1h", ms(2026, 6, 18, 11, 0)),
                                                 ("morning", ms(2026, 6, 19, 8, 0))])
async def test_snooze_creates_a_reminder(world: World, delay: str, expected: int) -> None:
    base, csrf = await page_and_csrf(world)
    meeting = world.items["meeting"]
    response = await world.client.post(base, data={"csrf": csrf, "do": f"snooze:{meeting.id}:{delay}"})
    assert response.status_code == 303
    reminders = (await world.service.get_item(world.user.id, meeting.id)).reminders
    assert expected in [r.remind_at for r in reminders if r.status == "pending"]


async def test_unknown_actions_and_ids_are_404_pages(world: World) -> None:
    base, csrf = await page_and_csrf(world)
    meeting = world.items["meeting"].id
    for do in ("complete:abc", "complete:99999", f"explode:{meeting}", f"snooze:{meeting}:forever",
               f"snooze:{meeting}", f"dismiss:{'9' * 40}", "", "complete:-1", f"complete:{chr(0xFF10 + meeting)}"):
        response = await world.client.post(base, data={"csrf": csrf, "do": do})
        assert response.status_code == 404, do
        assert "这一项已经不在了" in response.text and "打开最新的行程页" in response.text  # a way back


def test_snooze_times() -> None:
    sh = "Asia/Shanghai"
    assert snooze_at("10m", now_ms=ms(2026, 6, 18, 10, 0) + 35_000, tz=sh) == ms(2026, 6, 18, 10, 10)
    assert snooze_at("morning", now_ms=ms(2026, 6, 18, 6, 0), tz=sh) == ms(2026, 6, 18, 8, 0)
    assert snooze_at("morning", now_ms=ms(2026, 6, 18, 8, 0), tz=sh) == ms(2026, 6, 19, 8, 0)
    with pytest.raises(ValueError, match="unknown"):
        snooze_at("later", now_ms=0, tz=sh)


async def test_undo_at_the_item_quota_is_refused_with_a_clear_message(world: World) -> None:
    sessions = world.app.state.sessions
    base, csrf = await page_and_csrf(world)
    report = world.items["report"]
    assert (await world.client.post(base, data={"do": f"cancel:{report.id}", "csrf": csrf})).status_code == 303
    quota = world.service.max_active_items
    await fill_to_quota(sessions, world.user.id, quota=quota, now_ms=ms(2026, 6, 18, 10, 0))
    response = await world.client.post(base, data={"do": f"undo-cancel:{report.id}", "csrf": csrf})
    assert response.status_code == 303
    html = (await world.client.get(response.headers["location"].split("#")[0])).text
    flash = html.split('<p class="flash" role="status">')[1].split("</p>")[0]
    assert flash == f"没能撤销：进行中的事项已达上限 {quota} 条，先完成或取消一些，再恢复“交周报”。"
    assert (await world.service.get_item(world.user.id, report.id)).status == "cancelled"
    assert await active_items(sessions, world.user.id) == quota


async def test_a_tap_on_one_dose_closes_that_dose_only(world: World) -> None:
    """A series several times a day: the card of each dose names its start, so 完成 on the morning dose leaves
    the evening one open (it closed the whole day), and 撤销 opens the morning dose again."""
    from schedule.domain import NewItem, NewReminder, Recurrence

    pills = await world.service.create_item(world.user.id, NewItem(
        kind="task", title="吃降压药", timezone="Asia/Shanghai", due_at=ms(2026, 6, 18, 7, 30),
        recurrence=Recurrence(rrule="FREQ=DAILY;BYHOUR=7,21;BYMINUTE=30;COUNT=10"),
        reminders=(NewReminder(remind_at=ms(2026, 6, 18, 7, 30), offset_minutes=0),)))
    base, csrf = await page_and_csrf(world)
    html = (await world.client.get(base + "?from=2026-06-18&to=2026-06-24")).text
    morning, evening = f"complete:{pills.id}:2026-06-18T07:30", f"complete:{pills.id}:2026-06-18T21:30"
    assert f'value="{morning}"' in html and f'value="{evening}"' in html
    response = await world.client.post(base, data={"do": morning, "csrf": csrf})
    assert response.status_code == 303
    done = (await world.service.get_item(world.user.id, pills.id)).recurrence
    assert done is not None and list(done.done) == ["2026-06-18T07:30"]
    page = (await world.client.get(response.headers["location"].split("#")[0])).text
    assert f'value="{evening}"' in page and f'value="undo-complete:{pills.id}:2026-06-18T07:30"' in page
    undo = await world.client.post(base, data={"do": f"undo-complete:{pills.id}:2026-06-18T07:30", "csrf": csrf})
    assert undo.status_code == 303
    reopened = (await world.service.get_item(world.user.id, pills.id)).recurrence
    assert reopened is not None and list(reopened.done) == []
