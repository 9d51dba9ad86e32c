"""What the time mentions of an utterance mean to the intent rules: when, recurrence, lead, relative."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from intent.timex.types import TimeMention

_NUM = r"[0-9零一二两三四五六七八九十百半]+"
_LEAD = re.compile(rf"提前(?:个)?({_NUM}|半)?(?:个)?(半)?(分钟|分|小时|钟头|天|日|周|星期)(半)?")
_UNIT_MIN = {"分钟": 1, "分": 1, "小时": 60, "钟头": 60, "天": 1440, "日": 1440, "周": 10080, "星期": 10080}


@dataclass(slots=True)
class Slots:
    """Mentions sorted by role. `when` is the first point or range that is not relative."""

    when: TimeMention | None = None
    second: TimeMention | None = None  # a later point (明天下午3点开会，2点半提醒我 → 2点半)
    relative: TimeMention | None = None
    recur: TimeMention | None = None
    lead_minutes: int | None = None
    lead_span: tuple[int, int] | None = None
    remind_clock: TimeMention | None = None  # 下个月5号交房租，提前一天上午9点提醒我 → 上午9点, on the lead's day
    lead_period: str | None = None  # 提前一天晚上提醒我 / 前一晚 → 晚上: where on the lead's day, clock still unsaid
    durations: list[TimeMention] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def anchor(self) -> TimeMention | None:
        """The mention giving the item's first instant: the recurrence if any, else `when`."""
        return self.recur or self.when

    @property
    def has_clock(self) -> bool:
        a = self.anchor
        return a is not None and a.start is not None and a.has_clock


def lead_from_text(text: str) -> tuple[int, tuple[int, int]] | None:
    """提前N分钟/半小时/N小时/N天 → minutes (our own reading, used when the engine gives none)."""
    m = _LEAD.search(text)
    if m is None:
        return None
    from intent.timex.numerals import cn_int

    num, half1, unit, half2 = m.group(1), m.group(2), m.group(3), m.group(4)
    if num == "半":
        value = 0.5
    elif num is None:
        value = 1.0
    else:
        n = cn_int(num.replace("半", ""))
        if n is None:
            return None
        value = float(n) + (0.5 if (half1 or half2 or num.endswith("半")) else 0.0)
    return round(value * _UNIT_MIN[unit]), m.span()


# Time words that are part of a noun here (季度报告, 年度总结): not a time for the intent.
_NOUN_WORDS = frozenset({"季度", "季", "年度", "月度"})
_BYDAY = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


def refine(mentions: list[TimeMention], text: str) -> list[TimeMention]:
    """Intent-level reading of the engine's mentions: drop noun uses, fold 周一到周五 into the set."""
    kept = [_week_noun(m, text) for m in mentions
            if m.text not in _NOUN_WORDS and not _degree(m, text) and not _names_a_thing(m, text)]
    return _starting_from(_bounded_set(_weekday_span_set(kept)), text)


def _starting_from(mentions: list[TimeMention], text: str) -> list[TimeMention]:
    """下周一开始每天跑步: a date followed by 开始/起 is where the recurrence starts."""
    first = next((m for m in mentions if m.type == "point" and m.has_date and _STARTS.match(text, m.span[1])), None)
    rec = next((m for m in mentions if m.type == "set" and m.start is not None), None)
    if first is None or rec is None or first.start is None or rec.start is None or rec.span[0] < first.span[0]:
        return mentions
    begin = rec.start.replace(year=first.start.year, month=first.start.month, day=first.start.day)
    if begin <= rec.start:
        return mentions
    begin = _on_weekday(begin, _weekdays(replace(rec, has_clock=False)))
    moved = replace(rec, start=begin, rule=f"{rec.rule}+starting_from")
    return [moved if m is rec else m for m in mentions]


_STARTS = re.compile(r"开始|起(?!床|来|飞)")


