"""Courses, several times a day, intervals (pure): "从后天开始每天两次吃降压药，吃两周", "每月15号还信用卡，还12期",
"隔一天给孩子量一次体温 晚上8点", "每隔两小时提醒我喝水", "上班时间每小时提醒我站起来".

The markers of a course (times a day, the times themselves, a length, an end day, a count, every other day,
odd or even weeks, a step inside a daily window) are read and taken out of the text; what is left goes
through the usual rules (so its day words and its activity are read as any other request's), and the
result becomes one series: one RFC 5545 rule that every surface expands the same way.

- several times a day: `FREQ=DAILY;BYHOUR=7,21;BYMINUTE=30` when hours × minutes are exactly the times,
  else the same with BYSETPOS picking the times out of that product (07:30 and 21:00:
  `BYHOUR=7,21;BYMINUTE=0,30;BYSETPOS=2,3`);
- a length or an end day: `UNTIL` at the end of the last day (local wall clock, as rules are kept);
  a count: `COUNT`;
- every other day: `FREQ=DAILY;INTERVAL=2`; odd or even weeks: `FREQ=WEEKLY;INTERVAL=2` from a week of
  that parity;
- a step inside a window: the times of the window (`BYHOUR=9,11,…`), or `FREQ=MINUTELY;INTERVAL=n;BYHOUR=…`
  when n divides a day, at most 24 a day; a step under 30 minutes is refused plainly.

Follow-ups about a series in focus: "早上那次改到八点" (one of its times), "停药" / "不用吃了" (it ends).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from itertools import pairwise, product
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from intent import clarify
from intent.model import Changes, CompleteIntent, CreateIntent, Intent, Pending, Recurrence, Reminder, UpdateIntent
from intent.timex.numerals import cn_int
from intent.timex.resolve import hour24
from intent.title import clean

if TYPE_CHECKING:
    from intent.followup import FocusHint

MIN_STEP = 30  # minutes: a shorter interval is refused
MAX_PER_DAY = 24
DEFAULT_WINDOW = (time(9), time(21))  # the user's day, unless said
WORK_WINDOW = (time(9), time(18))  # 上班时间: working days

_N = r"(?:\d{1,3}|[零一二两三四五六七八九十百]{1,4})"
_PERIOD = r"凌晨|早上|早晨|清晨|上午|中午|下午|傍晚|晚上|夜里|早|晚|睡前"
_CLOCK = (rf"(?P<p>{_PERIOD})?(?P<h>\d{{1,2}}|[零一二两三四五六七八九十]{{1,3}})"
          r"(?:[:：](?P<m>\d{2})|点(?:(?P<half>半)|(?P<q1>一刻)|(?P<q3>三刻)|(?P<mm>\d{1,2}|[零一二三四五六七八九十]{1,3})(?:分|(?![次遍回顿下])))?|时)")
CLOCK = re.compile(_CLOCK)
_DOSES = re.compile(r"(?:每天|每日|一天|一日|天天)(?:吃|服|用|喝|滴|涂|量|打)?(?P<n>[两二三四五六2-6])(?:次|顿|回|遍)")
_DAYS = re.compile(
    rf"(?P<lead>连续|连着|持续|坚持|一共|总共|共|连)(?:吃|服|用|喝|滴|涂|擦|量|打|做|练|跑|敷|上)?(?P<n>{_N})(?P<u>天|周|个星期|个礼拜|星期|个月)"
    rf"(?!后|以后|之后|前|内)(?:疗程)?"
    rf"|(?<![每隔])(?P<verb>吃|服|用|喝|滴|涂|擦|敷)(?P<n2>{_N})(?P<u2>天|周|个星期|个礼拜|星期|个月)(?!后|以后|之后|前|内)"
    rf"|疗程(?:是|为)?(?P<n3>{_N})(?P<u3>天|周|个星期|个月)")
_UNTIL = re.compile(r"(?:一直|吃|服|用|喝|滴|涂|擦|敷|持续|坚持|提醒|还|交|量)(?:到|至)"
                    r"(?P<d>[^,.!?;]{2,12}?)(?:为止|结束)?(?=[,.!?;]|$)")
_COUNT = re.compile(rf"(?:还|共|一共|总共|分|要还|需还)(?P<n>{_N})期"
                    rf"|(?:共|一共|总共)(?:提醒|吃|服|上|去)?(?P<n2>{_N})次")
_EACH = re.compile(r"各(?:提醒|叫|喊)?(?:我)?(?:一)?(?:次|遍|下)"
                   r"|各(?=(?:吃|服|用|喝|滴|涂|量|打|擦)(?:一)?(?:次|遍|顿|回))")
_EACH_DOSE = re.compile(r"(?<=吃|服|用|喝|滴|涂|量|打|擦)(?:一)?(?:次|遍|顿|回)")  # 各吃一次药: the verb stays (吃药)
_EVERY_OTHER = re.compile(rf"(?:每)?隔(?:一)?天|隔日|每隔(?P<n>{_N})天|每(?P<m>[两二三四五六七八九十2-9])天")
_PARITY = re.compile(r"(?:每逢|逢)?(?P<w>单|双)(?:数)?周(?:的)?")
_STEP = re.compile(rf"每(?:隔)?(?:(?P<n>{_N}|半)(?:个)?(?P<half>半)?)?(?:个)?(?P<u>小时|钟头|分钟)")
_AT = rf"(?:{_PERIOD})?{_N}(?:点|:|：)(?:半|\d{{2}})?"
_WINDOW = re.compile(rf"(?P<a>{_AT})(?:到|至|-|~)(?P<b>{_AT})(?:之间|期间|内)?")
_WORK = re.compile(r"上班时间|工作时间|上班期间|上班的时候|工作日的?白天")
_DAILY = re.compile(r"每天|每日|天天|每晚|每早|每(?:天)?(?:早上|晚上)|隔(?:一)?天|隔日|每隔.{1,3}天")
_NOT_DAILY = re.compile(r"每周|每个?月|每年|每个?星期|每个?礼拜|周[一二三四五六日天]|星期[一二三四五六日天]|[0-9]号|"
                        r"单周|双周|工作日")
_DAY_SAID = re.compile(r"今|明|后天|号|日(?!子)|周|星期|礼拜|月|从|起")
_JOIN = re.compile(r"^(?:和|跟|还有|、|,|及| )*$")
_LEFTOVER = re.compile(r"^(?:,|和|、| )+|(?:,|和|、| )+$")


@dataclass
class Spec:
    """The course markers found in a text, and the text without them."""

    rest: str
    doses: int | None = None
    times: list[time] = field(default_factory=list)
    days: int | None = None
    months: int | None = None
    until_words: str | None = None
    count: int | None = None
    every_days: int | None = None
    parity: str | None = None
    step: int | None = None
    window: tuple[time, time] | None = None
    work: bool = False

    @property
    def found(self) -> bool:
        return bool(self.doses or len(self.times) > 1 or self.days or self.months or self.until_words
                    or self.count or self.every_days
                    or self.parity or self.step)


def _clock(m: re.Match[str]) -> time | None:
    h = cn_int(m.group("h"))
    if h is None or h > 24:
        return None
    minute = 0
    if m.group("m"):
        minute = int(m.group("m"))
    elif m.group("half"):
        minute = 30
    elif m.group("q1"):
        minute = 15
    elif m.group("q3"):
        minute = 45
    elif m.group("mm"):
        minute = cn_int(m.group("mm")) or 0
    period = {"早": "早上", "晚": "晚上", "睡前": "晚上"}.get(m.group("p") or "", m.group("p"))
    if period is None and 1 <= h <= 5:
        period = "下午"
    hh, _ = hour24(h, period)
    return time(hh % 24, minute) if minute < 60 else None


def clocks(text: str) -> list[tuple[time, tuple[int, int]]]:
    """The clock times written in `text`, with their spans."""
    found = []
    for m in CLOCK.finditer(text):
        at = _clock(m)
        if at is not None and text[m.end():m.end() + 1] not in ("号", "日", "月", "天", "个", "期", "次"):
            found.append((at, m.span()))
    return found


def scan(text: str) -> Spec:
    """The course markers of `text` (normalised), and the text without them."""
    spans: list[tuple[int, int]] = []
    spec = Spec(rest=text)
    if (m := _DOSES.search(text)) is not None:
        spec.doses = cn_int(m.group("n"))
        spans.append((m.start("n"), m.end()))  # 每天吃两次降糖药: the verb stays with the title (吃降糖药)
        if text[m.start():m.start() + 1] == "一":  # 一天两次: the 每天 of it is said by the rule
            spans[-1] = (m.start(), m.end())
    if (m := _STEP.search(text)) is not None:
        raw = m.group("n")
        n = 1 if raw is None else (None if raw == "半" else cn_int(raw))
        minutes = 30 if raw == "半" else (n or 0) * (60 if m.group("u") != "分钟" else 1)
        if m.group("half") and m.group("u") != "分钟":
            minutes += 30
        spec.step = minutes
        spans.append(m.span())
        if (w := _WINDOW.search(text)) is not None:
            start = _clock_of(w.group("a"))
            end = _clock_of(w.group("b"), after=start)
            if start is not None and end is not None and start < end:
                spec.window = (start, end)
                spans.append(w.span())
        if (w2 := _WORK.search(text)) is not None:
            spec.work = True
            spec.window = spec.window or WORK_WINDOW
            spans.append(w2.span())
    if (m := _EVERY_OTHER.search(text)) is not None:
        if m.group("n"):
            spec.every_days = (cn_int(m.group("n")) or 1) + 1
        elif m.group("m"):
            spec.every_days = cn_int(m.group("m"))
        else:
            spec.every_days = 2
        spans.append(m.span())
    if (m := _PARITY.search(text)) is not None and "单双周" not in text:
        spec.parity = "odd" if m.group("w") == "单" else "even"
        spans.append(m.span())
    if (m := _DAYS.search(text)) is not None:
        n = cn_int(m.group("n") or m.group("n2") or m.group("n3") or "")
        unit = m.group("u") or m.group("u2") or m.group("u3") or ""
        if n:
            if unit == "个月":
                spec.months = n
            else:
                spec.days = n * (1 if unit == "天" else 7)
            spans.append(m.span())
    if (m := _COUNT.search(text)) is not None and (cn_int(m.group("n") or m.group("n2") or "") or 0) >= 2:
        spec.count = cn_int(m.group("n") or m.group("n2") or "")
        spans.append(m.span())
    if (m := _EACH.search(text)) is not None:  # 早上8点和晚上8点各提醒一次: one series, both times
        spans.append(m.span())
        if (dose := _EACH_DOSE.match(text, m.end() + 1)) is not None:  # 各吃一次药 → 吃药
            spans.append(dose.span())
    if not spec.step and (m := _UNTIL.search(text)) is not None and not _overlaps(m.span(), spans) \
            and CLOCK.fullmatch(m.group("d")) is None and not CLOCK.match(m.group("d")):
        spec.until_words = m.group("d")
        spans.append(m.span())
    if spec.doses or spec.step is None:
        found = [(at, span) for at, span in clocks(text) if not _overlaps(span, spans)]
        left = _cut(text, spans)
        daily = not _NOT_DAILY.search(left) and (spec.every_days or spec.days or spec.months or spec.until_words
                                                  or spec.count or _DAILY.search(left))
        # 每天10点、3点提醒我喝水 / 每天早上8点晚上8点…: one series with both times, however the clocks are joined
        several = len(found) >= 2
        if (spec.doses and found) or (daily and found and (several or (spec.found and len(found) == 1))):
            spec.times = sorted({at for at, _ in found})
            spans.extend(span for _, span in found)
            spans.extend(_joins(text, [span for _, span in found]))
    spec.rest = _cut(text, spans)
    return spec


def _clock_of(words: str, after: time | None = None) -> time | None:
    m = CLOCK.match(words if words.endswith(("点", "半")) or ":" in words else words + "点")
    if m is None:
        return None
    at = _clock(m)
    if at is not None and after is not None and at <= after and m.group("p") is None and at.hour < 12:
        at = at.replace(hour=at.hour + 12)  # 9点到5点: the second is in the afternoon
    return at


def _overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and b < span[1] for b, e in spans)


def _joins(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The 和 / 、 / spaces between two clock times of one list."""
    ordered = sorted(spans)
    return [(a[1], b[0]) for a, b in pairwise(ordered) if _JOIN.match(text[a[1]:b[0]])]


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    keep = [True] * len(text)
    for b, e in spans:
        for i in range(max(b, 0), min(e, len(text))):
            keep[i] = False
    out = "".join(c for c, k in zip(text, keep, strict=True) if k)
    out = re.sub(r",{2,}", ",", out)
    return _LEFTOVER.sub("", out)


