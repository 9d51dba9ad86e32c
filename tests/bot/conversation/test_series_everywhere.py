"""Chat, the page and the REST API list the same occurrences (one expansion for all three), and the
page's one-tap buttons on a series act on that day only. Items are made through chat and the API; the clock is
Thursday 2026-06-18 10:00 in Shanghai; both backends."""

from __future__ import annotations

import re
from datetime import date, timedelta
from urllib.parse import urlsplit

import pytest
from conftest import Bot, at

from fakes.wechat import signed_in
from schedule.clock import now_ms
from schedule.model import ReminderRow, ScheduleItemRow

DAYS = [date(2026, 6, 18) + timedelta(days=n) for n in range(7)]


async def api(bot: Bot) -> dict[str, str]:
    _, token, _ = await bot.app.state.service.issue_api_token("o-alice")
    return {"Authorization": f"Bearer {token}"}


async def a_week(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天晚上10点提醒我吃药")  # from tonight
    await chat.say("每周一上午10点开周会")
    await chat.say("每个工作日上午9点提醒我打卡")
    await chat.say("周六下午3点去看电影")
    created = await bot.client.post("/api/schedule/items", headers=await api(bot), json={
        "kind": "event", "title": "杭州出差", "all_day": True, "start_at": at(6, 19), "end_at": at(6, 21)})
    assert created.status_code == 201


def page_counts(html: str) -> dict[date, int]:
    found = {}
    for section in html.split('<section class="day')[1:]:
        on = date.fromisoformat(re.search(r'id="d-([0-9-]+)"', section).group(1))  # type: ignore[union-attr]
        found[on] = section.split("</section>")[0].count('<li class="entry')
    return found


async def page_html(bot: Bot, start: date, days: int = 7) -> tuple[str, str]:
    user = await bot.app.state.service.get_or_create_user("o-alice")
    url = await bot.app.state.page_links.itinerary_url(user.id, start_ms=at(start.month, start.day),
                                                       end_ms=at(start.month, start.day) + days * 86_400_000)
    parts = urlsplit(url)
    path = parts.path + "?" + parts.query
    bot.client.headers.update(await signed_in(bot.app.state.page_links, "o-alice", now_ms=now_ms(bot.clock)))  # the owner
    return path, (await bot.client.get(path)).text


async def test_chat_page_and_api_agree_day_by_day(bot: Bot) -> None:
    await a_week(bot)
    _, html = await page_html(bot, DAYS[0])
    page = page_counts(html)
    headers = await api(bot)
    chat = bot.chat()
    for day in DAYS:
        start = at(day.month, day.day)
        listed = await bot.client.get("/api/schedule/items", headers=headers,
                                      params={"from": start, "to": start + 86_400_000, "include_undated": "false"})
        rest = len(listed.json()["items"])
        reply = await chat.say(f"{day.month}月{day.day}日有什么安排")
        said = re.search(r"（(\d+) 项）|共 (\d+) 项", reply)
        in_chat = 0 if said is None else int(said.group(1) or said.group(2))
        assert (in_chat, rest) == (page[day], page[day]), (day, reply)
    # 6/19 is 端午 and 6/21 a Sunday of its break: 打卡 (每个工作日) starts on Monday 6/22
    assert page == {date(2026, 6, 18): 1, date(2026, 6, 19): 2, date(2026, 6, 20): 3, date(2026, 6, 21): 1,
                    date(2026, 6, 22): 3, date(2026, 6, 23): 2, date(2026, 6, 24): 2}
    assert html.count(">吃药</span>") == 7  # the daily series on every day of the page
    assert html.count(">杭州出差</span>") == 2 and "第 2/2 天" in html  # the two-day trip on both its days
    assert "共 13 项" in html  # the trip counted once


def csrf_of(html: str) -> str:
    return html.split('name="csrf" value="')[1].split('"')[0]


@pytest.mark.parametrize(("said", "first_day", "next_day", "verb"), [
    ("每天早上8点提醒我吃药", date(2026, 6, 19), date(2026, 6, 20), "complete"),
    ("每周一上午10点开周会", date(2026, 6, 22), date(2026, 6, 29), "cancel"),  # an event: 取消这一次
    ("每个工作日上午9点提醒我打卡", date(2026, 6, 22), date(2026, 6, 23), "complete"),  # 6/19 is 端午
], ids=["daily", "weekly", "workdays"])
async def test_one_tap_on_an_occurrence_leaves_the_series_and_the_next_reminder(
        bot: Bot, said: str, first_day: date, next_day: date, verb: str) -> None:
    await bot.chat().say(said)
    [series] = await bot.rows(ScheduleItemRow)
    path, html = await page_html(bot, DAYS[0], 14)
    base = path.split("?")[0]
    button = f'value="{verb}:{series.id}:{first_day.isoformat()}"'
    assert button in html
    assert f'value="{verb}:{series.id}"' not in html  # no button on a series card names the whole series
    response = await bot.client.post(base, data={"csrf": csrf_of(html), "do": f"{verb}:{series.id}:{first_day}",
                                                  "from": "2026-06-18", "to": "2026-07-01"})
    assert response.status_code == 303
    [after] = await bot.rows(ScheduleItemRow)
    assert after.status == "active"
    pending = [r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending"]
    # the series' next reminder is the next day's, exactly one: the tapped day's own is gone, nothing else ended
    assert len(pending) == 1 and at(next_day.month, next_day.day) <= pending[0] < at(next_day.month, next_day.day) \
        + 86_400_000
    shown = (await bot.client.get(response.headers["location"].split("#")[0])).text
    flash = shown.split('<p class="flash" role="status">')[1].split("</p>")[0]
    assert "这一次" in flash or "以后的照常" in flash
    undo = re.search(r'value="(undo-[a-z]+:[0-9]+:[0-9-]+)"', flash)
    assert undo is not None
    # 撤销 brings the day back with its reminder, and the series is still whole
    again = await bot.client.post(base, data={"csrf": csrf_of(shown), "do": undo.group(1)})
    assert again.status_code == 303
    [restored] = await bot.rows(ScheduleItemRow)
    assert restored.status == "active" and restored.metadata_json["skipped"] == []
    next_html = (await bot.client.get(path)).text
    assert f'id="item-{series.id}-{first_day.isoformat()}"' in next_html


async def test_a_bare_tap_on_a_series_changes_nothing_and_ending_it_is_its_own_confirmed_verb(bot: Bot) -> None:
    await bot.chat().say("每天早上8点提醒我吃药")
    [series] = await bot.rows(ScheduleItemRow)
    path, html = await page_html(bot, DAYS[0])
    base = path.split("?")[0]
    for do in (f"complete:{series.id}", f"cancel:{series.id}"):  # an old page's button, or a hand-made post
        assert (await bot.client.post(base, data={"csrf": csrf_of(html), "do": do})).status_code == 303
    [still] = await bot.rows(ScheduleItemRow)
    assert still.status == "active" and not (still.metadata_json or {}).get("skipped")
    assert f'<button class="danger" name="do" value="end:{series.id}">确认结束“吃药”整个系列' in html
    await bot.client.post(base, data={"csrf": csrf_of(html), "do": f"end:{series.id}"})
    [ended] = await bot.rows(ScheduleItemRow)
    assert ended.status == "cancelled"


async def test_a_series_card_shows_only_its_own_days_reminders(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天上午10点半提醒我吃药")
    bot.clock.advance(minutes=31)
    await bot.deliver(2)  # today's reminder went out (to the in-app queue); tomorrow's row is planned
    _, html = await page_html(bot, DAYS[0])
    [series] = await bot.rows(ScheduleItemRow)
    today = html.split(f'id="item-{series.id}-2026-06-18"')[1].split("</li>")[0]
    tomorrow = html.split(f'id="item-{series.id}-2026-06-19"')[1].split("</li>")[0]
    assert today.count('class="bell') == 1 and ("10:30 已提醒" in today or "10:30 未送达" in today)
    assert tomorrow.count('class="bell') == 1 and ">6月19日 10:30 提醒</span>" in tomorrow  # its own, still to come
    assert "已提醒" not in tomorrow and "未送达" not in tomorrow


async def test_snoozing_an_occurrence_reminds_of_that_day_once_and_plans_nothing_else(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("每天上午10点半提醒我吃药")
    bot.clock.advance(minutes=31)
    await bot.deliver(2)  # 10:30 went out; tomorrow's row is planned
    [series] = await bot.rows(ScheduleItemRow)
    path, html = await page_html(bot, DAYS[0])
    button = f"snooze:{series.id}:10m:2026-06-18"
    assert f'value="{button}"' in html
    response = await bot.client.post(path.split("?")[0], data={"csrf": csrf_of(html), "do": button})
    shown = (await bot.client.get(response.headers["location"].split("#")[0])).text
    assert "6月18日（周四）10:41 再提醒你：吃药" in shown
    snoozed = [r for r in await bot.rows(ReminderRow) if r.status == "pending" and r.remind_at == at(6, 18, 10, 41)]
    assert len(snoozed) == 1 and snoozed[0].offset_minutes == -11  # counted back to its own occurrence
    today = shown.split(f'id="item-{series.id}-2026-06-18"')[1].split("</li>")[0]
    assert "10:41 提醒" in today
    bot.clock.advance(minutes=11)
    await bot.deliver(2)
    pending = sorted(r.remind_at for r in await bot.rows(ReminderRow) if r.status == "pending")
    assert pending == [at(6, 19, 10, 30)]  # the snooze went out and planned no second reminder for tomorrow


async def test_postponing_every_overdue_task_to_today(bot: Bot) -> None:
    headers = await api(bot)
    for new in ({"kind": "task", "title": "交报销单", "due_at": at(6, 15, 18)},
                {"kind": "task", "title": "交电费", "due_at": at(6, 16), "all_day": True}):
        assert (await bot.client.post("/api/schedule/items", headers=headers, json=new)).status_code == 201
    path, html = await page_html(bot, DAYS[0])
    assert "已过期 2 项" in html
    response = await bot.client.post(path.split("?")[0], data={"csrf": csrf_of(html), "do": "postpone:0"})
    shown = (await bot.client.get(response.headers["location"].split("#")[0])).text
    assert "已把 2 项过期待办顺延到今天。" in shown and "已过期 2 项" not in shown
    due = {r.title: r.due_at for r in await bot.rows(ScheduleItemRow)}
    assert due == {"交报销单": at(6, 18, 18), "交电费": at(6, 18)}  # its own clock when still ahead; all-day stays


async def test_closing_the_calendar_subscription_in_chat_revokes_the_feed(bot: Bot) -> None:
    chat = bot.chat()
    feed = await chat.say("订阅日历")
    path = feed.split("：", 1)[1].split("\n", 1)[0].removeprefix(bot.app.state.settings.PUBLIC_BASE_URL)
    assert (await bot.client.get(path)).status_code == 200
    assert (await chat.say("关闭日历订阅")).startswith("已关闭日历订阅")
    assert (await bot.client.get(path)).status_code == 410
    again = await chat.say("订阅日历")  # a new subscription works
    fresh = again.split("：", 1)[1].split("\n", 1)[0].removeprefix(bot.app.state.settings.PUBLIC_BASE_URL)
    assert fresh != path and (await bot.client.get(fresh)).status_code == 200
