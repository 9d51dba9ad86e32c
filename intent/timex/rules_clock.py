"""Clock rules: 三点一刻, 15:30, 8:00 pm, 五到六点; day periods (上午, 晚上, weak 早/晚); 现在."""

from __future__ import annotations

import re

from intent.timex.lexicon import CN, NUM2, PERIODS
from intent.timex.numerals import cn_int, minute_word
from intent.timex.piece import Ctx, Handler, Piece

_UNIT_AFTER = set("度%倍米元个块号")
_POINTS = re.compile("建议|意见|想法|要求|原因|理由|问题|不足|内容|注意|要点|看法|好处|区别|说明|疑问")


def _minute_ok(raw: str, has_fen: bool) -> bool:
    """Without 分, a minute must look like one: 两位 digits, 十五, 零五 (not 二十点六, 24点5度)."""
    if has_fen:
        return True
    return (raw.isdigit() and len(raw) == 2) or "十" in raw or raw.startswith("零")


def clock_cn(m: re.Match[str], ctx: Ctx) -> Piece | None:
    text = m.string
    h = cn_int(m.group("h"))
    if h is None or h > 24:
        return None
    after = text[m.end():m.end() + 1]
    if after in _UNIT_AFTER or (m.start() > 0 and text[m.start() - 1] in "第几"):
        return None
    if not m.group("mi") and _POINTS.match(text, m.end()):
        return None  # 两点建议, 三点意见: points of an argument
    mi, s, end = 0, None, m.end()
    if m.group("half"):
        mi = 30
    elif m.group("q"):
        mi = minute_word(m.group("q") + "刻") or 0
    elif m.group("mi"):
        raw = m.group("mi")
        got = cn_int(raw)
        if got is None or got > 59 or not _minute_ok(raw, bool(m.group("fen"))):
            if text[m.start("mi") - 1] != "过":
                return None  # 二十点六: a number, not a time
            end = m.start("mi") - 1  # 十点过一下方案: 过一 is no minute; the clock is 十点, the rest the activity
        else:
            mi = got
            if m.group("sec"):
                s = cn_int(m.group("sec"))
    weak = m.group("h") == "一" and not (m.group("z") or m.group("half") or m.group("q") or m.group("mi"))
    before = text[m.start() - 1:m.start()]
    if weak and ((after and after in "都也儿不些点小东事") or (before and before in "差有多少快慢好些")):
        return None
    p = Piece("clock", m.start(), end, "clock_hms", h=h, mi=mi, s=s, weak=weak)
    if "时" in m.group(0) and len(m.group("h")) == 1 and not m.group("h").isdigit() and mi == 0:
        p.extra["needs_context"] = "1"  # 同一时间, 一时半会: 时 after a lone 一..九 needs a day or period
    return p


def clock_colon(m: re.Match[str], ctx: Ctx) -> Piece | None:
    h, mi = int(m.group("h")), int(m.group("mi"))
    ap = (m.group("ap") or "").lower().replace(".", "")
    if ap and not 1 <= h <= 12:
        return None
    if ap == "pm" and h < 12:
        h += 12
    elif ap == "am" and h == 12:
        h = 0
    s = int(m.group("sec")) if m.group("sec") else None
    p = Piece("clock", m.start(), m.end(), "clock_colon", h=h, mi=mi, s=s, ampm=ap or None)
    if m.group("h").startswith("0") and len(m.group("h")) == 2:
        p.extra["h24"] = "1"
    return p


def clock_ampm(m: re.Match[str], ctx: Ctx) -> Piece:
    h = int(m.group("h"))
    ap = m.group("ap").lower().replace(".", "")
    h = (h % 12) + (12 if ap == "pm" else 0)
    return Piece("clock", m.start(), m.end(), "clock_ampm", h=h, ampm=ap)


def clock_range(m: re.Match[str], ctx: Ctx) -> Piece | None:
    h1, h2 = cn_int(m.group("h1")), cn_int(m.group("h2"))
    if h1 is None or h2 is None or h1 > 24 or h2 > 24:
        return None
    if not m.group("sep") and h2 != h1 + 1:
        return None
    mi2 = 30 if m.group("half") else (cn_int(m.group("mi") or "") or 0)
    if not m.group("sep"):  # 七八点: seven or eight, so until nine
        h2 += 1
    return Piece("clock", m.start(), m.end(), "clock_range", h=h1, extra={"h2": str(h2), "mi2": str(mi2)})


def period(m: re.Match[str], ctx: Ctx) -> Piece | None:
    if m.string.startswith(("好", "茶", "觉"), m.end()):
        return None  # 早上好, 下午茶, 午觉: greetings and things, not times
    return Piece("period", m.start(), m.end(), "period", period=m.group(0))


def period_weak(m: re.Match[str], ctx: Ctx) -> Piece:
    return Piece("period", m.start(), m.end(), "period", period=m.group(0), weak=True)


def now(m: re.Match[str], ctx: Ctx) -> Piece:
    return Piece("now", m.start(), m.end(), "now", start=ctx.now, grain="second")


MIN = rf"(?:\d{{1,2}}|[{CN}]{{1,3}})"
# A Chinese hour as people write it (十三, 二十三, 两 …): 周一三点 is Monday 3 o'clock, not hour "一三".
_CN_HOUR = r"(?:二十[一二三四]?|十[一二三四五六七八九]?|[零〇一二两三四五六七八九]|二十四|廿[一二三四]?)"


RULES: list[tuple[str, str, Handler]] = [
    ("clock_hms", rf"(?P<h>(?<![\d.])\d{{1,2}}|{_CN_HOUR})(?:点|时)(?P<z>钟|整)?"
                  rf"(?:(?P<half>半)|(?P<q>[一三1-3])刻(?!钟)|"
                  rf"过?(?P<mi>{MIN})(?P<fen>分)?(?:(?P<sec>{MIN})秒)?)?(?:多钟?|许|钟|整)?", clock_cn),
    ("clock_colon", r"(?<![\d:.])(?P<h>[01]?\d|2[0-4]):(?P<mi>[0-5]\d)(?::(?P<sec>[0-5]\d))?(?![\d:])"
                    r"(?:\s*(?P<ap>[aApP]\.?[mM]\.?))?(?:时)?", clock_colon),
    ("clock_ampm", r"(?<![\d:.])(?P<h>1[0-2]|0?[1-9])\s*(?P<ap>[aApP]\.?[mM]\.?)(?![A-Za-z])", clock_ampm),
    ("clock_range", rf"(?<![\d.])(?P<h1>{NUM2})(?P<sep>到|至|~|-)?(?P<h2>{NUM2})(?:点|时)"
                    rf"(?:(?P<half>半)|(?P<mi>{MIN})分)?", clock_range),
    ("period", PERIODS, period),
    ("period_weak", r"(?<![早晚今明昨当])[早晚](?=[\d零一二两三四五六七八九十]|过|的|送|到|$)", period_weak),
    ("now", r"现在|此时此刻|此时|此刻|当前|目前", now),
]
