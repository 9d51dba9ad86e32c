"""Small Chinese phrases shared by replies: lead times, recurrence rules, action verbs."""

from __future__ import annotations

import re
from datetime import date

from schedule.domain import Recurrence

_DAYS = {"MO": "一", "TU": "二", "WE": "三", "TH": "四", "FR": "五", "SA": "六", "SU": "日"}
_VERBS = {"complete": "完成", "cancel": "取消", "update": "修改"}


def lead_label(minutes: int) -> str:
    """60 → 1 小时; 90 → 1 小时 30 分钟; 1440 → 1 天; 30 → 30 分钟."""
    if minutes % 1440 == 0:
        return f"{minutes // 1440} 天"
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return f"{hours} 小时 {rest} 分钟"
    return f"{hours} 小时" if hours else f"{rest} 分钟"


def verb_word(verb: str) -> str:
    return _VERBS.get(verb, verb)


def recurrence_label(rec: Recurrence) -> str:
    """每天 / 每个工作日 / 每周一、三 / 每月5号 / 每月最后一天 / 每年6月1日 / 每年农历八月十五."""
    if rec.lunar is not None:
        return f"每年农历{'闰' if rec.lunar.leap else ''}{rec.lunar.month}月{rec.lunar.day}日"
    if rec.workdays == "cn":
        return "每个工作日"
    parts = dict(p.split("=", 1) for p in (rec.rrule or "").split(";") if "=" in p)
    freq, interval = parts.get("FREQ", ""), int(parts.get("INTERVAL", "1") or 1)
    if freq == "DAILY":
        return "每天" if interval == 1 else f"每 {interval} 天"
    if freq == "WEEKLY":
        days = [_DAYS[d[-2:]] for d in parts.get("BYDAY", "").split(",") if d[-2:] in _DAYS]
        every = "每周" if interval == 1 else f"每 {interval} 周"
        if days == list("一二三四五"):
            return f"{every}一到周五"
        return every + "、".join(days) if days else every
    if freq == "MONTHLY":
        day = parts.get("BYMONTHDAY", "")
        if day == "-1":
            return "每月最后一天"
        weekday = re.fullmatch(r"(-?\d)(MO|TU|WE|TH|FR|SA|SU)", parts.get("BYDAY", ""))
        if weekday:
            n = int(weekday.group(1))
            return f"每月{'最后一个' if n == -1 else f'第{n}个'}周{_DAYS[weekday.group(2)]}"
        return f"每月{day}号" if day else "每月"
    if freq == "YEARLY":
        month, monthday = parts.get("BYMONTH"), parts.get("BYMONTHDAY")
        return f"每年{month}月{monthday}日" if month and monthday else "每年"
    return "重复"


def recurrence_until(rec: Recurrence) -> date | None:
    """The last local day of a bounded series (RRULE UNTIL, local wall time or UTC with Z), or None."""
    found = re.search(r"(?:^|;)UNTIL=(\d{8})", rec.rrule or "")
    if found is None:
        return None
    digits = found.group(1)
    return date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
