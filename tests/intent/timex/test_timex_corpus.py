"""Duckling-style corpus: for a fixed `now`, each expected value and the phrasings that must give it."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.intent.timex.timex_helpers import LATE, NOW, TZ, YEAR_END, first

AT_NINE_PM = datetime(2026, 6, 18, 21, 0, tzinfo=TZ)

CORPUS: list[tuple[datetime, str, list[str]]] = [
    # clock times, Thursday 2026-06-18 10:00
    (NOW, "2026-06-19 15:00", ["明天下午三点", "明天下午3点", "明天15:00", "明天下午三点整", "明儿下午三点",
                               "明日15点", "6月19日下午3点", "6月19号15:00", "周五下午三点", "星期五下午3点",
                               "这周五下午三点", "本周五15点", "明天下午3：00", "明天下午３点"]),
    (NOW, "2026-06-18 15:00", ["下午三点", "三点", "今天下午三点", "15点", "今天15:00", "下午3点钟"]),
    (NOW, "2026-06-18 20:00", ["今晚八点", "今天晚上8点", "晚上八点", "八点", "20:00", "晚上8点"]),
    (NOW, "2026-06-19 00:00", ["今晚12点", "晚上12点", "夜里12点", "晚上十二点"]),
    (NOW, "2026-06-19 08:00", ["明早八点", "明天早上8点", "明天上午八点", "明天8点", "明早8点"]),
    (NOW, "2026-06-18 11:00", ["十一点", "11点", "上午十一点", "今天11点"]),
    (NOW, "2026-06-18 12:00", ["中午", "十二点", "中午12点", "今天中午"]),
    (NOW, "2026-06-18 13:00", ["中午1点", "下午一点", "一点开会", "13:00"]),
    (NOW, "2026-06-18 15:15", ["下午三点一刻", "三点十五", "3点15分", "15:15", "三点十五分"]),
    (NOW, "2026-06-18 15:45", ["三点三刻", "下午三点四十五"]),
    (NOW, "2026-06-18 15:05", ["三点零五", "三点零五分", "15:05"]),
    (NOW, "2026-06-18 15:30", ["三点半", "下午3:30", "下午三点三十分"]),
    (NOW, "2026-06-19 09:00", ["上午九点", "上午9点"]),  # passed today: rolls to tomorrow
    (NOW, "2026-06-18 21:00", ["九点", "9点"]),  # bare 6–11 today: the next future occurrence
    (AT_NINE_PM, "2026-06-19 09:00", ["九点", "9点"]),  # the current minute is not ahead: tomorrow morning
    (AT_NINE_PM, "2026-06-19 15:00", ["三点"]),
    # relative instants
    (NOW, "2026-06-18 10:30", ["半小时后", "30分钟后", "三十分钟以后", "半个小时后", "半个钟头后"]),
    (NOW, "2026-06-18 10:15", ["一刻钟后", "15分钟后", "十五分钟之后"]),
    (NOW, "2026-06-18 11:30", ["一个半小时后", "90分钟后"]),
    (NOW, "2026-06-18 12:30", ["两个半小时后"]),
    (NOW, "2026-06-18 12:00", ["两小时后", "2个小时后", "两个小时之后"]),
    (NOW, "2026-06-18 11:20", ["1小时20分钟后", "一小时二十分钟后"]),
    # days and weekdays
    (NOW, "2026-06-18", ["今天", "今日"]),
    (NOW, "2026-06-19", ["明天", "明日", "明儿", "端午", "端午节"]),
    (NOW, "2026-06-20", ["后天", "周六", "星期六", "这周六", "6月20日", "6月20号", "6.20", "6/20", "六月二十日",
                         "2026年6月20日", "2026-06-20", "20号", "二十号", "2026/6/20"]),
    (NOW, "2026-06-21", ["大后天", "3天后", "三天后", "周日", "星期天", "礼拜天", "这周日", "周7"]),
    (NOW, "2026-06-17", ["昨天", "这周三"]),
    (NOW, "2026-06-16", ["前天"]),
    (NOW, "2026-06-25", ["周四", "下周四", "下个星期四", "下礼拜四"]),
    (NOW, "2026-06-24", ["周三", "下周三", "星期三"]),
    (NOW, "2026-06-15", ["本周一", "这个星期一"]),
    (NOW, "2026-07-01", ["下下周三"]),
    (NOW, "2026-06-12", ["上周五"]),
    (NOW, "2027-01-05", ["1月5日", "一月五号"]),
    (NOW, "2026-07-10", ["10号"]),
    (NOW, "2026-07-05", ["下个月5号", "下月五号"]),
    (NOW, "2026-06-30", ["月底"]),
    (NOW, "2026-06-22", ["下个工作日"]),  # Friday 06-19 is 端午, a holiday
    (NOW, "2026-09-25", ["中秋", "中秋节", "农历八月十五"]),
    (NOW, "2026-10-01", ["国庆", "国庆节"]),
    (NOW, "2026-09-30", ["国庆节前一天"]),
    (NOW, "2027-01-01", ["元旦"]),
    (NOW, "2027-02-06", ["春节"]),
    (NOW, "2027-02-05", ["除夕"]),
    (NOW, "2027-02-13", ["正月初八"]),
    (NOW, "2027-04-05", ["清明", "清明节"]),
    (NOW, "2027-05-01", ["劳动节", "五一"]),
    (NOW, "2027-02-15", ["二月十五"]),  # Chinese numerals are solar unless lunar-marked
    # ranges
    (NOW, "2026-06-18 14:15..2026-06-18 16:00", ["下午两点一刻到四点", "下午2:15到4:00"]),
    (NOW, "2026-06-20..2026-06-26", ["6月20到25日", "6月20日到25日", "20号到25号", "6月20日至6月25日"]),
    (NOW, "2026-12-20..2026-12-26", ["12月20日到25日"]),
    (NOW, "2026-06-24..2026-06-27", ["下周三到周五"]),
    (NOW, "2026-06-18 17:00..2026-06-18 18:00", ["下午5:00到6:00", "下午五点到六点"]),
    (NOW, "2026-06-18..2026-06-21", ["未来3天", "最近3天", "未来三天"]),
    (NOW, "2026-06-15..2026-06-22", ["这周", "本周"]),
    (NOW, "2026-06-22..2026-06-29", ["下周", "下个星期"]),
    (NOW, "2026-07-01..2026-08-01", ["下个月", "7月"]),
    (NOW, "2026-06-20..2026-06-22", ["周末", "这周末"]),
    (NOW, "2026-06-19 08:00..2026-06-19 12:00", ["明天上午"]),
    # durations and lead times
    (NOW, "dur 10800", ["3个小时", "三小时"]),
    (NOW, "dur 1800", ["半小时", "半个钟头"]),
    (NOW, "dur 172800", ["两天"]),
    (NOW, "lead 600", ["提前十分钟", "提前10分钟"]),
    (NOW, "lead 1800", ["提前半小时"]),
    (NOW, "lead 3600", ["提前1小时", "提前一个小时"]),
    (NOW, "lead 86400", ["提前一天"]),
    # recurring sets
    (NOW, "set FREQ=DAILY@2026-06-19 07:00", ["每天早上7点", "每天早上七点", "每天7点"]),
    (NOW, "set FREQ=DAILY;cn@2026-06-22 09:00", ["每个工作日上午九点", "工作日9点"]),
    (NOW, "set FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR@2026-06-19", ["周一到周五"]),
    (NOW, "set FREQ=WEEKLY;BYDAY=MO@2026-06-22", ["每周一", "每个星期一"]),
    (NOW, "set FREQ=MONTHLY;BYMONTHDAY=15@2026-07-15", ["每月15号", "每个月的15号"]),
    (NOW, "set FREQ=MONTHLY;BYMONTHDAY=-1@2026-06-30", ["每月最后一天"]),
    (NOW, "set FREQ=YEARLY;BYMONTH=6;BYMONTHDAY=20@2026-06-20", ["每年6月20日"]),
    (NOW, "set FREQ=YEARLY@2026-09-25", ["每年农历八月十五"]),
    (NOW, "set FREQ=MINUTELY;INTERVAL=15@2026-06-18 10:00", ["每隔15分钟"]),
    # late at night
    (LATE, "2026-06-19 11:00", ["十一点"]),
    (LATE, "2026-06-19 15:00", ["三点", "下午三点"]),
    (LATE, "2026-06-19 02:00", ["凌晨两点", "夜里两点"]),
    (LATE, "2026-06-19 01:00", ["晚上1点", "凌晨一点"]),
    (NOW, "2026-06-19 01:00", ["晚上一点", "夜里1点"]),
    (LATE, "2026-06-19 00:00", ["半小时后", "今晚12点"]),
    (LATE, "2026-06-19 08:00", ["明早8点", "明天早上八点"]),
    (LATE, "2026-06-19", ["明天", "周五"]),
    # the last evening of the year
    (YEAR_END, "2027-01-01", ["明天", "元旦", "1月1日"]),
    (YEAR_END, "2027-01-04", ["下周一"]),
    (YEAR_END, "2027-01-05", ["1月5日", "下个月5号"]),
    (YEAR_END, "2026-12-31", ["12月31日", "月底", "今天"]),
    (YEAR_END, "2027-01-03", ["3号"]),
    (YEAR_END, "2027-01-01..2027-02-01", ["下个月"]),
    (YEAR_END, "2027-01-01..2028-01-01", ["明年"]),
    (YEAR_END, "2026-12-31 22:00", ["两小时后"]),
    (YEAR_END, "2027-01-01 09:00", ["明天上午9点", "上午九点"]),
    (YEAR_END, "set FREQ=MONTHLY;BYMONTHDAY=1@2027-01-01", ["每月1号"]),
]

CASES = [(now, want, text) for now, want, texts in CORPUS for text in texts]


@pytest.mark.parametrize(("now", "want", "text"), CASES, ids=[f"{c[2]}@{c[0]:%m%d%H%M}" for c in CASES])
def test_corpus(now: datetime, want: str, text: str) -> None:
    got, rule = first(text, now)
    assert got == want, f"{text!r} → {got} by rule {rule}, expected {want}"


EXTRA: list[tuple[datetime, str, list[str]]] = [
    (NOW, "2026-06-19..2026-06-22", ["端午假期", "端午节假期"]),
    (NOW, "2026-10-01..2026-10-08", ["国庆假期", "国庆长假"]),
    (NOW, "2026-07-01..2027-01-01", ["下半年"]),
    (NOW, "2026-06-01..2026-06-16", ["上半月"]),
    (NOW, "set FREQ=WEEKLY;BYDAY=MO,WE,FR@2026-06-19", ["每周一三五"]),
    (NOW, "2026-06-20", ["过两天"]),
    (NOW, "2027-03-01", ["3月1日前"]),
    (NOW, "2026-06-20 08:00..2026-06-20 12:00", ["第三天上午"]),
    (NOW, "2026-07-31", ["下个月底"]),
]
EXTRA_CASES = [(now, want, text) for now, want, texts in EXTRA for text in texts]


@pytest.mark.parametrize(("now", "want", "text"), EXTRA_CASES, ids=[c[2] for c in EXTRA_CASES])
def test_extra_corpus(now: datetime, want: str, text: str) -> None:
    got, rule = first(text, now)
    assert got == want, f"{text!r} → {got} by rule {rule}, expected {want}"


TRADITIONAL = [("這週三", "2026-06-17"), ("聖誕節", "2026-12-25"), ("國慶節", "2026-10-01"), ("兩小時後", "2026-06-18 12:00"),
               ("明天下午三點", "2026-06-19 15:00")]


@pytest.mark.parametrize(("text", "want"), TRADITIONAL)
def test_traditional_characters(text: str, want: str) -> None:
    got, rule = first(text)
    assert got == want, f"{text!r} → {got} by rule {rule}, expected {want}"


SPACED = [("每天早上 7 点", "set FREQ=DAILY@2026-06-19 07:00"), ("明天 下午 3 点", "2026-06-19 15:00"),
          ("提前 1 小时", "lead 3600"), ("6 月 20 到 25 日", "2026-06-20..2026-06-26"),
          ("12 月 22 日上午 9 点", "2026-12-22 09:00"), ("10 月", "dur 25920000"), ("2010 01 29", "2010-01-29")]


@pytest.mark.parametrize(("text", "want"), SPACED)
def test_spaces_between_chinese_and_digits(text: str, want: str) -> None:
    got, rule = first(text)
    assert got == want, f"{text!r} → {got} by rule {rule}, expected {want}"


def test_spans_point_into_the_original_text() -> None:
    from intent.timex import extract
    from tests.intent.timex.timex_helpers import TZ

    text = "我 明天 下午 3 点 开会"
    (m,) = extract(text, now=NOW, tz=TZ)
    assert text[m.span[0]:m.span[1]] == m.text == "明天 下午 3 点"


BARE_END = [("二月十三到十五", "2027-02-13..2027-02-16"), ("6月20日-25", "2026-06-20..2026-06-26"),
            ("25号到3号", "2026-06-25..2026-07-04"), ("三点到五", "2026-06-18 15:00"), ("1到3", "nothing")]


@pytest.mark.parametrize(("text", "want"), BARE_END)
def test_bare_range_ends(text: str, want: str) -> None:
    got, rule = first(text)
    assert got == want, f"{text!r} → {got} by rule {rule}, expected {want}"
