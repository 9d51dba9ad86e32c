"""The working-day calendar in a year without official data: the statutory holidays the law fixes (元旦, 春节
from 除夕, 清明, 劳动节, 端午, 中秋, 国庆), then what an operator loads once the State Council publishes the
year (the file format's checks), kept in the database on both backends and installed in each process."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import holiday_store, holidays
from schedule.domain import Recurrence
from schedule.holidays import HolidayFileError, is_cn_workday, parse_schedules, statutory
from schedule.recurrence import next_occurrence

SH = ZoneInfo("Asia/Shanghai")
# The State Council's 2027 schedule as an operator would type it (made up for the test: 2027 is not published)
OFFICIAL_2027 = {"year": 2027, "source": "国办发明电〔2026〕1号（测试）",
                 "holidays": ["2027-01-01..2027-01-03", "2027-02-05..2027-02-12", "2027-04-03..2027-04-05",
                              "2027-05-01..2027-05-05", "2027-06-09", "2027-09-15", "2027-10-01..2027-10-07"],
                 "workdays": ["2027-02-20", "2027-04-25", "2027-09-26", "2027-10-09"]}


@pytest.fixture(autouse=True)
def nothing_loaded() -> Iterator[None]:
    holidays.install([])
    yield
    holidays.install([])


def test_the_statutory_holidays_of_a_year_without_data_follow_the_law() -> None:
    assert not holidays.published(2027) and holidays.published(2026)
    assert sorted(statutory(2027)) == [
        date(2027, 1, 1),  # 元旦
        date(2027, 2, 5), date(2027, 2, 6), date(2027, 2, 7), date(2027, 2, 8),  # 除夕 to 初三
        date(2027, 4, 5),  # 清明
        date(2027, 5, 1), date(2027, 5, 2),  # 劳动节
        date(2027, 6, 9),  # 端午 (五月初五)
        date(2027, 9, 15),  # 中秋 (八月十五)
        date(2027, 10, 1), date(2027, 10, 2), date(2027, 10, 3)]  # 国庆
    # the same law over a published year agrees with the official data: every statutory day is a day off
    assert not any(is_cn_workday(day) for day in statutory(2026))


def test_a_working_day_series_in_a_year_without_data_skips_the_statutory_holidays() -> None:
    workdays = Recurrence(workdays="cn")
    start = datetime(2026, 12, 28, 9, tzinfo=SH)

    def after(*day: int) -> date:
        found = next_occurrence(workdays, dtstart=start, after=datetime(*day, 9, tzinfo=SH), tz=SH)
        assert found is not None
        return found.date()

    assert after(2026, 12, 31) == date(2027, 1, 4)  # 元旦 (a Friday) and the weekend are off
    assert after(2027, 2, 4) == date(2027, 2, 9)  # 除夕 Friday 2/5 to 初三 Monday 2/8 off
    assert after(2027, 9, 14) == date(2027, 9, 16)  # 中秋
    assert after(2027, 9, 30) == date(2027, 10, 4)  # 国庆 1–3 (Friday to Sunday)
    assert is_cn_workday(date(2027, 2, 20)) is False  # a Saturday: no 调休 known yet


def test_a_loaded_schedule_replaces_the_statutory_guess() -> None:
    [schedule] = parse_schedules(OFFICIAL_2027)
    assert holidays.install([schedule]) and not holidays.install([schedule])  # installing the same is no change
    assert holidays.published(2027)
    assert not is_cn_workday(date(2027, 2, 11)) and is_cn_workday(date(2027, 2, 20))  # break and 调休 Saturday
    assert not is_cn_workday(date(2027, 10, 6)) and is_cn_workday(date(2027, 10, 9))
    assert is_cn_workday(date(2027, 3, 1)) and not is_cn_workday(date(2027, 3, 6))  # plain weeks as usual


@pytest.mark.parametrize(("change", "said"), [
    ({"year": 1999}, "`year` must be a year from 2000"),
    ({"year": "2027"}, "`year` must be a year"),
    ({"holidays": []}, "`holidays` must be a list of dates"),
    ({"holidays": ["2027-13-01"]}, "not YYYY-MM-DD"),
    ({"holidays": [20270101]}, "not a date in quotes"),
    ({"holidays": [*OFFICIAL_2027["holidays"], "2026-12-31"]}, "2026-12-31 in `holidays` is not in 2027"),
    ({"holidays": ["2027-02-12..2027-02-05"]}, "must go forward"),
    ({"workdays": ["2027-02-22"]}, "2027-02-22 is a weekday"),
    ({"workdays": ["2027-02-06"]}, "2027-02-06 is both a holiday and a 调休 working day"),
    ({"holidays": ["2027-02-05..2027-02-12"]}, "the law makes 2027-01-01 a holiday"),
    ({"extra": 1}, "unknown key(s) extra"),
    ({"source": "x" * 300}, "`source` must be text"),
])
def test_a_bad_file_is_refused_naming_what_is_wrong(change: dict[str, object], said: str) -> None:
    with pytest.raises(HolidayFileError) as refused:
        parse_schedules({**OFFICIAL_2027, **change})
    assert said in str(refused.value)


def test_several_years_in_one_file_and_none_twice() -> None:
    second = {**OFFICIAL_2027, "year": 2028, "holidays": ["2028-01-01", "2028-01-25..2028-01-28", "2028-04-04",
                                                            "2028-05-01..2028-05-02", "2028-05-28", "2028-10-03",
                                                            "2028-10-01..2028-10-02"], "workdays": []}
    assert [s.year for s in parse_schedules({"years": [OFFICIAL_2027, second]})] == [2027, 2028]
    with pytest.raises(HolidayFileError, match="appears twice"):
        parse_schedules({"years": [OFFICIAL_2027, OFFICIAL_2027]})
    with pytest.raises(HolidayFileError, match="`years` must be"):
        parse_schedules({"years": []})


async def test_loaded_schedules_are_kept_in_the_database_and_installed_in_each_process(
        sessions: async_sessionmaker[AsyncSession]) -> None:
    [schedule] = parse_schedules(OFFICIAL_2027)
    async with sessions.begin() as session:
        await holiday_store.store(session, [schedule], source="test", now_ms=1)
    assert not holidays.published(2027)  # another process's load: this one reads it on its next refresh
    assert await holiday_store.refresh(sessions)
    assert holidays.published(2027) and is_cn_workday(date(2027, 2, 20))
    again = parse_schedules({**OFFICIAL_2027, "workdays": []})
    async with sessions.begin() as session:  # loading a year again replaces it
        await holiday_store.store(session, again, source="test", now_ms=2)
    assert await holiday_store.refresh(sessions) and not is_cn_workday(date(2027, 2, 20))
    assert not await holiday_store.refresh(sessions)  # nothing new
