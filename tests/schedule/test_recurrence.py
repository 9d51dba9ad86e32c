"""Next-occurrence function, table-driven: end of month, 调休, lunar, DST."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from schedule.digest import next_digest_run
from schedule.domain import Lunar, Recurrence
from schedule.recurrence import first_occurrence, is_cn_workday, next_occurrence

SH = ZoneInfo("Asia/Shanghai")
NY = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")


def at(y: int, m: int, d: int, hh: int = 9, mm: int = 0, tz: ZoneInfo = SH) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=tz)


CASES = [
    # (name, recurrence, dtstart, after, expected)
    ("daily", Recurrence(rrule="FREQ=DAILY"), at(2026, 6, 1), at(2026, 6, 18, 10), at(2026, 6, 19)),
    ("daily same day still ahead", Recurrence(rrule="FREQ=DAILY"), at(2026, 6, 1), at(2026, 6, 18, 8), at(2026, 6, 18)),
    ("weekly MO", Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"), at(2026, 6, 1), at(2026, 6, 18), at(2026, 6, 22)),
    ("weekly MO,WE,FR", Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO,WE,FR"), at(2026, 6, 1), at(2026, 6, 18), at(2026, 6, 19)),
    ("monthly 15th", Recurrence(rrule="FREQ=MONTHLY;BYMONTHDAY=15"), at(2026, 1, 15), at(2026, 6, 18), at(2026, 7, 15)),
    ("每月最后一天 in February", Recurrence(rrule="FREQ=MONTHLY;BYMONTHDAY=-1"), at(2026, 1, 31), at(2026, 2, 1),
     at(2026, 2, 28)),
    ("每月最后一天 in a leap February", Recurrence(rrule="FREQ=MONTHLY;BYMONTHDAY=-1"), at(2028, 1, 31), at(2028, 2, 1),
     at(2028, 2, 29)),
    ("每月最后一天 after February", Recurrence(rrule="FREQ=MONTHLY;BYMONTHDAY=-1"), at(2026, 1, 31), at(2026, 2, 28, 10),
     at(2026, 3, 31)),
    ("yearly 12-25", Recurrence(rrule="FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=25"), at(2025, 12, 25), at(2026, 12, 25, 10),
     at(2027, 12, 25)),
    ("yearly Feb 29 skips common years", Recurrence(rrule="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"), at(2024, 2, 29),
     at(2024, 3, 1), at(2028, 2, 29)),
    ("workdays cn: 调休 Saturday 2026-02-14 is a workday", Recurrence(workdays="cn"), at(2026, 2, 2), at(2026, 2, 13, 10),
     at(2026, 2, 14)),
    ("workdays cn: Spring Festival holiday skipped", Recurrence(workdays="cn"), at(2026, 2, 2), at(2026, 2, 14, 10),
     at(2026, 2, 24)),
    ("workdays cn: 国庆 skipped", Recurrence(workdays="cn"), at(2026, 9, 1), at(2026, 9, 30, 10), at(2026, 10, 8)),
    ("workdays cn: weekend skipped", Recurrence(workdays="cn"), at(2026, 6, 1), at(2026, 6, 19, 10), at(2026, 6, 22)),
    ("workdays cn: fallback Mon–Fri in a year without data", Recurrence(workdays="cn"), at(2099, 1, 1),
     at(2099, 6, 19, 10), at(2099, 6, 22)),
    ("literal 周一到周五 ignores 调休", Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"), at(2026, 2, 2),
     at(2026, 2, 13, 10), at(2026, 2, 16)),
    ("lunar 正月初八 2027 = 2027-02-13", Recurrence(lunar=Lunar(1, 8)), at(2026, 2, 24), at(2026, 3, 1), at(2027, 2, 13)),
    ("lunar 八月十五 2026 = 2026-09-25", Recurrence(lunar=Lunar(8, 15)), at(2025, 10, 6), at(2026, 1, 1),
     at(2026, 9, 25)),
    ("weekly across US DST start keeps 09:00 local", Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"), at(2026, 3, 2, tz=NY),
     at(2026, 3, 3, tz=NY), at(2026, 3, 9, tz=NY)),
    ("weekly across EU DST end keeps 09:00 local", Recurrence(rrule="FREQ=WEEKLY;BYDAY=SU"), at(2026, 10, 18, tz=BERLIN),
     at(2026, 10, 19, tz=BERLIN), at(2026, 10, 25, tz=BERLIN)),
    ("until ends the series", Recurrence(rrule="FREQ=DAILY;UNTIL=20260620T090000"), at(2026, 6, 1), at(2026, 6, 20, 10),
     None),
]


@pytest.mark.parametrize(("name", "rule", "dtstart", "after", "expected"), CASES, ids=[c[0] for c in CASES])
def test_next_occurrence(name: str, rule: Recurrence, dtstart: datetime, after: datetime,
                         expected: datetime | None) -> None:
    tz = dtstart.tzinfo
    assert isinstance(tz, ZoneInfo)
    got = next_occurrence(rule, dtstart=dtstart, after=after, tz=tz)
    assert got == expected, f"{name}: got {got}"
    if got is not None:
        assert got.astimezone(tz).hour == dtstart.hour  # local wall time kept (DST)


def test_dst_instants_differ_by_utc_offset() -> None:
    before = next_occurrence(Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"), dtstart=at(2026, 3, 2, tz=NY),
                             after=at(2026, 3, 1, tz=NY), tz=NY)
    after = next_occurrence(Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"), dtstart=at(2026, 3, 2, tz=NY),
                            after=at(2026, 3, 3, tz=NY), tz=NY)
    assert before is not None and after is not None
    assert before.utcoffset() != after.utcoffset()


def test_first_occurrence_includes_dtstart() -> None:
    assert first_occurrence(Recurrence(rrule="FREQ=DAILY"), dtstart=at(2026, 6, 18), tz=SH) == at(2026, 6, 18)


def test_cn_workday_calendar() -> None:
    assert is_cn_workday(datetime(2026, 2, 14).date())  # 调休 Saturday
    assert not is_cn_workday(datetime(2026, 10, 1).date())  # 国庆
    assert is_cn_workday(datetime(2099, 6, 19).date())  # Friday, year without data → Mon–Fri


@pytest.mark.parametrize(("local_time", "after", "expected"), [
    ("07:00", at(2026, 6, 18, 10), at(2026, 6, 19, 7)),
    ("07:00", at(2026, 6, 18, 6, 59), at(2026, 6, 18, 7)),
    ("00:00", at(2026, 12, 31, 23, 59), at(2027, 1, 1, 0)),
])
def test_next_digest_run(local_time: str, after: datetime, expected: datetime) -> None:
    assert next_digest_run(local_time, tz=SH, after=after) == expected


def test_next_digest_run_on_workdays_skips_holiday() -> None:
    assert next_digest_run("07:00", tz=SH, after=at(2026, 9, 30, 8), workdays="cn") == at(2026, 10, 8, 7)
