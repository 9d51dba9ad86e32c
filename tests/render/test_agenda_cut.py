"""A chat listing cut by the expansion budget never states a count lower than the truth: 至少 N 项."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from render.agenda import listing, summary
from render.outcome import Listed
from schedule.clock import to_ms
from schedule.domain import Item

SH = ZoneInfo("Asia/Shanghai")
START = to_ms(datetime(2026, 6, 18, tzinfo=SH))


def listed(count: int, *, complete: bool) -> Listed:
    items = tuple(Item(id=i + 1, user_id=1, kind="task", title=f"喝水{i}", status="active",
                       timezone="Asia/Shanghai", due_at=START + 9 * 3_600_000 + i * 60_000) for i in range(count))
    return Listed(start_ms=START, end_ms=START + 7 * 86_400_000, tz="Asia/Shanghai", items=items,
                  today=date(2026, 6, 18), complete=complete)


@pytest.mark.parametrize("render", [summary, lambda x: listing(x, budget=2000)])
def test_a_cut_listing_says_at_least(render: object) -> None:
    assert callable(render)
    cut, whole = render(listed(12, complete=False)), render(listed(12, complete=True))
    assert "至少 12 项" in cut and "共 12 项" not in cut
    assert "至少" not in whole and "12 项" in whole
