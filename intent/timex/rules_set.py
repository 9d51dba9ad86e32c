"""Recurrence rules: 每天, 每周X, 每个工作日, 工作日, 非工作日, 每月, 每年 (combined in grammar)."""

from __future__ import annotations

import re

from intent.timex.lexicon import BYDAY, WD_INDEX
from intent.timex.piece import Ctx, Handler, Piece

FREQ = {"天": "DAILY", "日": "DAILY", "晚": "DAILY", "早": "DAILY", "早上": "DAILY", "晚上": "DAILY",
        "周": "WEEKLY", "星期": "WEEKLY", "礼拜": "WEEKLY", "月": "MONTHLY", "年": "YEARLY",
        "小时": "HOURLY", "分钟": "MINUTELY", "季度": "MONTHLY"}
WORKDAYS = "MO,TU,WE,TH,FR"


_DAY_CHARS = "一二三四五六日天"
# 周一、三 / 周二和周五 / 周一三五: a list of weekdays; a day followed by 点/时/号 … is a number, not a day.
_DAY = r"[一二三四五六日天](?![点:时号个月年分])"
_DAY_LIST = rf"(?:周|星期|礼拜){_DAY}(?:(?:[、,/ ]|和|及|与|跟)?(?:周|星期|礼拜)?{_DAY})+"


def weekday_list(m: re.Match[str], ctx: Ctx) -> Piece | None:
    """周一三五 without 每 is the habitual weekly plan; 周六日 alone is this weekend, not a list."""
    days = m.group("days")
    if days in ("六日", "六天"):
        return None
    byday = ",".join(dict.fromkeys(BYDAY[WD_INDEX[c]] for c in days))
    return Piece("set", m.start(), m.end(), "weekday_list", freq="WEEKLY", extra={"byday": byday})


def every(m: re.Match[str], ctx: Ctx) -> Piece:
    u = m.group("u") or ""
    b, e = m.start(), m.end()
    days = [c for c in u if c in _DAY_CHARS]
    if u.startswith(("周", "星期", "礼拜")) and len(days) >= 2:
        byday = ",".join(dict.fromkeys(BYDAY[WD_INDEX[c]] for c in days))
        return Piece("set", b, e, "every_weekdays", freq="WEEKLY", extra={"byday": byday})
    if u.endswith("最后一天") or (u.startswith("月") and u.endswith(("底", "末"))):  # 每个月月底 / 每月末
        return Piece("set", b, e, "every_month_last_day", freq="MONTHLY", extra={"bymonthday": "-1"})
    if not u:
        return Piece("every", b, e, "every")
    if u == "工作日":
        return Piece("set", b, e, "every_workday", freq="DAILY", workdays="cn")
    if u in ("非工作日", "节假日", "周末"):
        return Piece("set", b, e, "every_weekend", freq="WEEKLY", extra={"byday": "SA,SU"})
    period = {"晚": "晚上", "早": "早上"}.get(u, u if u in ("早上", "晚上") else None)
    interval = {"季度": "3"}.get(u)
    p = Piece("set", b, e, "every_" + FREQ[u].lower(), freq=FREQ[u], period=period)
    if interval:
        p.extra["interval"] = interval
    return p


def workday(m: re.Match[str], ctx: Ctx) -> Piece:
    if m.group(0).startswith(("非", "节")):
        return Piece("set", m.start(), m.end(), "nonworkday", freq="WEEKLY", extra={"byday": "SA,SU"})
    return Piece("set", m.start(), m.end(), "workday", freq="DAILY", workdays="cn")


def every_nth_weekday(m: re.Match[str], ctx: Ctx) -> Piece:
    """每月最后一个周五 / 每月第二个周三 → FREQ=MONTHLY;BYDAY=-1FR / 2WE."""
    raw = m.group("n") or ""
    n = -1 if m.group("last") else "一二三四".find(raw) + 1 if raw in "一二三四" else int(raw)
    return Piece("set", m.start(), m.end(), "every_month_nth_weekday", freq="MONTHLY",
                 extra={"nth_byday": f"{n}{BYDAY[WD_INDEX[m.group('wd')]]}"})


RULES: list[tuple[str, str, Handler]] = [
    ("every_nth_weekday", r"每(?:个|一个)?月的?(?:(?P<last>最后一个|倒数第一个)|第(?P<n>[一二三四1-4])个)"
                          r"(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7])", every_nth_weekday),
    ("every", rf"每(?:个|一个?)?(?P<u>{_DAY_LIST}|月的?最后一天|月的?(?:月底|月末|底|末)|"
              r"工作日|非工作日|节假日|周末|天|日|晚上|早上|晚|早|小时|分钟|季度|"
              r"(?:周|星期|礼拜)(?![一二三四五六日天末1-7])|月|年)?", every),
    ("weekday_list", rf"(?<![每个上下这本])(?:周|星期|礼拜)(?P<days>(?:{_DAY}){{2,}})", weekday_list),
    ("workday", r"(?<![每个下非])(?:非工作日|节假日|工作日)(?!内)", workday),
]