def _week_noun(m: TimeMention, text: str) -> TimeMention:
    """下周的日程 is next week's agenda, not 下周日: give back the week (the 日 belongs to 日程/日报)."""
    end = m.span[1]
    if not (m.text.endswith("周的日") and m.start is not None and end < len(text) and text[end] in "程报记常子历期志"):
        return m
    monday = day_start(m.start) - timedelta(days=m.start.weekday())
    return replace(m, span=(m.span[0], end - 2), text=m.text[:-2], type="range", start=monday,
                   end=monday + timedelta(days=7), grain="week", has_date=False, rule=f"{m.rule}+week_noun")


_ADJ_BEFORE = frozenset("看快慢大小高低多少好短长轻重远近简详清亮暗早晚松紧便宜贵")


# 3号楼 / 2号会议室 / 5号线 are places and 年终总结 a report: no date (noise around a request)
_NUMBERED_PLACE = re.compile(
    r"(?:楼|会议室|室|厅|门|线|房|床|窗口|馆|院|口|车厢|站台|柜台|展位|包间|电池|球场|场馆|通道|地铁)")
_YEAR_NOUN = re.compile(r"(?:总结|奖|考核|评审|汇报|报告|盘点|大会|晚会|述职|复盘|规划|计划|目标|预算|体检|会员|"
                        r"礼物|礼品|红包|贺卡|祝福|对联|装饰|OKR|KPI|数据|财报)")


def _names_a_thing(m: TimeMention, text: str) -> bool:
    after = text[m.span[1]:]
    if not m.has_clock and ((m.text.startswith("下") and text[max(0, m.span[0] - 1):m.span[0]] == "一")
                            or (text[max(0, m.span[0] - 2):m.span[0]] == "一下" and "年" in m.text)):
        return True  # 想一下年会节目 / 整理一下年中到年底的报销单: 下 belongs to 一下, and no date is said
    if m.text.endswith("号") and not m.has_clock and _NUMBERED_PLACE.match(after):
        return True
    if m.text.endswith("年") and after.startswith("度"):  # 一下年度复盘: 年度 is "annual", 下 belongs to 一下
        after = after[1:]
    return m.text.endswith(("年终", "年底", "年中", "年度", "年", "季度", "新年", "春节")) \
        and _YEAR_NOUN.match(after) is not None


def _degree(m: TimeMention, text: str) -> bool:
    """好看一点 / 快一点: 一点 means "a bit" after an adjective, not 1 o'clock."""
    return m.text in ("一点", "一点儿") and m.span[0] > 0 and text[m.span[0] - 1] in _ADJ_BEFORE


def collect(mentions: list[TimeMention], text: str) -> Slots:
    s = Slots()
    for m in mentions:
        s.spans.append(m.span)
        if m.type == "duration":
            if m.lead or text[max(0, m.span[0] - 2): m.span[0]].endswith("提前"):
                if s.lead_minutes is None and m.seconds is not None:
                    s.lead_minutes = m.seconds // 60
                    s.lead_span = m.span
            else:
                s.durations.append(m)
        elif m.type == "set":
            s.recur = s.recur or m
        elif m.relative:
            s.relative = s.relative or m
        elif m.start is not None and s.when is None:
            s.when = m
        elif m.start is not None and s.second is None and m.has_clock:
            s.second = m
    if s.lead_minutes is None:
        found = lead_from_text(text) or _day_before(text, s.when)
        if found is not None:
            s.lead_minutes, s.lead_span = found
            s.spans.append(found[1])
    _attach_clock(s, [m for m in mentions if m.type in ("point", "range") and not m.relative and m.start], text)
    if s.lead_span is not None and s.lead_minutes and not s.lead_minutes % 1440:
        after = next((m for m in mentions if m.span[0] >= s.lead_span[1] - 1 and m.period is not None), None)
        s.lead_period = after.period if after is not None else ("晚上" if text[s.lead_span[1] - 1] == "晚" else None)
    return s


