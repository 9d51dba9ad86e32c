"""`extract` keeps its last results: the same text, instant and zone give the same mentions without a scan,
and nothing a caller does to a returned list reaches the next caller."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

import intent.timex as timex

SHANGHAI = ZoneInfo("Asia/Shanghai")


def test_the_same_question_is_answered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[str] = []
    real = timex.scan
    monkeypatch.setattr(timex, "scan", lambda norm, ctx: scans.append(norm) or real(norm, ctx))
    now = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
    text = "把明天下午三点的会取消"
    first = timex.extract(text, now=now, tz=SHANGHAI)
    again = timex.extract(text, now=now.astimezone(SHANGHAI), tz=SHANGHAI)  # the same instant, as the parse has it
    assert again == first and first[0].start == datetime(2026, 12, 3, 15, tzinfo=SHANGHAI)
    assert len(scans) == 1
    first.clear()
    assert timex.extract(text, now=now, tz=SHANGHAI) == again


def test_another_instant_zone_or_text_is_worked_out_afresh() -> None:
    now = datetime(2026, 12, 2, 15, 30, tzinfo=UTC)  # 23:30 in Shanghai, 07:30 in Los Angeles
    text = "明天下午三点开会"
    here = timex.extract(text, now=now, tz=SHANGHAI)[0].start
    later = timex.extract(text, now=datetime(2026, 12, 2, 16, 30, tzinfo=UTC), tz=SHANGHAI)[0].start
    there = timex.extract(text, now=now, tz=ZoneInfo("America/Los_Angeles"))[0].start
    other = timex.extract("后天下午三点开会", now=now, tz=SHANGHAI)[0].start
    assert (here.day, later.day, there.day, other.day) == (3, 4, 3, 4)
    assert there.utcoffset() != here.utcoffset()


def test_the_memory_stays_small() -> None:
    now = datetime(2026, 12, 2, 1, tzinfo=UTC)
    for minute in range(200):
        timex.extract(f"{minute % 60}分钟后提醒我", now=now.replace(minute=minute % 60, second=minute // 60), tz=SHANGHAI)
    assert len(timex._RECENT) <= timex._RECENT_MAX
