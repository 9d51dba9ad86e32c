"""修改 on the page (time, title, place, note of one item or one occurrence), the share page as a plan, and what
cards and day headers say (notes with links, a map link, due dates, 休/班 and 农历, the zone in words).

Without WeChat configured (this world) the private link is its holder's: the local demo acts as the owner.
"""

from __future__ import annotations

from datetime import date, timedelta

from page_world import World, app_fixture, ms, path_of, world_fixture  # noqa: F401 (pytest fixtures `app`, `world`)
from sqlalchemy import update

from schedule.domain import ItemChanges, NewItem, NewReminder, Recurrence
from schedule.model import ReminderRow


async def owner_page(world: World, query: str = "?from=2026-06-18&to=2026-06-24") -> tuple[str, str]:
    base = path_of(await world.links.itinerary_url(world.user.id))
    html = (await world.client.get(base + query)).text
    return base, html


def csrf_of(html: str) -> str:
    return html.split('name="csrf" value="')[1].split('"')[0]


async def test_edit_one_item_from_the_page(world: World) -> None:
    meeting = world.items["meeting"]
    base, html = await owner_page(world)
    assert f'/edit?from=2026-06-18&amp;to=2026-06-24&amp;item={meeting.id}"' in html
    form = await world.client.get(f"{base}/edit?from=2026-06-18&to=2026-06-24&item={meeting.id}")
    assert form.status_code == 200
    assert 'value="项目会议"' in form.text and 'value="2026-06-18"' in form.text and 'value="15:00"' in form.text
    saved = await world.client.post(f"{base}/edit", data={
        "csrf": csrf_of(form.text), "item": str(meeting.id), "from": "2026-06-18", "to": "2026-06-24",
        "title": "项目评审会", "day": "2026-06-19", "clock": "16:30", "location": "3号会议室",
        "note": "议程 https://docs.example/agenda <b>带电脑</b>"})
    assert saved.status_code == 303
    assert saved.headers["location"].endswith(f"?from=2026-06-18&to=2026-06-24&did=edit%3A{meeting.id}#item-{meeting.id}")
    item = await world.service.get_item(world.user.id, meeting.id)
    assert (item.title, item.start_at, item.end_at, item.location, item.description) == (
        "项目评审会", ms(2026, 6, 19, 16, 30), ms(2026, 6, 19, 17, 30), "3号会议室",
        "议程 https://docs.example/agenda <b>带电脑</b>")
    assert item.reminders[0].remind_at == ms(2026, 6, 19, 15, 30)  # the reminder moved with it (as in chat)
    page = (await world.client.get(saved.headers["location"].split("#")[0])).text
    assert "已修改“项目评审会”。" in page
    card = page.split(f'id="item-{meeting.id}"')[1].split("</li>")[0]
    assert '<a href="https://docs.example/agenda" rel="noopener noreferrer nofollow" target="_blank">' in card
    assert "&lt;b&gt;带电脑&lt;/b&gt;" in card and "<b>" not in card  # a note is text, escaped
    assert 'href="https://uri.amap.com/search?keyword=3%E5%8F%B7%E4%BC%9A%E8%AE%AE%E5%AE%A4' in card


