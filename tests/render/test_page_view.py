"""Itinerary view model with a frozen `now`: day grouping, states around midnight in two timezones, summary."""

from __future__ import annotations

from datetime import date

from page_samples import SH, at, event, reminder, task

from render.itinerary import Notice, build_itinerary, range_label, summary

NY = "America/New_York"


def test_states_around_midnight_in_shanghai() -> None:
    now = at(2026, 6, 18, 23, 30)
    items = [
        task(1, "交材料", at(2026, 6, 18, 23, 0)),
        event(2, "早班机", at(2026, 6, 19, 0, 30)),
        event(3, "复盘会", at(2026, 6, 21, 9, 0), at(2026, 6, 21, 10, 0)),
    ]
    view = build_itinerary(items, now_ms=now, tz=SH, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25))
    by_id = {e.item_id: (day.on, e) for day in view.days for e in day.entries}
    assert by_id[1][0] == date(2026, 6, 18) and by_id[1][1].states[0] == "已过期" and by_id[1][1].tone == "overdue"
    assert by_id[2][0] == date(2026, 6, 19) and by_id[2][1].states == () and by_id[2][1].tone == "upcoming"
    assert by_id[3][1].states == () and by_id[3][1].time == "09:00–10:00"  # no 即将到来 / 明天 noise on cards
    assert [d.relative for d in view.days[:3]] == ["今天", "明天", ""]
    assert view.title == "我的行程 · 6月18日–6月24日"


def test_the_same_instants_in_new_york_fall_on_other_days() -> None:
    now = at(2026, 6, 18, 23, 30)  # 11:30 in New York, the same day there
    items = [task(1, "交材料", at(2026, 6, 18, 23, 0), tz=NY), event(2, "早班机", at(2026, 6, 19, 0, 30), tz=NY)]
    view = build_itinerary(items, now_ms=now, tz=NY, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25))
    today = view.days[0]
    assert today.is_today and today.on == date(2026, 6, 18)
    entries = {e.item_id: e for e in today.entries}
    assert entries[1].states[0] == "已过期" and entries[1].time == "截止 11:00"
    assert entries[2].states == () and entries[2].tone == "today" and entries[2].time == "12:30"


def test_kinds_and_reminder_states() -> None:
    now = at(2026, 6, 18, 10, 0)
    due = at(2026, 6, 19, 9, 0)
    items = [
        task(1, "带材料", due, reminders=(reminder(11, 1, due),)),
        event(2, "会议", at(2026, 6, 18, 15, 0), reminders=(reminder(12, 2, at(2026, 6, 18, 14, 0), offset=60),)),
        event(3, "取护照", at(2026, 6, 20, 10, 0)),
        event(4, "周会", at(2026, 6, 18, 8, 0), reminders=(reminder(13, 4, at(2026, 6, 18, 7, 0), status="sent"),)),
        event(5, "面试", at(2026, 6, 22, 8, 0), reminders=(reminder(14, 5, at(2026, 6, 22, 7, 0), status="locked"),)),
        task(6, "买票", at(2026, 6, 19, 18, 0), status="completed"),
    ]
    view = build_itinerary(items, now_ms=now, tz=SH, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25),
                           undelivered={14})
    e = {x.item_id: x for x in view.entries()}
    assert (e[1].kind, e[1].mark, e[1].time) == ("reminder", "提醒", "09:00")
    assert (e[2].kind, e[2].mark) == ("event", "日程") and e[2].reminders[0].time == "14:00"
    assert e[2].reminders[0].state == "待提醒" and e[2].reminders[0].open
    assert e[3].states == () and e[3].reminders == ()  # no 无提醒 chip
    # a past event is simply past: not 已过期, nothing to snooze; its reminder says it went out
    assert e[4].states == () and e[4].tone == "past" and not e[4].can_snooze and not e[4].can_cancel
    assert e[4].reminders[0].state == "已提醒"
    assert "未送达" in e[5].states and e[5].reminders[0].time == "6月22日 07:00"
    assert e[6].states[0] == "已完成" and e[6].done and not e[6].can_complete
    assert e[1].can_complete and not e[2].can_complete and e[2].can_cancel


