"""Input clean-up before any rule runs: cap the length, blank control characters, unify punctuation."""

from __future__ import annotations

import re
from datetime import datetime

MAX_CHARS = 200  # utterances are short; longer text is cut so work stays bounded
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")
_SPACES = re.compile(r"\s+")
_CLOSING = re.compile(r"(?<=[^,.!~ ])[,.!~ ]+$")  # 在8楼！/ 交了。: how a sentence ends says nothing the rules read
# A trailing emoji set apart by a space or punctuation (开会 🙂, 好的！👍) is a mood, not part of the request; one
# written onto a word (买蛋糕🎂) stays with it.
_MOOD = re.compile(r"(?:(?<=[\s,.!?~，。！？、])|^)[\s\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001F000-\U0001FAFF"
                   r"\ufe0f\u200d]+$")
_FULLWIDTH = str.maketrans({chr(0xFF10 + i): str(i) for i in range(10)} | {"：": ":", "，": ",", "　": " "})
# Common traditional characters of schedule talk → simplified (one char each, so offsets hold).
_TRADITIONAL = str.maketrans(
    "會開議記錄們還過時間這鐘嗎麼幫請給發與項辦預約飯醫體檢車買賣機場電話說讓準備報單務題課歲歷曆農陰節慶"
    "勞動國樣從學習寫讀書紀結媽長門聽見視頻飛鐵頭髮護藥費錢帳繳續裡試員總經戶應該別幾刪銷剛氣選週號後點個"
    "兩禮鬧訂麵貨遞裝歡謝現當實際隊處戲劇網頁覽訊計劃畫內專屬業產啟關閉訴腦術藝鍛鍊練籃賽導師級組評審顧問"
    "簽證驗領補償繫聯絡郵鬆錶鎖燈熱燒閱覆複濟壓傳輸衛",
    "会开议记录们还过时间这钟吗么帮请给发与项办预约饭医体检车买卖机场电话说让准备报单务题课岁历历农阴节庆"
    "劳动国样从学习写读书纪结妈长门听见视频飞铁头发护药费钱账缴续里试员总经户应该别几删销刚气选周号后点个"
    "两礼闹订面货递装欢谢现当实际队处戏剧网页览讯计划画内专属业产启关闭诉脑术艺锻炼练篮赛导师级组评审顾问"
    "签证验领补偿系联络邮松表锁灯热烧阅复复济压传输卫",
)
_PUNCT = str.maketrans({"。": ",", "…": ",", "⋯": ",",
                        "；": ",", ";": ",", "、": ",", "！": "!", "？": "?", "（": "(", "）": ")",
                        "“": '"', "”": '"', "‘": "'", "’": "'", "「": '"', "」": '"'})


# What pinyin input and dialect put in place of schedule words, each gated by its context so real words
# survive: 名天→明天, 下五3点→下午3点, 题醒→提醒, 5分钟后在提醒我→再提醒我, 俩点→两点, 一个钟后→一个小时后,
# 明儿个→明天.
_LATIN = re.compile(r"[A-Za-z]{2}")
_NUMERAL = r"[0-9零一二两三四五六七八九十俩]"
_TYPO = re.compile(
    rf"(?P<day>[名鸣铭]天|明添)|(?P<noon>[上下中]五)(?={_NUMERAL}|$|[,!? ])|(?P<remind>题醒|提星|体醒|题星)"
    r"|(?P<again>(?:(?<=[后会儿下点,]))在)(?=(?:提醒|叫|喊|通知|催)我?)|(?P<two>俩)(?=[点个小钟天周礼星月年号])"
    rf"|(?P<clock>个钟)(?!头|点)(?=后|以后|之后|内|左右|以内|叫|提醒|喊)|(?P<er>[今明后]儿个)"
)
# 早八晚八 / 早8晚9: the morning's and the evening's hour, said the short way, as the clocks they are
# (早上八点,晚上八点); never when a unit follows (早两天晚一点 is no clock).
_MORNING_EVENING = re.compile(r"早(?P<am>[1-9]|1[0-2]|[一两二三四五六七八九十]|十[一二])"
                              r"晚(?P<pm>[1-9]|1[0-2]|[一两二三四五六七八九十]|十[一二])(?:点|(?![0-9一二三四五六七八九十时:个天分小周月年步些]))")
_FIX = {"day": "明天", "remind": "提醒", "again": "再", "two": "两", "clock": "个小时"}


def _fix(m: re.Match[str]) -> str:
    kind = m.lastgroup or ""
    if kind == "noon":
        return m.group(0)[0] + "午"
    if kind == "er":
        return m.group(0)[0] + "天"
    return _FIX.get(kind, m.group(0))


_WIDE_ASCII = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


def ascii_forms(text: str) -> str:
    """Full-width letters, digits and signs as ASCII (１３８…, ｈｔｔｐｓ://…, ３点, ，): one spelling for the rules."""
    return text.translate(_WIDE_ASCII)


def normalise(text: str) -> str:
    """Return the text the rules and the time engine see (one line, ≤ MAX_CHARS, ASCII punctuation)."""
    head = text[: MAX_CHARS * 4]
    head = _MOOD.sub("", _CONTROL.sub(" ", head)) or head
    head = head.translate(_TRADITIONAL).replace("甭", "不用").replace("天天", "每天")
    head = head.replace("听日", "明天").replace("听朝", "明早")  # Cantonese
    head = _TYPO.sub(_fix, head)
    head = _MORNING_EVENING.sub(lambda m: f"早上{m['am']}点,晚上{m['pm']}点", head)
    if _LATIN.search(head):
        from intent.english import to_chinese

        head = to_chinese(head)
    try:  # lazy: keeps `import intent` light; a broken engine package must not stop the intent rules
        from intent.timex.normalise import normalise as timex_normalise

        head = timex_normalise(head)
    except Exception:
        head = head.translate(_FULLWIDTH)
    head = head.translate(_PUNCT)
    from intent.filler import strip

    return _CLOSING.sub("", strip(_SPACES.sub(" ", head).strip()))[:MAX_CHARS]


# 明天这个时候提醒我 / 后天同一时间 / 下周这个时候: a day said with "this time of day" means the clock it is now, on
# that day (下周 alone: the same weekday next week).
_SAME_TIME_OF_DAY = re.compile(
    r"(?P<day>大?后天|明天|明日|(?P<week>(?:下下|下)(?:个)?(?:周|星期|礼拜))(?P<wd>[一二三四五六日天1-7])?)"
    r"的?(?:这个时候|这时候|这个点|这个时间|同一时间|同一个时间|同样的时间|现在这个时间)")
_CHANGE_VERB = re.compile(r"改|挪|换|推|调")
_WEEKDAY_WORDS = "一二三四五六日"


def with_clock_now(norm: str, now: datetime) -> str:
    """明天这个时候 → 明天10点05分 (the clock it is now); a change (改到后天同一时间) keeps the item's own time."""
    if _CHANGE_VERB.search(norm):
        return norm

    def clock(m: re.Match[str]) -> str:
        day = m.group("day")
        if m.group("week") and not m.group("wd"):
            day += _WEEKDAY_WORDS[now.weekday()]
        return f"{day}{now.hour}点{now.minute:02d}分"

    return _SAME_TIME_OF_DAY.sub(clock, norm)
