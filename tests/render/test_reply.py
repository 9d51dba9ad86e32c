"""Reply wording from outcomes (no database): the product's phrasings and the 2048-byte cut."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from zoneinfo import ZoneInfo

from render import outcome as o
from render.reply import reply
from render.wording import lead_label, recurrence_label
from schedule.clock import to_ms
from schedule.domain import Item, Recurrence, Reminder

SH = ZoneInfo("Asia/Shanghai")


def ms(month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return to_ms(datetime(2026, month, day, hour, minute, tzinfo=SH))


def event(title: str, start: int, *, reminder_at: int | None = None, offset: int | None = None, item_id: int = 1,
          recurrence: Recurrence | None = None) -> Item:
    reminders = (Reminder(id=item_id, item_id=item_id, remind_at=reminder_at, offset_minutes=offset, channel="wechat",
                          status="pending"),) if reminder_at is not None else ()
    return Item(id=item_id, user_id=1, kind="event", title=title, status="active", timezone="Asia/Shanghai",
                start_at=start, reminders=reminders, recurrence=recurrence)


def test_meeting_reply_is_the_spec_sentence() -> None:
    item = event("会议", ms(6, 19, 15), reminder_at=ms(6, 19, 14), offset=60)
    assert reply(o.Turn((o.Created(item),))) == \
        "已记录：6月19日（周五）15:00 会议。我会提前 1 小时，也就是 14:00 提醒你。"


def test_other_events_get_the_lead_hint() -> None:
    item = event("去取护照", ms(6, 19, 10))
    assert reply(o.Turn((o.Created(item, hint_lead=True),))) == \
        "已记录：6月19日（周五）10:00 去取护照。需要我提前提醒的话，可以告诉我提前多久。"


def test_recurring_item_names_its_rule_and_first_day() -> None:
    item = event("周会", ms(6, 22, 10), reminder_at=ms(6, 22, 9, 45), offset=15,
                 recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"))
    assert reply(o.Turn((o.Created(item),))) == \
        "已记录：每周一10:00 周会，首次是6月22日（周一）。我会提前 15 分钟，也就是 09:45 提醒你。"


def test_long_list_is_cut_with_the_count_left() -> None:
    items = tuple(event(f"第{i}件很长很长很长很长很长很长很长的事情", ms(6, 18 + i // 12, 8 + i % 12), item_id=i)
                  for i in range(72))
    listed = o.Listed(start_ms=ms(6, 18), end_ms=ms(6, 25), tz="Asia/Shanghai", items=items, today=date(2026, 6, 18))
    text = reply(o.Turn((listed,), notices=("⏰ 提醒：6月17日（周三）20:00 给妈妈打电话。",), expired=1))
    assert len(text.encode("utf-8")) <= 2048
    assert text.startswith("你有 1 条未送达的提醒：")
    shown = text.count("\n· ") - 1  # minus the notice line
    assert text.rstrip("。").endswith(f"……还有 {72 - shown} 条，说“用页面展示”看全部")


def test_empty_range_says_no_plans() -> None:
    listed = o.Listed(start_ms=ms(6, 19), end_ms=ms(6, 20), tz="Asia/Shanghai", items=(), kind="event")
    assert reply(o.Turn((listed,))) == "6月19日（周五）没有日程。"


def test_phrases() -> None:
    assert [lead_label(m) for m in (15, 60, 90, 1440)] == ["15 分钟", "1 小时", "1 小时 30 分钟", "1 天"]
    assert recurrence_label(Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO,WE")) == "每周一、三"
    assert recurrence_label(Recurrence(rrule="FREQ=MONTHLY;BYMONTHDAY=-1")) == "每月最后一天"
    assert recurrence_label(Recurrence(rrule="FREQ=DAILY", workdays="cn")) == "每个工作日"


def test_several_changed_at_once_are_listed_with_what_became_of_their_reminders() -> None:
    meeting = event("开会", ms(6, 19, 9), reminder_at=ms(6, 19, 8), offset=60, item_id=1)
    bank = event("去银行", ms(6, 19, 15), item_id=2)
    weekly = event("周会", ms(6, 22, 10), item_id=3, recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO"))
    changes = (o.Changed("cancel", meeting, before=meeting), o.Changed("cancel", bank, before=bank),
               o.Changed("cancel", weekly, before=weekly, occurrence_on="2026-06-22"))
    assert reply(o.Turn((o.ChangedAll("cancel", changes, skipped=1),))) == (
        "已取消 3 条：\n1. 6月19日（周五）09:00 开会\n2. 6月19日（周五）15:00 去银行\n"
        "3. 6月22日（周一）10:00 周会（只取消6月22日（周一）这一次，以后的照常）\n相关提醒也一并取消了。\n"
        "另有 1 条没改成（可能刚被改过或已删除），发“看看日程”可以核对。")
    done = (o.Changed("complete", bank, before=bank),)
    assert reply(o.Turn((o.ChangedAll("complete", done),))) == "好的，已完成 1 条：\n1. 6月19日（周五）15:00 去银行"


def test_a_place_is_said_when_recorded_and_listed() -> None:
    item = replace(event("面试", ms(6, 20, 9, 30), reminder_at=ms(6, 20, 7, 30), offset=120), location="望京SOHO")
    assert reply(o.Turn((o.Created(item),))) == \
        "已记录：6月20日（周六）09:30 面试，地点：望京SOHO。我会提前 2 小时，也就是 07:30 提醒你。"
    listed = o.Listed(start_ms=ms(6, 20), end_ms=ms(6, 21), tz="Asia/Shanghai", items=(item,), today=date(2026, 6, 18))
    assert "· 09:30 面试（望京SOHO） ⏰07:30" in reply(o.Turn((listed,)))


def test_a_reminder_on_another_day_shows_that_day_in_the_list() -> None:
    review = event("项目评审", ms(6, 24, 9), reminder_at=ms(6, 23, 9), offset=1440, item_id=1)
    trip = event("出差", ms(6, 26, 8), reminder_at=ms(6, 23, 20), offset=3600, item_id=2)
    listed = o.Listed(start_ms=ms(6, 22), end_ms=ms(6, 29), tz="Asia/Shanghai", items=(review, trip),
                      today=date(2026, 6, 18))
    text = reply(o.Turn((listed,)))
    assert "· 09:00 项目评审 ⏰前一天09:00" in text and "· 08:00 出差 ⏰6月23日20:00" in text


def test_an_all_day_event_over_several_days_names_its_last_day() -> None:
    """下周二到周四出差: the reply said only 周二; the stored end (the next day's 00:00) is not the last day."""
    trip = replace(event("出差去上海", ms(6, 23)), all_day=True, end_at=ms(6, 26))
    assert reply(o.Turn((o.Created(trip),))) == "已记录：6月23日（周二） 至 6月25日（周四）出差去上海。"
    one_day = replace(event("出差", ms(6, 23)), all_day=True, end_at=ms(6, 24))
    assert reply(o.Turn((o.Created(one_day),))) == "已记录：6月23日（周二）出差。"
