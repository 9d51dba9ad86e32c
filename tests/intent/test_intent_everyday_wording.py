"""Wordings people use that the rules were not first written for, each with the same meaning said another way
beside it: the two must read alike. (NOW is Thursday 2026-06-18 10:00 in Shanghai.)"""

from __future__ import annotations

import pytest
from intent_helpers import NOW, TZ, at

from intent import parse_all
from intent.model import CreateIntent, Intent, UpdateIntent


def one(text: str) -> Intent:
    [intent] = parse_all(text, now=NOW, tz=TZ)
    return intent


def created(text: str) -> CreateIntent:
    intent = one(text)
    assert isinstance(intent, CreateIntent) and not intent.needs_clarification, intent
    return intent


@pytest.mark.parametrize(("text", "said", "hour", "minute"), [
    ("这周五下班后去吃火锅，大概六点", "这周五晚上去吃火锅，大概六点", 18, 0),
    ("周五放学后带孩子去游泳，七点", "周五晚上带孩子去游泳，七点", 19, 0),
    ("这周五下班以后六点半去吃饭", "这周五晚上六点半去吃饭", 18, 30),
    ("这周五吃完晚饭八点散步", "这周五晚上八点散步", 20, 0),
])
def test_after_work_or_school_a_bare_hour_is_the_evenings(text: str, said: str, hour: int, minute: int) -> None:
    """下班后 / 放学后 / 晚饭 put the hour in the evening, as 晚上 does (a bare 6 on another day is otherwise 06:00)."""
    assert created(text).start_at == created(said).start_at == at(2026, 6, 19, hour, minute)


@pytest.mark.parametrize("text", ["这周五六点起床", "这周五上午下班后九点开会"])
def test_without_an_evening_word_or_with_a_morning_one_the_hour_stays_in_the_morning(text: str) -> None:
    assert created(text).start_at.hour in (6, 9)  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "said"), [
    ("每天早八晚八吃药", "每天早上八点和晚上八点吃药"),
    ("每天早8晚8提醒我吃药", "每天早上8点、晚上8点提醒我吃药"),
    ("每天早八晚八点吃药", "每天早上八点 晚上八点吃药"),
])
def test_morning_and_evening_hours_said_the_short_way_are_a_twice_daily_course(text: str, said: str) -> None:
    short, long = created(text), created(said)
    assert short.title == long.title == "吃药"
    assert short.recurrence is not None and long.recurrence is not None
    assert short.recurrence.rrule == long.recurrence.rrule == "FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0"


@pytest.mark.parametrize("text", ["早两天晚一点都行", "早一点晚一点都可以"])
def test_early_and_late_with_a_unit_are_no_clock(text: str) -> None:
    intent = one(text)
    assert not (isinstance(intent, CreateIntent) and intent.recurrence is not None)


@pytest.mark.parametrize(("text", "title", "place", "day"), [
    ("地点三楼会议室 明天下午三点开会", "开会", "三楼会议室", 19),
    ("地址人民路8号 周六上午十点体检", "体检", "人民路8号", 20),
    ("明天下午三点开会 地点三楼会议室", "开会", "三楼会议室", 19),
])
def test_a_place_said_first_then_a_request_is_a_new_item_at_that_place(text: str, title: str, place: str,
                                                                       day: int) -> None:
    item = created(text)
    assert (item.title, item.location, item.start_at.date().day) == (title, place, day)  # type: ignore[union-attr]


def test_a_place_with_only_a_time_after_it_is_still_a_follow_up() -> None:
    assert isinstance(one("地点在国贸 明天下午三点"), UpdateIntent)


@pytest.mark.parametrize("text", ["周六上午十点去人民路8号体检", "地址:人民路8号,周六上午十点体检"])
def test_a_house_number_is_not_a_day_of_the_month(text: str) -> None:
    assert created(text).start_at == at(2026, 6, 20, 10, 0)  # Saturday, not the 8th


@pytest.mark.parametrize("text", ["明天三点开会地点待定", "明天下午三点开会,地点待定", "明天下午三点开会 地址还不知道",
                                  "明天下午三点开会 会议室另行通知"])
def test_a_place_not_known_yet_is_neither_a_place_nor_part_of_the_title(text: str) -> None:
    item = created(text)
    assert (item.title, item.location, item.start_at) == ("开会", None, at(2026, 6, 19, 15, 0))


