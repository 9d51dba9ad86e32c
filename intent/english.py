"""English mixed into Chinese messages: schedule words become their Chinese forms
before any rule runs, so one grammar reads "tmr 3pm remind 我交报告" like 明天下午3点提醒我交报告.

Only time words, remind and deadline are rewritten; other English (meeting, call with Alice) stays for the
title, and the meeting words are in `intent.lexicon`.
"""

from __future__ import annotations

import re

_W = r"(?<![A-Za-z])"
_E = r"(?![A-Za-z])"
_DAYS = {"mon": "一", "tue": "二", "wed": "三", "thu": "四", "fri": "五", "sat": "六", "sun": "日"}
_WEEKDAY = (r"(?P<wd>mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:r|rs|rsday)?|fri(?:day)?|sat(?:urday)?"
            r"|sun(?:day)?)")
_PREP = r"(?:(?:at|on)\s+)?"  # "at 8pm", "on Friday": the preposition goes with the time word
_WORDS = re.compile(
    rf"{_W}{_PREP}(?:(?P<pre>next|this|coming)\s+)?{_WEEKDAY}\.?{_E}"
    rf"|{_W}{_PREP}(?P<clock>\d{{1,2}})(?::(?P<min>\d{{2}}))?\s*(?P<ampm>am|pm|a\.m\.|p\.m\.){_E}"
    rf"|{_W}(?P<word>day after tomorrow|tomorrow|tmrw?|tmw|tomo|today|tdy|tonight|next week|this week|"
    rf"remind me(?: to)?|remind|ddl|deadline|due|noon|this morning|this afternoon|this evening|cancel|done|"
    rf"note){_E}"
    r"\s*(?:我)?",
    re.IGNORECASE,
)
_WORD_ZH = {
    "day after tomorrow": "后天", "tomorrow": "明天", "tmr": "明天", "tmrw": "明天", "tmw": "明天", "tomo": "明天",
    "today": "今天", "tdy": "今天", "tonight": "今晚", "next week": "下周", "this week": "这周", "noon": "中午",
    "this morning": "今天上午", "this afternoon": "今天下午", "this evening": "今晚",
    "remind me": "提醒我", "remind me to": "提醒我", "remind": "提醒我",
    "ddl": "截止", "deadline": "截止", "due": "截止", "cancel": "取消", "done": "完成", "note": "备注",
}


def _zh(m: re.Match[str]) -> str:
    if m.group("wd"):
        pre = {"next": "下周", "this": "这周", "coming": "周"}.get((m.group("pre") or "").lower(), "周")
        return pre + _DAYS[m.group("wd")[:3].lower()]
    if m.group("clock"):
        hour, minute, pm = int(m.group("clock")), m.group("min"), m.group("ampm").lower().startswith("p")
        if hour > 12:
            return m.group(0)
        if pm:
            period = "中午" if hour == 12 else "下午" if hour <= 5 else "晚上"
        else:
            period, hour = ("凌晨", 0) if hour == 12 else ("凌晨" if hour < 5 else "上午", hour)
        return f"{period}{hour}点" + (f"{int(minute)}分" if minute and int(minute) else "")
    word = " ".join(m.group("word").lower().split())
    return _WORD_ZH.get(word, m.group(0))


# English puts the day after the clock ("8pm tomorrow"); Chinese, and the time rules, the day first.
_CLOCK_THEN_DAY = re.compile(r"((?:凌晨|上午|中午|下午|晚上)\d{1,2}点(?:\d{1,2}分)?)\s*"
                             r"(明天|后天|今天|今晚|(?:下周|这周|周)[一二三四五六日])")


_MINUTES = re.compile(r"(\d+)\s*(?:minutes|minute|mins|min)(?![A-Za-z])", re.IGNORECASE)
_HOURS = re.compile(r"(\d+)\s*(?:hours|hour|hrs|hr)(?![A-Za-z])", re.IGNORECASE)


def to_chinese(text: str) -> str:
    """Rewrite the English schedule words of `text`; text without Latin letters is returned as is."""
    text = _HOURS.sub(r"\1小时", _MINUTES.sub(r"\1分钟", text))
    return _CLOCK_THEN_DAY.sub(r"\2\1", _WORDS.sub(_zh, text))
