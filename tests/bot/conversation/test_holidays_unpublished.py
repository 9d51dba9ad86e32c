"""A 每个工作日 series over a year whose 调休 is not published yet: made in chat in late 2026 (2027 unpublished),
its reply says so once, and it skips 2027's statutory holidays in the API (元旦 is no working day); once the
operator's schedule for 2027 is in the database, every process that refreshes follows it. Both backends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime

import pytest
from conftest import SH, Bot
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import holiday_store, holidays
from schedule.clock import from_ms, to_ms
from schedule.holidays import parse_schedules

YEAR_2027 = {"year": 2027, "holidays": ["2027-01-01..2027-01-03", "2027-02-05..2027-02-12", "2027-04-03..2027-04-05",
                                        "2027-05-01..2027-05-05", "2027-06-09", "2027-09-15", "2027-10-01..2027-10-07"],
             "workdays": ["2027-01-30", "2027-02-20"]}


@pytest.fixture(autouse=True)
def nothing_loaded() -> Iterator[None]:
    holidays.install([])
    yield
    holidays.install([])


async def days_listed(bot: Bot, start: date, end: date) -> list[date]:
    _, token, _ = await bot.app.state.service.issue_api_token("o-alice")
    answer = await bot.client.get("/api/schedule/items", headers={"Authorization": f"Bearer {token}"}, params={
        "from": to_ms(datetime(start.year, start.month, start.day, tzinfo=SH)),
        "to": to_ms(datetime(end.year, end.month, end.day, tzinfo=SH))})
    assert answer.status_code == 200, answer.text
    return [from_ms(e["due_at"]).astimezone(SH).date() for e in answer.json()["items"]]


async def test_a_working_day_series_says_once_that_next_years_days_off_are_not_published(
        bot: Bot, sessions: async_sessionmaker[AsyncSession]) -> None:
    bot.clock.set(datetime(2026, 11, 20, 10, 0, tzinfo=SH))
    chat = bot.chat()
    made = await chat.say("每个工作日上午9点提醒我打卡")
    assert "2027年的调休安排还没公布" in made, made
    assert "调休" not in await chat.say("明天有什么安排")  # said once, when it was made
    new_year = await days_listed(bot, date(2026, 12, 30), date(2027, 1, 6))
    assert new_year == [date(2026, 12, 30), date(2026, 12, 31), date(2027, 1, 4), date(2027, 1, 5)]  # 元旦 off
    assert date(2027, 2, 20) not in await days_listed(bot, date(2027, 2, 15), date(2027, 2, 22))

    async with sessions.begin() as session:  # `schedbot holidays load 2027.json`, then a process refreshes
        await holiday_store.store(session, parse_schedules(YEAR_2027), source=None, now_ms=to_ms(bot.clock.now()))
    assert await holiday_store.refresh(sessions)
    february = await days_listed(bot, date(2027, 2, 15), date(2027, 2, 22))
    assert date(2027, 2, 20) in february and date(2027, 2, 15) in february  # the 调休 Saturday is worked
    assert "调休" not in await chat.say("每个工作日下午6点提醒我写日报")  # 2027 is published now