def test_all_day_and_multi_day_placement_and_order() -> None:
    now = at(2026, 6, 18, 10, 0)
    items = [
        event(1, "下午会", at(2026, 6, 18, 15, 0)),
        task(2, "交报告", at(2026, 6, 18), all_day=True, local_date="2026-06-18"),
        event(3, "出差", at(2026, 6, 16, 9, 0), at(2026, 6, 19, 18, 0)),
    ]
    view = build_itinerary(items, now_ms=now, tz=SH, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25))
    today = view.days[0]
    assert [e.item_id for e in today.entries] == [2, 3, 1]  # all-day first, then by time
    assert today.entries[0].time == "全天" and today.entries[0].states == ()
    assert today.entries[1].time == "09:00–6月19日 18:00" and today.entries[1].day_note == "第 3/4 天"
    tomorrow = view.days[1]
    assert [(e.item_id, e.day_note, e.again) for e in tomorrow.entries] == [(3, "第 4/4 天", True)]
    assert all(3 not in [e.item_id for e in d.entries] for d in view.days[2:])
    assert view.count == 3  # the trip once, though it is on two days of the page


def test_a_two_day_all_day_event_is_on_both_days() -> None:
    now = at(2026, 6, 18, 10, 0)
    trip = event(1, "去杭州", at(2026, 6, 20), at(2026, 6, 22), all_day=True, local_date="2026-06-20")
    view = build_itinerary([trip], now_ms=now, tz=SH, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25))
    on = {d.on: [(e.day_note, e.again) for e in d.entries] for d in view.days if d.entries}
    assert on == {date(2026, 6, 20): [("第 1/2 天", False)], date(2026, 6, 21): [("第 2/2 天", True)]}


def test_summary_is_two_short_lines() -> None:
    now = at(2026, 6, 18, 10, 0)
    items = [event(1, "会议", at(2026, 6, 18, 15, 0)), task(2, "交材料", at(2026, 6, 19, 18, 0)),
             task(3, "带材料", at(2026, 6, 20, 9, 0), reminders=(reminder(9, 3, at(2026, 6, 20, 9, 0)),))]
    overdue = [task(4, "报销", at(2026, 6, 10, 18, 0))]
    view = build_itinerary(items, now_ms=now, tz=SH, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25),
                           overdue=overdue)
    lines = summary(view).split("\n")
    assert lines == ["6月18日–6月24日，共 3 项（待办 1，日程 1，提醒 1）。",
                     "已过期 1 项，今天 1 项，下一项：今天 15:00 会议。"]


def test_empty_view_and_notices() -> None:
    now = at(2026, 6, 18, 10, 0)
    view = build_itinerary([], now_ms=now, tz=SH, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25))
    assert view.empty and len(view.days) == 7 and summary(view) == "6月18日–6月24日没有安排。\n接下来没有待办。"
    noticed = build_itinerary([], now_ms=now, tz=SH, start_on=date(2026, 6, 18), end_on=date(2026, 6, 25),
                              notices=[Notice("⏰ 提醒：会议", expired=True)])
    assert not noticed.empty and noticed.notices[0].expired


def test_long_ranges_list_only_days_with_entries_and_labels_carry_the_year() -> None:
    now = at(2026, 6, 18, 10, 0)
    view = build_itinerary([event(1, "体检", at(2026, 8, 3, 9, 0))], now_ms=now, tz=SH,
                           start_on=date(2026, 6, 18), end_on=date(2026, 9, 1))
    assert [d.on for d in view.days] == [date(2026, 8, 3)]
    assert range_label(date(2026, 12, 28), date(2027, 1, 4), date(2026, 6, 18)) == "2026年12月28日–2027年1月3日"
    assert range_label(date(2026, 12, 1), date(2026, 12, 8), date(2026, 6, 18)) == "12月1日–12月7日"
    assert range_label(date(2026, 6, 19), date(2026, 6, 20), date(2026, 6, 18)) == "6月19日"