@pytest.mark.parametrize("text", ["把会议推后一小时", "会议推后一个小时", "把会议推迟一小时", "会议往后推一个小时"])
def test_pushed_back_by_an_hour_moves_the_item_by_an_hour(text: str) -> None:
    intent = one(text)
    assert isinstance(intent, UpdateIntent) and intent.changes is not None
    assert intent.changes.shift_minutes == 60 and intent.target_text == "会议"


@pytest.mark.parametrize("text", ["后三天有什么安排", "看看后两天的安排"])
def test_the_next_days_are_still_a_range(text: str) -> None:
    intent = one(text)
    assert intent.range_start is not None and intent.range_start.date().day == 19  # type: ignore[attr-defined]


@pytest.mark.parametrize(("text", "said", "hour", "minute"), [
    ("明天中午一起吃饭,12点半", "明天中午12点半一起吃饭", 12, 30),
    ("明天中午跟老同学吃饭 十二点半", "明天中午十二点半跟老同学吃饭", 12, 30),
    ("明天中午吃饭 一点", "明天中午一点吃饭", 13, 0),
])
def test_a_clock_said_after_noon_says_which_minute_of_noon(text: str, said: str, hour: int, minute: int) -> None:
    """中午 alone is 12:00; a noon clock said later in the message is the same item's time, not a second item."""
    [later] = parse_all(text, now=NOW, tz=TZ)
    [first] = parse_all(said, now=NOW, tz=TZ)
    assert isinstance(later, CreateIntent) and isinstance(first, CreateIntent)
    assert later.start_at == first.start_at == at(2026, 6, 19, hour, minute)
    assert later.title == first.title


def test_noon_then_another_time_with_its_own_words_is_two_items() -> None:
    meal, film = parse_all("明天中午吃饭,晚上八点看电影", now=NOW, tz=TZ)
    assert isinstance(meal, CreateIntent) and isinstance(film, CreateIntent)
    assert (meal.title, meal.start_at, film.title, film.start_at) == (
        "吃饭", at(2026, 6, 19, 12, 0), "看电影", at(2026, 6, 19, 20, 0))


@pytest.mark.parametrize(("text", "said"), [
    ("后天中午跟老同学吃饭 十二点半 在万达", "后天中午十二点半在万达跟老同学吃饭"),
    ("后天晚上跟老同学吃饭 七点 在万达", "后天晚上七点在万达跟老同学吃饭"),
    ("明天下午三点开会,在三楼大会议室", "明天下午三点开会 地点三楼大会议室"),
])
def test_a_last_clause_saying_where_is_the_place(text: str, said: str) -> None:
    last, first = created(text), created(said)
    assert (last.title, last.location, last.start_at) == (first.title, first.location, first.start_at)
    assert last.location is not None and last.location not in (last.title or "")


@pytest.mark.parametrize(("text", "said", "rrule", "first"), [
    ("晚上九点提醒我吃药,以后每天都这样", "每天晚上九点提醒我吃药", "FREQ=DAILY", at(2026, 6, 18, 21, 0)),
    ("晚上九点提醒我吃药 以后天天如此", "每天晚上九点提醒我吃药", "FREQ=DAILY", at(2026, 6, 18, 21, 0)),
    ("晚上九点提醒我吃药,每天都要", "每天晚上九点提醒我吃药", "FREQ=DAILY", at(2026, 6, 18, 21, 0)),
    ("明天上午九点开会,以后每周都这样", "每周五上午九点开会", "FREQ=WEEKLY;BYDAY=FR", at(2026, 6, 19, 9, 0)),
])
def test_a_repeat_said_after_the_request_makes_it_a_series(text: str, said: str, rrule: str,
                                                            first: object) -> None:
    """以后每天都这样 / 每天都要 after a request: the same series as 每天… said first, starting at the time said
    (tonight's 21:00 is still ahead), with no words of the repeat in the title."""
    after, before = created(text), created(said)
    assert after.recurrence is not None and before.recurrence is not None
    assert (after.title, after.start_at or after.due_at) == (before.title, first)
    assert (before.start_at or before.due_at) == first
    assert after.recurrence.rrule == before.recurrence.rrule == rrule


@pytest.mark.parametrize("text", ["今天晚上要加班到十点 九点半提醒我订车", "今晚加班到十点,九点半提醒我订车",
                                  "今天晚上要加班到十点,九点半提醒我订个车"])