DAY_BEFORE = r"(?:前|头)([一两二三四五六七1-7])天|(?:前|头)一?晚"  # 前一天 / 头两天 / 前一晚: a lead in days
_DAY_BEFORE = re.compile(rf"(?<![0-9零一二两三四五六七八九十提])(?:{DAY_BEFORE})")
_REMIND_AFTER = re.compile(r"[^,!?]{0,10}?(?:提醒|叫我|喊我|通知我)")


def _day_before(text: str, when: TimeMention | None) -> tuple[int, tuple[int, int]] | None:
    """前一天/头一天/前两天/前一晚 in a reminder clause after the item's day mean 提前N天 (周五开会，前一天提醒我).
    前天 (the day before yesterday) has no numeral and is left to the time engine."""
    if when is None or not when.has_date:
        return None
    m = _DAY_BEFORE.search(text, when.span[1])
    if m is None or not _REMIND_AFTER.match(text, m.end()):
        return None
    from intent.timex.numerals import cn_int

    days = cn_int(m.group(1)) if m.group(1) else 1
    return (days or 1) * 1440, m.span()


_TRIGGER = re.compile(r"提醒|叫我|喊我|记一下|记下|帮我记|备忘|记得")
_SEPARATOR = re.compile(r"[,!?]")
_AM = frozenset({"凌晨", "清晨", "早晨", "早上", "早间", "上午", "黎明"})
_PM = frozenset({"下午", "午后", "傍晚", "晚上", "晚间", "夜里", "夜间", "深夜", "半夜"})
# Words that place what follows in the evening: a bare hour after them is the evening's (这周五下班后…大概六点).
_EVENING_CUE = re.compile(r"下班|放学|收工|晚饭|晚餐|夜宵|宵夜")


def _attach_clock(s: Slots, points: list[TimeMention], text: str) -> None:
    """A day without a clock takes the next clock said after it, across fillers and clauses.

    大后天…上午十点 / 明天上午帮我记个事，十点要去银行 → that day at that clock. When the later clock
    names its own day (老板今天说了，周四下午两点开会 / 明天就放假了，提醒我今晚八点…), the earlier day
    was context and the later mention is the request's time.
    """
    rec, clock = s.recur, s.when
    plain = rec is not None and ";BY" not in (rec.rrule or ";BY") and rec.lunar is None  # 每天 / 每周, no day named
    if rec is not None and rec.start is not None and not rec.has_clock and clock is not None \
            and clock.start is not None and clock.has_clock and (not clock.has_date or plain):
        start = on_day(clock, rec.start, rec.period)
        if clock.has_date or ((rec.rrule or "").startswith("FREQ=DAILY") and plain and clock.start < start
                              and clock.start.time() == start.time()):
            # 晚上九点提醒我吃药，每天都要: tonight's is the first, when it is still ahead; 明天上午九点开会，以后
            # 每周都这样: the day said is the first, and its weekday the series'
            start = clock.start
        rrule = rec.rrule
        if clock.has_date and plain and rrule is not None:  # the day said names the series' day: 每周四, 每月11日
            if rrule.startswith("FREQ=WEEKLY"):
                rrule += f";BYDAY={_BYDAY[start.weekday()]}"
            elif rrule.startswith("FREQ=MONTHLY"):
                rrule += f";BYMONTHDAY={start.day}"
        s.recur = replace(rec, start=start, rrule=rrule, has_clock=True,
                          rule=f"{rec.rule}+attached_clock")  # 每周一，三点开会 / 晚上九点…，每天都要
        s.when, s.second = None, None
        return
    day = s.when
    if day is None or (day.has_clock and not noon_only(day)) or day.start is None or day not in points:
        return
    if not day.has_date and day.period is None:
        return  # only a day, or a part of one (晚上请客户吃饭7点), takes a later clock
    ask = _TRIGGER.search(text, day.span[1])
    own = next((m for m in points if ask is not None and m.span[0] > ask.start() and m.has_date), None)
    if ask is not None and own is not None and _SEPARATOR.search(text, day.span[1], ask.start()):
        s.when = own  # 妈妈说下周六回来，提醒我周五去超市: the request clause's own day wins over the context's
        cut = max(text.rfind(sep, day.span[1], ask.start()) for sep in ",!?")
        s.spans.append((0, cut + 1))
        _attach_clock(s, points, text)
        return
    if day.end is not None and day.end - day.start > timedelta(days=1):
        return  # 下周 / 六月: no single day to attach a clock to
    later = points[points.index(day) + 1:]
    clock = next((m for m in later if m.has_clock), None)
    if clock is None or clock.start is None:
        return
    if day.has_clock and not at_noon(clock):
        return  # 中午…十二点半 refines noon; 中午…晚上八点 is another time
    lead = s.lead_span
    if (lead is not None and s.lead_minutes and not s.lead_minutes % 1440 and not clock.has_date
            and day.span[1] <= lead[0] < clock.span[0]):
        s.remind_clock = clock  # 交房租，提前一天上午9点提醒我: the clock is the reminder's, the task keeps its day
        return
    if clock.has_date:
        s.when = clock
        cut = max(text.rfind(sep, day.span[1], clock.span[0]) for sep in ",!?")
        if cut >= 0:
            s.spans.append((0, cut + 1))  # the context clause's words are not the title
    else:
        period = day.period or ("傍晚" if _EVENING_CUE.search(text, day.span[0], clock.span[0]) else None)
        s.when = replace(clock, start=on_day(clock, day.start, period), has_date=True,
                         rule=f"{clock.rule}+attached_day")
    s.second = next((m for m in later[later.index(clock) + 1:] if m.has_clock), None)


