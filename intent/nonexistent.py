"""Calendar dates that exist in no year (2月30日, 4月31号, 13月1日): found so the bot says so instead of
keeping the words in a title and guessing a day. Pure text → value."""

from __future__ import annotations

import re
from dataclasses import dataclass

from intent.timex.numerals import cn_int

_NUM = "0-9零〇一二两三四五六七八九十廿卅"
_DATE = re.compile(rf"(?<![{_NUM}.])([{_NUM}]{{1,3}})\s*月(?:份)?\s*([{_NUM}]{{1,3}})\s*[日号]")
_LONGEST = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}


@dataclass(frozen=True, slots=True)
class MissingDay:
    month: int
    day: int
    said: str  # as written: 2月30号

    def reply(self) -> str:
        if not 1 <= self.month <= 12:
            return f"一年只有12个月，“{self.said}”这个日期不存在，没有记录。请换一个日期再说一次。"
        last = _LONGEST[self.month]
        example = 28 if self.month == 2 else last  # 29 would exist only in leap years
        return (f"{self.month}月没有{self.day}号（最多到{last}号），“{self.said}”这个日期不存在，没有记录。"
                f"请换一个日期再说一次，比如“{self.month}月{example}号”。")


def missing_day(text: str) -> MissingDay | None:
    """The first month/day in `text` that no year has (February counts 29 days), or None."""
    for match in _DATE.finditer(text):
        month, day = cn_int(match.group(1)), cn_int(match.group(2))
        if month is None or day is None or day < 1:
            continue
        if not 1 <= month <= 12 or day > _LONGEST[month]:
            return MissingDay(month, day, match.group(0))
    return None