@pytest.mark.parametrize("hour", [8, 10])
def test_busy_until_a_time_is_the_context_of_the_reminder_after_it(text: str, hour: int) -> None:
    """One item, the reminder asked for, at 21:30 tonight (the evening said, whatever the hour now): being
    busy until ten is neither an item nor words of its title (it was 加班到订车 at 22:00 and again at 21:30)."""
    [item] = parse_all(text, now=at(2026, 6, 18, hour, 0), tz=TZ)
    [plain] = parse_all("今晚九点半提醒我订车", now=at(2026, 6, 18, hour, 0), tz=TZ)
    assert isinstance(item, CreateIntent) and isinstance(plain, CreateIntent)
    assert item.title in ("订车", "订个车") and item.reminder is not None and plain.reminder is not None
    assert item.reminder.remind_at == plain.reminder.remind_at == at(2026, 6, 18, 21, 30)


def test_a_meeting_with_its_own_start_is_an_item_beside_the_reminder_after_it() -> None:
    meeting, booking = parse_all("明天下午三点开会到五点,四点半提醒我订会议室", now=NOW, tz=TZ)
    assert isinstance(meeting, CreateIntent) and isinstance(booking, CreateIntent)
    assert (meeting.title, meeting.start_at, meeting.end_at) == ("开会", at(2026, 6, 19, 15, 0), at(2026, 6, 19, 17, 0))
    assert booking.reminder is not None and booking.reminder.remind_at == at(2026, 6, 19, 16, 30)


def test_two_clock_times_set_apart_by_a_space_are_both_read() -> None:
    from intent.timex import extract

    found = extract("明天下午三点 四点半提醒我", now=NOW, tz=TZ)
    assert [m.text for m in found] == ["明天下午三点", "四点半"]
    assert [m.text for m in extract("下午3点 30分开会", now=NOW, tz=TZ)] == ["下午3点 30分"]  # one clock


@pytest.mark.parametrize(("text", "title"), [("明天提醒我订个餐厅 晚上六点", "订个餐厅"),
                                             ("帮我订个提醒 明天下午三点开会", "开会")])
def test_booking_something_keeps_its_verb_and_booking_a_reminder_is_no_title(text: str, title: str) -> None:
    assert created(text).title == title


@pytest.mark.parametrize(("text", "said", "title"), [
    ("周五晚上和女朋友看电影 七点半的场", "周五晚上七点半和女朋友看电影", "和女朋友看电影"),
    ("周五晚上和女朋友看电影,七点半那场", "周五晚上七点半和女朋友看电影", "和女朋友看电影"),
    ("明天早上坐高铁 八点那班", "明天早上八点坐高铁", "坐高铁"),
])
def test_which_showing_or_train_is_the_time_of_the_item_not_an_item(text: str, said: str, title: str) -> None:
    """七点半的场 stored an item titled 场 at 07:30 and asked the film's hour; it is the film's time."""
    [item] = parse_all(text, now=NOW, tz=TZ)
    [plain] = parse_all(said, now=NOW, tz=TZ)
    assert isinstance(item, CreateIntent) and isinstance(plain, CreateIntent)
    assert (item.title, item.start_at) == (plain.title, plain.start_at) == (title, plain.start_at)
    assert not item.needs_clarification


@pytest.mark.parametrize("text", ["明天下午三点去机场", "明天下午去商场 三点"])
def test_places_ending_in_those_words_keep_them(text: str) -> None:
    assert created(text).title in ("去机场", "去商场")


@pytest.mark.parametrize("text", ["晚上十点提醒我吃药,之后每天都提醒", "晚上十点提醒我吃药,以后每天都提醒我"])
def test_every_day_after_that_said_with_the_reminder_word_is_the_series(text: str) -> None:
    """之后每天都提醒 was a second request that asked for a time, titled 每天之后."""
    [item] = parse_all(text, now=NOW, tz=TZ)
    assert isinstance(item, CreateIntent) and item.recurrence is not None and not item.needs_clarification
    assert (item.title, item.recurrence.rrule, item.due_at) == ("吃药", "FREQ=DAILY", at(2026, 6, 18, 22, 0))


@pytest.mark.parametrize("text", ["明天不用上班,帮我把闹钟取消了", "明天不用上班 把闹钟关了", "明天放假,明早的闹钟取消"])
def test_why_said_before_turning_the_alarm_off_is_not_the_thing_cancelled(text: str) -> None:
    """It answered 没找到“不用上班”: the alarms of that day are off, as 把明天的闹钟取消了 says."""
    intent = one(text)
    plain = one("把明天的闹钟取消了")
    assert intent.model_dump() == plain.model_dump()