async def test_edit_one_occurrence_leaves_the_series_alone(world: World) -> None:
    weekly = await world.service.create_item(world.user.id, NewItem(
        kind="event", title="周会", timezone="Asia/Shanghai", start_at=ms(2026, 6, 22, 9, 30),
        end_at=ms(2026, 6, 22, 10, 0), recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"),
        reminders=(NewReminder(remind_at=ms(2026, 6, 22, 9, 15), offset_minutes=15),)))
    base, html = await owner_page(world, "?from=2026-06-18&to=2026-07-01")
    assert "修改这一次" in html
    form = await world.client.get(f"{base}/edit?item={weekly.id}:2026-06-29")
    assert form.status_code == 200 and "只改 6月29日 这一次" in form.text
    bad_day = await world.client.get(f"{base}/edit?item={weekly.id}:2026-06-30")  # a Tuesday: not an occurrence
    assert bad_day.status_code == 404
    saved = await world.client.post(f"{base}/edit", data={
        "csrf": csrf_of(form.text), "item": f"{weekly.id}:2026-06-29", "title": "周会（改在大会议室）",
        "day": "2026-06-29", "clock": "14:00", "location": "", "note": ""})
    assert saved.status_code == 303
    listed = await world.service.list_window(world.user.id, start_ms=ms(2026, 6, 22), end_ms=ms(2026, 7, 7),
                                             first=50, statuses=("active",), expand=True)
    shown = sorted((i.start_at, i.title) for i in listed.items if i.title.startswith("周会"))
    assert shown == [(ms(2026, 6, 22, 9, 30), "周会"), (ms(2026, 6, 29, 14, 0), "周会（改在大会议室）"),
                     (ms(2026, 7, 6, 9, 30), "周会")]
    copy = next(i for i in listed.items if i.title == "周会（改在大会议室）")
    assert copy.recurrence is None and [r.remind_at for r in copy.reminders] == [ms(2026, 6, 29, 13, 45)]


async def test_bad_edits_are_explained_and_change_nothing(world: World) -> None:
    report = world.items["report"]
    base, _ = await owner_page(world)
    form = await world.client.get(f"{base}/edit?item={report.id}")
    csrf = csrf_of(form.text)
    fields = {"csrf": csrf, "item": str(report.id), "title": "交周报", "day": "2026-06-18", "clock": "18:00",
              "location": "", "note": ""}
    for change, says in (({"title": "   "}, "标题不能为空"), ({"clock": "25:00"}, "时间看不懂"),
                         ({"day": "2026-02-30"}, "日期看不懂"), ({"day": "1999-01-01"}, "2000–2100"),
                         ({"title": "长" * 201}, "内容太长")):
        answer = await world.client.post(f"{base}/edit", data={**fields, **change})
        assert answer.status_code == 400 and says in answer.text, change
    assert (await world.client.post(f"{base}/edit", data={**fields, "csrf": "1.x"})).status_code == 403
    for ref in ("999999", "abc", f"{report.id}:2026-06-18"):  # unknown, malformed, a day of a one-off
        assert (await world.client.post(f"{base}/edit", data={**fields, "item": ref})).status_code == 404
    unchanged = await world.client.post(f"{base}/edit", data=fields)
    assert unchanged.status_code == 303 and "did=" not in unchanged.headers["location"]
    assert await world.service.get_item(world.user.id, report.id) == report


async def test_day_headers_cards_and_footer_say_what_an_agenda_app_says(world: World) -> None:
    await world.service.update_item(world.user.id, world.items["late"].id, ItemChanges(description="单据在抽屉里"))
    base, html = await owner_page(world)
    today = html.split('id="d-2026-06-18"')[1].split("</h2>")[0]
    assert "农历五月初四" in today and 'class="off' not in today
    dragon_boat = html.split('id="d-2026-06-19"')[1].split("</h2>")[0]
    assert ">休<span class=\"sr\">（法定休息日）</span>" in dragon_boat and "农历五月初五" in dragon_boat
    overdue = html.split('class="overdue"')[1].split("</details>")[0]
    assert "6月15日 18:00 到期" in overdue and "单据在抽屉里" in overdue
    assert "北京时间" in html and "时区 Asia/Shanghai" not in html
    async with world.app.state.sessions.begin() as session:  # the meeting's reminder went out: snooze is offered
        await session.execute(update(ReminderRow).where(ReminderRow.item_id == world.items["meeting"].id)
                              .values(status="sent", sent_at=ms(2026, 6, 18, 9, 0)))
    snoozed = (await world.client.get(base)).text
    assert "明早后" not in snoozed and ">明早</button>" in snoozed and ">10 分钟后</button>" in snoozed
    fourteen = (await world.client.get(base + "?from=2026-06-18&to=2026-07-01")).text
    assert "‹ 前 14 天" in fourteen and "后 14 天 ›" in fourteen and "7 天" not in fourteen.split("</nav>")[0]
    assert 'href="/p/' in fourteen and "from=2026-07-02&amp;to=2026-07-15" in fourteen
    jump = (await world.client.get(base + "?from=2026-10-01")).text  # 跳到 a date: the date input's GET
    assert 'type="date" name="from" value="2026-10-01"' in jump
    await world.service.create_item(world.user.id, NewItem(kind="event", title="回老家", timezone="Asia/Shanghai",
                                                           start_at=ms(2026, 10, 2, 9, 0)))
    national = (await world.client.get(base + "?from=2026-10-01&to=2026-10-10")).text
    assert ">班<" in national.split('id="d-2026-10-10"')[1].split("</h2>")[0]
    assert ">休<" in national.split('id="d-2026-10-01"')[1].split("</h2>")[0]