def noon_only(mention: TimeMention) -> bool:
    """中午 with no hour said: 12:00 by convention, until a clock said later in the message refines it."""
    return mention.period == "中午" and mention.has_clock and hour_said(mention.text) is None


def at_noon(clock: TimeMention) -> bool:
    """A clock time without a day, said around noon (11点, 12点半, 1点, 13:00): what 中午 said earlier means."""
    return (clock.start is not None and clock.has_clock and not clock.has_date and clock.period in (None, "中午")
            and hour_said(clock.text) in (11, 12, 1, 13))


def on_day(clock: TimeMention, day: datetime, period: str | None = None) -> datetime:
    """The wall clock of `clock` on `day`; a bare hour follows the day's period, else 6–11 = AM."""
    assert clock.start is not None
    at = day.replace(hour=clock.start.hour, minute=clock.start.minute, second=0, microsecond=0)
    if clock.period is not None or _written_24h(clock.text):
        return at
    if period in _AM and at.hour >= 12:
        return at - timedelta(hours=12)
    if period in _PM and at.hour < 12:
        return at + timedelta(hours=12)
    if period is None and 18 <= at.hour <= 23 and clock.start.date() != day.date():
        return at - timedelta(hours=12)  # a bare 6–11 read as tonight (passed this morning) is AM on another day
    return at


_HOUR = re.compile(r"([0-9]{1,2}|[零一二两三四五六七八九十]{1,3})(?=[:点时])")


def hour_said(text: str) -> int | None:
    """The hour as written in a clock mention's text (九点 → 9, 20:00 → 20), None if none is written."""
    from intent.timex.numerals import cn_int

    m = _HOUR.search(text)
    return cn_int(m.group(1)) if m is not None else None


def _written_24h(text: str) -> bool:
    """20:00 / 二十点: the hour itself says afternoon or evening."""
    hour = hour_said(text)
    return hour is not None and hour >= 13


# A range that names particular days (下周一到周五, 这周, 12月5日到10日), not weekdays in general (周一到周五).
_PARTICULAR = re.compile(r"^(?:下下?|这|本|上|今|明|后|[0-9零一二两三四五六七八九十]+月|[0-9]+[./-])|[0-9]+[号日]")


