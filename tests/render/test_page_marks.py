"""What a day header and a card say besides the item: 休/班 from the official calendar, 农历, the zone in words,
an overdue card's deadline, a note's links (http/https only) and a map link for a place."""

from __future__ import annotations

from datetime import UTC, date, datetime

from render.daymarks import lunar_label, off_mark, zone_label
from render.entry import title_parts
from render.itinerary import build_itinerary
from schedule.clock import to_ms
from schedule.domain import Item

AT = datetime(2026, 10, 1, 2, 0, tzinfo=UTC)


def test_rest_and_working_days_around_national_day() -> None:
    assert [off_mark(date(2026, 10, d)) for d in (1, 7, 8, 9, 10, 11)] == ["休", "休", "", "", "班", ""]
    assert off_mark(date(2026, 6, 18)) == "" and off_mark(date(2026, 6, 19)) == "休"  # 端午
    assert off_mark(date(2026, 6, 13)) == ""  # an ordinary Saturday says nothing
    assert off_mark(date(2199, 10, 1)) == ""  # a year without official data: no guess


def test_lunar_labels() -> None:
    assert lunar_label(date(2026, 6, 19)) == "农历五月初五"  # 端午
    assert lunar_label(date(2026, 2, 17)) == "农历正月"  # 春节: the first of a month names the month
    assert lunar_label(date(2026, 1, 6)) == "农历冬月十八"
    assert lunar_label(date(2026, 2, 16)) == "农历腊月廿九"
    assert lunar_label(date(2026, 6, 4)) == "农历四月十九"
    assert lunar_label(date(2025, 7, 25)) == "农历闰六月"  # 2025 has a leap sixth month
    assert lunar_label(date(2026, 6, 5)) == "农历四月二十"
    assert lunar_label(date(2026, 8, 12)) == "农历六月三十" and lunar_label(date(2026, 10, 10)) == "农历九月"


def test_zone_in_words() -> None:
    assert zone_label("Asia/Shanghai", AT) == "北京时间"
    assert zone_label("Asia/Kolkata", AT) == "UTC+5:30 时间"
    assert zone_label("America/Chicago", AT) == "UTC-5 时间"


def test_links_in_notes_are_http_only() -> None:
    parts = title_parts("会议 https://meeting.example/j/1 备用 javascript:alert(1) ftp://x.example/y")
    assert [p.href for p in parts if p.href] == ["https://meeting.example/j/1"]


def test_overdue_cards_say_when_they_were_due_and_places_link_to_a_map() -> None:
    due = to_ms(datetime(2026, 9, 28, 18, 0, tzinfo=UTC))
    late = Item(id=1, user_id=1, kind="task", title="报销单", status="active", timezone="Asia/Shanghai", due_at=due,
                location="望京 SOHO", description="发票在 https://docs.example/a")
    view = build_itinerary([], now_ms=to_ms(AT), tz="Asia/Shanghai", start_on=date(2026, 10, 1),
                           end_on=date(2026, 10, 8), overdue=[late])
    card = view.overdue[0]
    assert card.due_label == "9月29日 02:00 到期"
    assert card.map_href == "https://uri.amap.com/search?keyword=%E6%9C%9B%E4%BA%AC%20SOHO&src=schedbot&callnative=0"
    assert [p.href for p in card.note_parts if p.href] == ["https://docs.example/a"]
    assert view.zone == "北京时间" and view.days[0].off == "休" and view.days[0].lunar == "农历八月廿一"