async def test_a_done_card_can_be_reopened_from_the_card(world: World) -> None:
    report = world.items["report"]
    base, html = await owner_page(world)
    await world.client.post(base, data={"do": f"complete:{report.id}", "csrf": csrf_of(html)})
    page = (await world.client.get(base)).text
    card = page.split(f'id="item-{report.id}"')[1].split("</li>")[0]
    assert f'<button class="check on" name="do" value="undo-complete:{report.id}" aria-label="重新打开：交周报">' in card
    reopened = await world.client.post(base, data={"do": f"undo-complete:{report.id}", "csrf": csrf_of(page)})
    assert reopened.status_code == 303
    assert (await world.service.get_item(world.user.id, report.id)).status == "active"


async def test_the_share_page_shows_the_plan_only(world: World) -> None:
    tz = "Asia/Shanghai"
    await world.service.create_item(world.user.id, NewItem(
        kind="task", title="吃药", timezone=tz, due_at=ms(2026, 6, 17, 8, 0), description="饭后 两粒",
        recurrence=Recurrence(rrule="FREQ=DAILY")))
    await world.service.complete_item(world.user.id, world.items["report"].id)
    share = path_of(await world.links.share_url(world.user.id))
    world.clock.advance(timedelta(hours=10))  # 20:00: today's 吃药 at 08:00 is overdue for its owner
    owner = (await world.client.get(path_of(await world.links.itinerary_url(world.user.id)))).text
    assert "已过期" in owner and "已完成" in owner and "饭后 两粒" in owner
    plan = (await world.client.get(share)).text
    for private in ("已过期", "已完成", "到期", "饭后 两粒", 'class="bell', 'tone-done"', 'tone-overdue"', "报销单"):
        assert private not in plan, private
    assert "吃药" in plan and "交周报" in plan and "只读分享" in plan
    with_notes = path_of(await world.links.share_url(world.user.id, notes=True))
    assert with_notes != share and "饭后 两粒" in (await world.client.get(with_notes)).text
    assert "已过期" not in (await world.client.get(with_notes)).text
    assert date(2026, 6, 18).isoformat() in plan


async def test_without_wechat_the_link_is_its_holders(world: World) -> None:
    """A local `schedbot serve` without WECHAT_APP_ID/SECRET: no WeChat to ask who reads, none to forward in; the
    link (from `schedbot chat` on the server) acts, whatever the browser, and nobody is sent to WeChat."""
    base = path_of(await world.links.itinerary_url(world.user.id))
    for ua in ("Mozilla/5.0 MicroMessenger/8.0.49", "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0"):
        page = await world.client.get(base, headers={"user-agent": ua})
        assert page.status_code == 200 and 'name="do"' in page.text and 'class="viewer"' not in page.text
        assert (await world.client.get(base + "/calendar", headers={"user-agent": ua})).status_code == 303
    assert (await world.client.get(base + "/login?code=x&state=y")).status_code == 303