def _bounded_set(mentions: list[TimeMention]) -> list[TimeMention]:
    """下周一到周五每天早上8点 / 这周每天晚上10点: a set said inside particular days runs only on those days.
    The set starts on the range's first matching day and ends with it (RRULE UNTIL, local wall time)."""
    rec = next((m for m in mentions if m.type == "set" and m.rrule and m.start is not None and not m.lunar
                and m.rrule.startswith(("FREQ=DAILY", "FREQ=WEEKLY")) and "UNTIL=" not in m.rrule), None)
    days = next((m for m in mentions if m.type == "range" and m.start is not None and m.end is not None
                 and m.grain in ("day", "week", "month") and _PARTICULAR.search(m.text)), None)
    if rec is None or days is None or rec.start is None or days.start is None or days.end is None:
        return mentions
    if days.span[1] > rec.span[0] or not timedelta(days=1) <= days.end - days.start <= timedelta(days=62):
        return mentions
    begin = rec.start
    if days.start > begin:
        begin = begin.replace(year=days.start.year, month=days.start.month, day=days.start.day)
    begin = _on_weekday(begin, _weekdays(replace(rec, has_clock=False)))
    if begin >= days.end:
        return mentions  # no such day left in the range: keep the plain set rather than an empty series
    until = (days.end - timedelta(seconds=1)).strftime("%Y%m%dT%H%M%S")
    bounded = replace(rec, start=begin, rrule=f"{rec.rrule};UNTIL={until}", text=f"{days.text}{rec.text}",
                      span=(min(days.span[0], rec.span[0]), rec.span[1]), rule=f"{rec.rule}+within")
    return [bounded if m is rec else m for m in mentions if m is not days]


def _weekday_span_set(mentions: list[TimeMention]) -> list[TimeMention]:
    """周一到周五每天7点: the engine gives a weekday range plus a daily set; the intent is one weekly set.
    A range of particular days (下周一到周五) stays beside the set too, to bound it (`_bounded_set`)."""
    daily = next((m for m in mentions if m.type == "set" and m.rrule == "FREQ=DAILY" and m.start), None)
    days = next((m for m in mentions if m is not daily and _weekdays(m)), None)
    if daily is None or days is None or daily.start is None:
        return mentions
    wanted = _weekdays(days)
    first = _on_weekday(daily.start, wanted)
    byday = ",".join(_BYDAY[d] for d in sorted(wanted))
    particular = _PARTICULAR.search(days.text) is not None
    merged = replace(daily, span=(daily.span[0] if particular else min(days.span[0], daily.span[0]),
                                  max(days.span[1], daily.span[1])),
                     rrule=f"FREQ=WEEKLY;BYDAY={byday}", start=first, rule=f"{daily.rule}+weekday_range")
    return [merged if m is daily else m for m in mentions if m is not days or particular]


def _on_weekday(at: datetime, weekdays: list[int]) -> datetime:
    """`at`, or the first later day (same clock) on one of `weekdays` (Monday = 0); any day when none given."""
    for _ in range(7):
        if not weekdays or at.weekday() in weekdays:
            break
        at += timedelta(days=1)
    return at


def _weekdays(m: TimeMention) -> list[int]:
    """Weekdays named by a 周X到周Y range or a weekly BYDAY set without a clock; [] otherwise."""
    if m.type == "range" and m.rule.startswith("range(weekday") and m.start and m.end:
        count = min(7, max(1, (m.end.date() - m.start.date()).days))
        return [(m.start.weekday() + i) % 7 for i in range(count)]
    if m.type == "set" and not m.has_clock and m.rrule and m.rrule.startswith("FREQ=WEEKLY;BYDAY="):
        names = m.rrule.split("BYDAY=", 1)[1].split(";", 1)[0].split(",")
        return [_BYDAY.index(n) for n in names if n in _BYDAY]
    return []


def day_start(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def minus(at: datetime, minutes: int) -> datetime:
    """Wall-clock subtraction in the item's zone (an offset is a local-time notion)."""
    return at - timedelta(minutes=minutes)
