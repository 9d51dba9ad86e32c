"""The official Chinese working-day calendar, for every year (pure: what was loaded is handed in).

Three sources, best first:
1. a year's official schedule as the State Council published it, loaded by the operator
   (`schedbot holidays load FILE`, kept in the `holiday_years` table and installed here by `install`);
2. the chinese-calendar library's data (it knows the years up to its release);
3. for any other year, the statutory holidays alone, which the law fixes (《全国年节及纪念日放假办法》 as revised
   in 2024, in force from 2025): 元旦 1/1; 春节 4 days, 除夕 to 正月初三; 清明 on the 清明 solar term; 劳动节
   5/1–5/2; 端午 on 五月初五; 中秋 on 八月十五; 国庆 10/1–10/3. The weekend days given back for a holiday on a
   weekend and the 调休 Saturdays are only known once published: until then weekends are days off and
   weekdays other than those holidays are working days.

`published(year)` says whether a year's 调休 is known (sources 1 and 2).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from lunardate import LunarDate

FIRST_YEAR, LAST_YEAR = 1901, 2099  # what the lunar conversion and the solar-term formula cover


@dataclass(frozen=True, slots=True)
class YearSchedule:
    """One year's official schedule: the days off (holidays with the weekend days moved into them) and the
    调休 working days (weekend days worked)."""

    year: int
    holidays: frozenset[date]
    workdays: frozenset[date]


_lock = threading.Lock()
_loaded: dict[int, YearSchedule] = {}
_version = 0


def install(schedules: Iterable[YearSchedule]) -> bool:
    """Use these loaded schedules from now on (replacing what was installed); True when anything changed."""
    global _loaded, _version
    fresh = {s.year: s for s in schedules}
    with _lock:
        if fresh == _loaded:
            return False
        _loaded = fresh
        _version += 1
    return True


def loaded() -> Mapping[int, YearSchedule]:
    return dict(_loaded)


def version() -> int:
    """Grows whenever the installed schedules change (a cache of anything computed from the calendar keys on it)."""
    return _version


def is_cn_workday(day: date) -> bool:
    """Official Chinese working day (调休 Saturdays count, holidays don't), from the best source for its year."""
    schedule = _loaded.get(day.year)
    if schedule is not None:
        return day in schedule.workdays or (day.weekday() < 5 and day not in schedule.holidays)
    if library_knows(day.year):  # no exception raised and caught per day of an unknown year
        import chinese_calendar

        return bool(chinese_calendar.is_workday(day))
    return day.weekday() < 5 and day not in statutory(day.year)


def published(year: int) -> bool:
    """Whether that year's 调休 is known (loaded, or in the library); else only its statutory holidays are."""
    return year in _loaded or library_knows(year)


@lru_cache(maxsize=256)
def library_knows(year: int) -> bool:
    """Whether chinese-calendar has that year's official holidays and 调休 days."""
    import chinese_calendar

    try:
        chinese_calendar.is_workday(date(year, 6, 1))
    except NotImplementedError:
        return False
    return True


@lru_cache(maxsize=256)
def statutory(year: int) -> frozenset[date]:
    """The days off the law gives every citizen in that year (none outside FIRST_YEAR..LAST_YEAR)."""
    if not FIRST_YEAR <= year <= LAST_YEAR:
        return frozenset()
    import chinese_calendar

    days = {date(year, 1, 1), date(year, 5, 1), date(year, 5, 2), date(year, 10, 1), date(year, 10, 2),
            date(year, 10, 3)}
    days |= {day for day, name in chinese_calendar.get_solar_terms(date(year, 4, 1), date(year, 4, 10))
             if name == "清明"}
    for lunar_year in (year - 1, year):
        new_year = _lunar(lunar_year, 1, 1)
        if new_year is not None:
            days |= {new_year + timedelta(days=n) for n in range(-1, 3)}  # 除夕 to 初三
        days |= {d for d in (_lunar(lunar_year, 5, 5), _lunar(lunar_year, 8, 15)) if d is not None}
    return frozenset(d for d in days if d.year == year)


def _lunar(year: int, month: int, day: int) -> date | None:
    try:
        return LunarDate(year, month, day).to_solar_date()  # type: ignore[no-any-return]
    except ValueError:
        return None


def unpublished_years(first: date, last: date) -> list[int]:
    """The years from `first` to `last` whose 调休 is not known yet."""
    return [year for year in range(first.year, min(last.year, LAST_YEAR) + 1) if not published(year)]


class HolidayFileError(ValueError):
    """A holiday schedule file that cannot be loaded: the message names the year and the offending value."""


MAX_FILE_BYTES = 64_000
_KEYS = {"year", "holidays", "workdays", "source"}


def parse_schedules(data: object) -> list[YearSchedule]:
    """The year schedules of a decoded file (JSON or TOML): one year's table, or `years`, a list of them.

    A year's table: `year` (2000–2099), `holidays` (every day off of the year's holidays, weekend days inside a
    break included), `workdays` (the 调休 weekend days worked, may be empty), `source` (optional text, e.g. the
    notice's number). A day is "YYYY-MM-DD", or a run "YYYY-MM-DD..YYYY-MM-DD". Every day lies in its year;
    a 调休 working day is a Saturday or a Sunday; no day is both; every statutory holiday of the year is a day
    off. HolidayFileError names what is wrong."""
    if isinstance(data, dict) and "years" in data:
        if set(data) - {"years"} or not isinstance(data["years"], list) or not data["years"]:
            raise HolidayFileError("`years` must be the only key, a non-empty list of year tables")
        tables: list[object] = data["years"]
    else:
        tables = [data]
    found: list[YearSchedule] = []
    for table in tables:
        schedule = _year_table(table)
        if any(s.year == schedule.year for s in found):
            raise HolidayFileError(f"year {schedule.year} appears twice")
        found.append(schedule)
    return found


def _year_table(table: object) -> YearSchedule:
    if not isinstance(table, dict):
        raise HolidayFileError("a year must be a table with year, holidays and workdays")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise HolidayFileError(f"unknown key(s) {', '.join(map(str, unknown))} (allowed: {', '.join(sorted(_KEYS))})")
    year = table.get("year")
    if not isinstance(year, int) or isinstance(year, bool) or not 2000 <= year <= LAST_YEAR:
        raise HolidayFileError(f"`year` must be a year from 2000 to {LAST_YEAR} (got {str(year)[:20]!r})")
    source = table.get("source")
    if source is not None and (not isinstance(source, str) or len(source) > 200):
        raise HolidayFileError(f"{year}: `source` must be text of at most 200 characters")
    off = _days(table, "holidays", year, required=True)
    worked = _days(table, "workdays", year, required=False)
    both = sorted(off & worked)
    if both:
        raise HolidayFileError(f"{year}: {both[0].isoformat()} is both a holiday and a 调休 working day")
    weekday = sorted(d for d in worked if d.weekday() < 5)
    if weekday:
        raise HolidayFileError(f"{year}: {weekday[0].isoformat()} is a weekday; a 调休 working day is a weekend day")
    missing = sorted(d for d in statutory(year) if d not in off and (d.weekday() < 5 or d in worked))
    if missing:
        raise HolidayFileError(f"{year}: the law makes {missing[0].isoformat()} a holiday, but the file does not "
                               "give it off (a wrong year, or a day left out?)")
    return YearSchedule(year, frozenset(off), frozenset(worked))


def _days(table: dict[str, object], key: str, year: int, *, required: bool) -> set[date]:
    raw = table.get(key, None if required else [])
    if not isinstance(raw, list) or (required and not raw):
        raise HolidayFileError(f"{year}: `{key}` must be a list of dates (YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD)"
                               + (", not empty" if required else ""))
    found: set[date] = set()
    for value in raw:
        if not isinstance(value, str):
            raise HolidayFileError(f"{year}: `{key}` holds {str(value)[:30]!r}, not a date in quotes")
        first_text, _, last_text = value.strip().partition("..")
        try:
            first = date.fromisoformat(first_text.strip())
            last = date.fromisoformat(last_text.strip()) if last_text else first
        except ValueError:
            raise HolidayFileError(f"{year}: `{key}` holds {value[:30]!r}, not YYYY-MM-DD") from None
        if last < first or (last - first).days > 31:
            raise HolidayFileError(f"{year}: `{key}` run {value[:30]!r} must go forward and span at most a month")
        for n in range((last - first).days + 1):
            day = first + timedelta(days=n)
            if day.year != year:
                raise HolidayFileError(f"{year}: {day.isoformat()} in `{key}` is not in {year} (it belongs in "
                                       f"{day.year}'s file)")
            found.add(day)
    return found