# ------------------------------------------------------------------------------------------------ the rule
def rule_for_times(times: list[time]) -> str:
    """`BYHOUR`/`BYMINUTE` for a day's times: their product when it is exactly them, else with BYSETPOS."""
    hours = sorted({t.hour for t in times})
    minutes = sorted({t.minute for t in times})
    wanted = sorted(set(times))
    grid = [time(h, m) for h, m in product(hours, minutes)]
    body = f"BYHOUR={','.join(map(str, hours))};BYMINUTE={','.join(map(str, minutes))}"
    if len(grid) == len(wanted):
        return body
    positions = [grid.index(t) + 1 for t in wanted]
    return f"{body};BYSETPOS={','.join(map(str, positions))}"


def window_times(step: int, window: tuple[time, time]) -> list[time]:
    """The times of a step inside a window (both ends included), at most MAX_PER_DAY."""
    start = window[0].hour * 60 + window[0].minute
    end = window[1].hour * 60 + window[1].minute
    return [time(m // 60, m % 60) for m in range(start, end + 1, step)][:MAX_PER_DAY]


def interval_rule(step: int, times: list[time]) -> str:
    """A window's times as one daily rule: BYHOUR/BYMINUTE when they are a product (every 2 hours, every
    half hour), else MINUTELY with the step when it divides a day and gives exactly them, else BYSETPOS."""
    plain = rule_for_times(times)
    if "BYSETPOS" not in plain or 1440 % step:
        return f"FREQ=DAILY;{plain}"
    hours = sorted({t.hour for t in times})
    minutely = f"FREQ=MINUTELY;INTERVAL={step};BYHOUR={','.join(map(str, hours))}"
    from dateutil.rrule import rrulestr

    first = datetime.combine(date(2026, 1, 5), times[0])
    day_end = datetime.combine(date(2026, 1, 6), time())
    got = [d.time() for d in rrulestr(minutely, dtstart=first).between(first, day_end, inc=True)]
    return minutely if got == times else f"FREQ=DAILY;{plain}"


# ------------------------------------------------------------------------------------------------ reading
def read(norm: str, *, now: datetime, tz: ZoneInfo, pending: Intent | None, meeting_offset: int,
         focus: FocusHint | None) -> Intent | None:
    """A course, an interval, or a follow-up about a series' times; None when the text is none of these."""
    if isinstance(pending, CreateIntent) and pending.rule.startswith("course.ask_times") \
            and pending.recurrence is not None:
        answered = _answer(norm, pending, now=now, tz=tz)
        if answered is not None:
            return answered
    follow = followup(norm, now=now, tz=tz, focus_said=focus is not None)
    if follow is not None and focus is None and isinstance(follow, UpdateIntent) and follow.changes is not None \
            and follow.changes.end_series:  # 停药 said later: the course whose title names the medicine
        what = _END.match(norm.strip(" ,.!"))
        named = what.group("what") if what is not None and what.group("what") else ("药" if "药" in norm else "吃")
        return follow.model_copy(update={"needs_clarification": [], "question": None, "target_text": named})
    if isinstance(follow, CompleteIntent) and focus is None:
        return follow.model_copy(update={"needs_clarification": [], "question": None})
    if follow is not None and focus is not None:
        return follow
    if pending is not None and pending.needs_clarification:
        return None
    spec = scan(norm)
    if not spec.found:
        return None
    from intent.pipeline import parse

    plain = parse(norm, now=now, tz=tz, meeting_offset_minutes=meeting_offset, courses=False)
    if plain.action not in ("create", "none"):
        return None  # a query or a change that happens to hold such words stays what it was
    if spec.step is not None:
        return _interval(spec, now=now, tz=tz, meeting_offset=meeting_offset)
    return _course(spec, now=now, tz=tz, meeting_offset=meeting_offset)


def _base(text: str, now: datetime, tz: ZoneInfo, meeting_offset: int) -> CreateIntent | None:
    from intent.pipeline import parse

    got = parse(text or "提醒我", now=now, tz=tz, meeting_offset_minutes=meeting_offset, courses=False)
    return got if isinstance(got, CreateIntent) else None


def _end_text(spec: Spec, base_until: date | None, now: datetime, tz: ZoneInfo) -> date | None:
    if spec.until_words is None:
        return base_until
    from intent.timex import extract

    for mention in extract(spec.until_words, now=now, tz=tz):
        if mention.start is not None and not mention.has_clock:
            return mention.start.astimezone(tz).date()
    return base_until


def _course(spec: Spec, *, now: datetime, tz: ZoneInfo, meeting_offset: int) -> Intent | None:
    daily_words = spec.doses or spec.times or spec.every_days
    rest = spec.rest
    said_days = re.search(r"每|天天|工作日|周[一二三四五六日天]", rest)
    if (daily_words or spec.days or spec.months or spec.until_words) and not said_days:
        rest = "每天" + rest
    if spec.parity and not re.search(r"每", rest):
        rest = "每" + rest if rest.startswith(("周", "星期", "礼拜")) else "每周" + rest
    base = _base(rest, now, tz, meeting_offset)
    if base is None:
        return None
    title = _title(base.title)
    rec = base.recurrence
    anchor = base.start_at if base.kind == "event" else base.due_at
    if rec is None:
        if not daily_words:
            return None
        rec = Recurrence(rrule="FREQ=DAILY")
    parts = dict(p.split("=", 1) for p in rec.rrule.split(";") if "=" in p)
    if spec.every_days and parts.get("FREQ") == "DAILY":
        parts["INTERVAL"] = str(spec.every_days)
    if spec.parity and parts.get("FREQ") == "WEEKLY":
        parts["INTERVAL"] = "2"
    first_day = (anchor.astimezone(tz).date() if anchor is not None else now.date())
    if base.all_day and first_day == now.date() + timedelta(days=1) and not _DAY_SAID.search(rest):
        first_day = now.date()  # 每天… with its clock taken out: from today, the clock decides
    if spec.parity is not None and anchor is not None:
        while (first_day.isocalendar()[1] % 2 == 1) != (spec.parity == "odd"):
            first_day += timedelta(days=7)
            anchor = anchor + timedelta(days=7)
    times = spec.times
    if (spec.doses or times) and not times:
        return _ask(spec, base, title, parts, first_day, now=now, tz=tz)
    until = _until(spec, first_day, _end_text(spec, None, now, tz))
    if times:
        parts.pop("BYHOUR", None)
        parts.pop("BYMINUTE", None)
        body = ";".join(f"{k}={v}" for k, v in parts.items()) + ";" + rule_for_times(times)
        first = _first(times, first_day, now, tz)
        until = _until(spec, first.date(), _end_text(spec, None, now, tz))  # 连吃7天: seven days from the first
        return _made(base, title, body, first, spec, times=tuple(times), until=until, tz=tz, reminded=True)
    body = ";".join(f"{k}={v}" for k, v in parts.items())
    if anchor is None:
        return None
    if (spec.every_days or 1) > 1 and base.question and base.pending is not None:  # 每隔两天…: asked as it is kept
        said = f"每{spec.every_days}天"
        base = base.model_copy(update={"question": base.question.replace("每天", said, 1),
                                       "pending": base.pending.model_copy(
                                           update={"label": base.pending.label.replace("每天", said, 1)})})
    return _made(base, title, body, anchor, spec, times=(), until=until, tz=tz, reminded=False)


def _interval(spec: Spec, *, now: datetime, tz: ZoneInfo, meeting_offset: int) -> Intent | None:
    step = spec.step or 0
    rest = spec.rest if re.search(r"提醒|叫|喊", spec.rest) else "提醒我" + spec.rest
    base = _base(rest, now, tz, meeting_offset)
    if base is None:
        return None
    title = _title(base.title) or "提醒"
    if step < MIN_STEP:
        return CreateIntent(kind="task", title=title, due_at=now, recurrence=Recurrence(
            rrule=f"FREQ=MINUTELY;INTERVAL={max(step, 1)}", step_minutes=step), rule="course.too_frequent",
            confidence=0.9)
    window = spec.window or DEFAULT_WINDOW
    times = window_times(step, window)
    body = interval_rule(step, times)
    anchor = base.start_at or base.due_at
    first_day = anchor.astimezone(tz).date() if anchor is not None and anchor.date() > now.date() else now.date()
    first = _first(times, first_day, now, tz, workdays=spec.work, strictly=True)  # the next step, not now
    rec = Recurrence(rrule=body, workdays="cn" if spec.work else None, times=tuple(times), window=window,
                     step_minutes=step)
    return CreateIntent(kind="task", title=title, due_at=first, reminder=Reminder(remind_at=first, offset_minutes=0),
                        recurrence=rec, rule="course.interval", confidence=0.9, location=base.location,
                        note=base.note)


def _first(times: list[time], day: date, now: datetime, tz: ZoneInfo, *, workdays: bool = False,
           strictly: bool = False) -> datetime:
    """The first of `times` at or after now (after it, `strictly`), from `day` on (the next day when the day's
    are past)."""
    floor = now.replace(second=0, microsecond=0) + (timedelta(minutes=1) if strictly else timedelta())
    for k in range(0, 30, 1):
        on = day + timedelta(days=k)
        if workdays and on.weekday() >= 5:
            continue
        for at in times:
            moment = datetime.combine(on, at, tz)
            if moment >= floor:
                return moment
    return datetime.combine(day, times[0], tz)


def _until(spec: Spec, first_day: date, said: date | None) -> date | None:
    if spec.days:
        return first_day + timedelta(days=spec.days - 1)
    if spec.months:
        month = first_day.month - 1 + spec.months
        year, month = first_day.year + month // 12, month % 12 + 1
        import calendar

        day = min(first_day.day, calendar.monthrange(year, month)[1])
        return date(year, month, day) - timedelta(days=1)
    return said


def _with_end(body: str, count: int | None, until: date | None) -> str:
    if count:
        return f"{body};COUNT={count}"
    if until is not None:
        return f"{body};UNTIL={until.strftime('%Y%m%d')}T235959"
    return body


def _made(base: CreateIntent, title: str, body: str, first: datetime, spec: Spec, *, times: tuple[time, ...],
          until: date | None, tz: ZoneInfo, reminded: bool) -> CreateIntent:
    rec = base.recurrence
    full = _with_end(body, spec.count, None if spec.count else until)
    recurrence = Recurrence(rrule=full, workdays=rec.workdays if rec else None, lunar=rec.lunar if rec else None,
                            times=times, count=spec.count, until=None if spec.count else until)
    if reminded:
        reminder = None if base.explicit_no_reminder else Reminder(remind_at=first, offset_minutes=0)
        return CreateIntent(kind="task", title=title, due_at=first, reminder=reminder, recurrence=recurrence,
                            explicit_no_reminder=base.explicit_no_reminder, location=base.location, note=base.note,
                            rule="course.times", confidence=0.9)
    moved: dict[str, object] = {}
    before = base.start_at if base.kind == "event" else base.due_at
    if before is not None and before != first:  # 双周: the first week of the right parity
        moved["start_at" if base.kind == "event" else "due_at"] = first
        if base.kind == "event" and base.end_at is not None:
            moved["end_at"] = base.end_at + (first - before)
        if base.reminder is not None:
            shifted = base.reminder.remind_at + (first - before)
            moved["reminder"] = base.reminder.model_copy(update={"remind_at": shifted})
    return base.model_copy(update={"title": title, "recurrence": recurrence, "rule": f"course/{base.rule}", **moved})


def _ask(spec: Spec, base: CreateIntent, title: str, parts: dict[str, str], first_day: date, *, now: datetime,
         tz: ZoneInfo) -> CreateIntent:
    n = spec.doses or 2
    until = _until(spec, first_day, _end_text(spec, None, now, tz))
    body = ";".join(f"{k}={v}" for k, v in parts.items() if k not in ("BYHOUR", "BYMINUTE"))
    words = "两" if n == 2 else str(n)
    example = "“早上8点 晚上8点”" if n == 2 else "“早上8点 中午12点 晚上6点”"
    question = f"好的，{title or '这件事'}每天{words}次，分别是几点？比如{example}。"
    rec = Recurrence(rrule=body, doses=n, count=spec.count, until=None if spec.count else until)
    return CreateIntent(kind="task", title=title, due_at=datetime.combine(first_day, time(), tz), all_day=True,
                        recurrence=rec, needs_clarification=["event_time"], question=question,
                        rule="course.ask_times", confidence=0.8,
                        pending=Pending(label=title, on_date=first_day, wants_reminder=True))


def _answer(norm: str, pending: CreateIntent, *, now: datetime, tz: ZoneInfo) -> Intent | None:
    found = clocks(norm)
    rec = pending.recurrence
    if not found or rec is None:
        return None
    times = sorted({at for at, _ in found})
    day = pending.pending.on_date if pending.pending and pending.pending.on_date else now.date()
    parts = dict(p.split("=", 1) for p in rec.rrule.split(";") if "=" in p)
    body = ";".join(f"{k}={v}" for k, v in parts.items()) + ";" + rule_for_times(times)
    first = _first(times, max(day, now.date()), now, tz)
    until = rec.until
    if until is not None and first.date() != day and rec.until is not None and day < now.date():
        until = rec.until  # a length counted from the day said stays with that day
    full = _with_end(body, rec.count, until)
    recurrence = Recurrence(rrule=full, workdays=rec.workdays, times=tuple(times), count=rec.count, until=until)
    return CreateIntent(kind="task", title=pending.title, due_at=first, reminder=Reminder(remind_at=first,
                        offset_minutes=0), recurrence=recurrence, rule="course.times/answer", confidence=0.9)


_TITLE_TRAIL = re.compile(r"(?:吃|服|用|喝|还|交)$")
_TITLE_WORDS = re.compile(r"^(?:从)?(?:开始|起(?!来|床|身))|(?:,|和|、| )+$|^(?:,|和|、| )+")


def _title(title: str) -> str:
    """The activity only: 吃降压药吃 → 吃降压药 (a verb left by a length or a count said after it)."""
    out = _TITLE_WORDS.sub("", clean(title)) if title else ""
    while len(out) > 2 and _TITLE_TRAIL.search(out) and out[-1] in out[:-1]:
        out = out[:-1]
    return out


# ------------------------------------------------------------------------------------------------ follow-ups
_SEL = rf"{_PERIOD}|第[一二三四1-4](?:次|顿)|最后一次|(?:\d{{1,2}}|[一二两三四五六七八九十]{{1,3}})点(?:半)?"
_DOSE = re.compile(rf"^(?:把)?(?P<sel>{_SEL})"
                   r"(?:的|那次|那一次|那顿|那个|那回|这次|吃药|的药|那遍)*"
                   r"(?:改到|改成|改为|挪到|换到|调到|推到|提前到|延后到|推迟到)(?P<to>.+?)(?:吧|吗|啊|哈|了)?$")
_END = re.compile(r"^(?:医生说|大夫说)?(?:那就|就|已经)?(?P<what>[\u4e00-\u9fff]{0,6}?药)?(?:那就|就|已经|先|可以)?"
                  r"(?:停药|停了|停掉|不用再?吃了|不吃了|不用再?吃药了|不吃药了|疗程结束了?|这个疗程结束|"
                  r"不用再提醒了|以后不用提醒了|以后都不用了)(?:吧|了|啦|哈)*$")


_TAKEN = re.compile(r"^(?:我)?(?P<what>[\u4e00-\u9fff]{0,6}?药)?(?:我)?(?:已经|刚刚?|刚才)?(?:吃|服|喝|用|滴)"
                    r"(?:过|完|好|上)?了(?:哦|啊|哈|呀|啦)?$")


def followup(norm: str, *, now: datetime, tz: ZoneInfo, focus_said: bool = True) -> Intent | None:
    """早上那次改到八点 → one time of the series in focus moves; 停药 → the series in focus ends now;
    药吃了 → the dose due is done."""
    text = norm.strip(" ,.!")
    taken = _TAKEN.match(text)
    if taken is not None and taken.group("what"):
        return CompleteIntent(needs_clarification=["target"], rule="followup.course.done", confidence=0.8,
                              question=clarify.question(["target"]), target_text=taken.group("what"))
    ended = _END.match(text)
    if ended is not None and (ended.group("what") or "停" not in text or "停药" in text or focus_said):
        return UpdateIntent(changes=Changes(end_series=True), needs_clarification=["target"],
                            rule="followup.course.end", confidence=0.85,
                            question=clarify.question(["target"]))
    m = _DOSE.match(text)
    if m is None:
        return None
    sel = m.group("sel")
    to = m.group("to")
    target = CLOCK.match(to)
    if target is None or target.end() != len(to.rstrip("吧了啊")):
        return None
    at = _clock(target)
    if at is None:
        return None
    if target.group("p") is None and sel in ("晚上", "晚", "下午", "傍晚", "夜里", "睡前") and at.hour < 12:
        at = at.replace(hour=at.hour + 12)
    if target.group("p") is None and sel in ("早上", "早", "早晨", "清晨", "上午") and at.hour >= 12 \
            and (cn_int(target.group("h")) or 0) <= 12:
        at = at.replace(hour=at.hour - 12)
    which = sel
    sel_clock = CLOCK.match(sel)
    if sel_clock is not None:
        got = _clock(sel_clock)
        which = got.strftime("%H:%M") if got is not None else sel
    return UpdateIntent(changes=Changes(dose_from=which, dose_to=at), needs_clarification=["target"],
                        rule="followup.course.dose", confidence=0.85, question=clarify.question(["target"]))
