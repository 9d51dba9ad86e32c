"""Date arithmetic against `now`: partial dates, weekdays, periods, bare hours (docs/conversation.md#time)."""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta

from intent.timex.piece import Ctx

AM = {"凌晨", "清晨", "早晨", "早上", "早间", "上午", "早", "黎明", "今早", "明早", "今晨", "明晨"}
NIGHT = {"晚上", "晚", "晚间", "夜里", "夜间", "深夜", "半夜", "午夜", "今晚", "明晚", "昨晚", "当晚",
         "今夜", "后半夜", "前半夜"}
PM = {"下午", "午后", "傍晚"} | NIGHT
# windows (start hour, end hour) for a period named without a clock time
WINDOWS = {
    "凌晨": (0, 6), "黎明": (4, 7), "清晨": (5, 8), "早晨": (4, 12), "早上": (4, 12), "早间": (8, 12),
    "早": (8, 12), "今早": (4, 12), "明早": (4, 12), "今晨": (4, 12), "明晨": (4, 12), "上午": (8, 12),
    "白天": (6, 19), "午后": (13, 15), "下午": (12, 18), "傍晚": (17, 19), "晚上": (18, 24),
    "晚": (18, 24), "晚间": (18, 24), "今晚": (18, 24), "明晚": (18, 24), "昨晚": (18, 24),
    "当晚": (18, 24), "今夜": (18, 24), "夜里": (20, 24), "夜间": (20, 24), "深夜": (22, 26),
    "半夜": (23, 27), "前半夜": (20, 24), "后半夜": (2, 5), "午夜": (0, 1),
}


def add_months(year: int, month: int, n: int) -> tuple[int, int]:
    idx = year * 12 + month - 1 + n
    return idx // 12, idx % 12 + 1


def valid(y: int, m: int, d: int) -> bool:
    return 1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1] if 1 <= y <= 9999 else False


def month_day(m: int, d: int, today: date) -> date | None:
    """M月D日 without a year: this year if not past, else the next year where it exists."""
    if not (1 <= m <= 12 and 1 <= d <= 31):
        return None
    for y in range(today.year, today.year + 9):
        if valid(y, m, d) and date(y, m, d) >= today:
            return date(y, m, d)
    return None


def day_only(d: int, today: date) -> date | None:
    """N号 alone: this month if still ahead, else the next month that has that day."""
    if not 1 <= d <= 31:
        return None
    for k in range(13):
        y, m = add_months(today.year, today.month, k)
        if valid(y, m, d) and date(y, m, d) >= today:
            return date(y, m, d)
    return None


def week_monday(today: date, offset: int) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(weeks=offset)


def weekday(wd: int, wk: int | None, today: date, after: date | None = None) -> date:
    """周X: wk None → next upcoming X after today (or at/after `after`); else X in week offset wk."""
    if wk is not None:
        return week_monday(today, wk) + timedelta(days=wd)
    if after is not None:
        return after + timedelta(days=(wd - after.weekday()) % 7)
    return today + timedelta(days=(wd - today.weekday() - 1) % 7 + 1)


def two_digit_year(yy: int, today: date) -> int:
    y = today.year // 100 * 100 + yy
    if y > today.year + 20:
        y -= 100
    return y


def hour24(h: int, period: str | None) -> tuple[int, int]:
    """(hour 0–23, extra days) for an hour said with a period; (h, 0) when no period."""
    if period is None or h > 12 or (h == 0):
        return (h % 24, h // 24) if h != 24 else (0, 1)
    if period == "中午":
        return (h + 12, 0) if h <= 5 else (h, 0)
    if period in ("凌晨", "午夜"):
        return (0, 0) if h == 12 else (h, 0)
    if period in AM:
        return (h, 0)
    if period in NIGHT:
        if h == 12:
            return (0, 1)
        if h <= 4:  # 晚上一点, 夜里两点: after midnight
            return (h, 1)
        return (h + 12 if h < 12 else h, 0)
    return (h + 12 if h < 12 else h, 0)  # 下午, 午后, 傍晚


def bare_hour(h: int, mi: int, day: date | None, ctx: Ctx) -> tuple[datetime, bool]:
    """A clock time without a period. Returns (instant, rolled) by the bare-hour convention (docs/conversation.md#time).

    day None: no date named → today, rolled to the next occurrence when past.
    """
    target = day or ctx.today
    if h == 0 or h >= 13:
        cands = [h]
    elif h == 12:
        cands = [12]
    elif 1 <= h <= 5:
        cands = [h + 12]
    elif target == ctx.today:
        cands = [h, h + 12]
    else:
        cands = [h]
    for hh in cands:
        at = ctx.at(target, hh, mi)
        if target != ctx.today or at > ctx.now:  # the current minute is not "ahead"
            return at, False
    if day is not None:
        return ctx.at(target, cands[-1], mi), False
    nxt = target + timedelta(days=1)
    return ctx.at(nxt, cands[0] if len(cands) == 1 else h, mi), True
