"""The whole truth in words (no database): a part of a day is named (上午, 15:00–16:00), what else the day holds follows
as 当天还有：…, within the byte budget; a range with nothing else keeps the old wording."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from render import outcome as o
from render.reply import reply
from schedule.clock import to_ms
from schedule.domain import Item

SH = ZoneInfo("Asia/Shanghai")
TZ = "Asia/Shanghai"


def ms(day: int, hour: int = 0, minute: int = 0) -> int:
    return to_ms(datetime(2026, 6, day, hour, minute, tzinfo=SH))


def event(title: str, start: int, item_id: int = 1) -> Item:
    return Item(id=item_id, user_id=1, kind="event", title=title, status="active", timezone=TZ, start_at=start)


def test_an_empty_part_names_the_rest_of_the_day() -> None:
    listed = o.Listed(start_ms=ms(20, 8), end_ms=ms(20, 12), tz=TZ, items=(), rest=(event("和朋友吃饭", ms(20, 18, 30)),))
    assert reply(o.Turn((listed,))) == "6月20日（周六）上午没有安排。当天还有：18:30 和朋友吃饭"


def test_parts_of_a_day_are_named_by_their_hours() -> None:
    rest = (event("跑步", ms(20, 9)),)
    words = {(0, 6): "凌晨", (12, 18): "下午", (18, 24): "晚上", (11, 14): "中午", (15, 16): "15:00–16:00"}
    for (lo, hi), name in words.items():
        end = ms(21) if hi == 24 else ms(20, hi)
        text = reply(o.Turn((o.Listed(start_ms=ms(20, lo), end_ms=end, tz=TZ, items=(), rest=rest),)))
        assert text.startswith(f"6月20日（周六）{name}没有安排。当天还有："), text


def test_the_part_is_listed_then_the_rest() -> None:
    listed = o.Listed(start_ms=ms(20, 12), end_ms=ms(20, 18), tz=TZ, items=(event("面试", ms(20, 15)),),
                      today=date(2026, 6, 18), rest=(event("跑步", ms(20, 9), 2), event("聚餐", ms(20, 19), 3)))
    assert reply(o.Turn((listed,))) == ("6月20日（周六）下午的安排（1 项）：\n📅 6月20日（周六） 后天\n· 15:00 面试\n"
                                        "当天还有：\n· 09:00 跑步\n· 19:00 聚餐")


def test_a_long_rest_is_cut_with_the_count_left() -> None:
    rest = tuple(event(f"第{i}件很长很长很长很长很长很长很长很长的事情", ms(20, 13, i), i) for i in range(60))
    text = reply(o.Turn((o.Listed(start_ms=ms(20, 8), end_ms=ms(20, 12), tz=TZ, items=(), rest=rest),)))
    assert len(text.encode("utf-8")) <= 2048
    shown = text.count("\n· ")
    assert 0 < shown < 60 and text.endswith(f"……还有 {60 - shown} 条。")


def test_the_page_summary_counts_the_rest() -> None:
    listed = o.Listed(start_ms=ms(20, 8), end_ms=ms(20, 12), tz=TZ, items=(), rest=(event("聚餐", ms(20, 19)),),
                      page_url="https://example.com/p")
    assert reply(o.Turn((listed,))) == "6月20日（周六）上午没有安排。\n当天另有 1 项其他安排。\n查看行程页：https://example.com/p"


def test_a_whole_day_without_rest_is_worded_as_before() -> None:
    assert reply(o.Turn((o.Listed(start_ms=ms(19), end_ms=ms(20), tz=TZ, items=()),))) == "6月19日（周五）没有安排。"
