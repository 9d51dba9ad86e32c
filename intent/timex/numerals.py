"""Chinese numerals to ints: 零一二两三四五六七八九十百千万, 廿/卅, digit strings, mixes like 2十."""

from __future__ import annotations

DIGITS = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9, "壹": 1, "贰": 2, "叁": 3, "肆": 4, "伍": 5,
    "陆": 6, "柒": 7, "捌": 8, "玖": 9,
}
UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
SPECIAL = {"廿": 20, "卅": 30}
NUM_CHARS = "0123456789" + "".join(DIGITS) + "".join(UNITS) + "".join(SPECIAL) + "万"


def cn_int(text: str) -> int | None:
    """Convert '十五', '二十三', '两千零四', '一二', '2十', '15', '廿三' to an int; None if not a number.

    A run of bare digits without units ('二零零四') reads digit by digit.
    """
    s = text.strip()
    if not s:
        return None
    if s.isdigit() and s.isascii():
        return int(s)
    if "万" in s:
        hi, _, lo = s.partition("万")
        h = cn_int(hi) if hi else 1
        low = cn_int(lo) if lo else 0
        return None if h is None or low is None else h * 10000 + low
    if all(c in DIGITS or c.isdigit() for c in s) and len(s) > 1:
        return int("".join(str(DIGITS[c]) if c in DIGITS else c for c in s))
    total, current = 0, None
    for c in s:
        if c in DIGITS:
            current = DIGITS[c]
        elif c.isdigit() and c.isascii():
            current = (current or 0) * 10 + int(c) if current is not None and current < 10 else int(c)
        elif c in SPECIAL:
            total += SPECIAL[c]
            current = None
        elif c in UNITS:
            total += (1 if current is None else current) * UNITS[c]
            current = None
        else:
            return None
    return total + (current or 0)


def minute_word(text: str) -> int | None:
    """Minutes after 点: '半' 30, '一刻' 15, '三刻' 45, '零五' 5, '十五' 15."""
    if text == "半":
        return 30
    if text.endswith("刻"):
        n = cn_int(text[:-1])
        return None if n is None else n * 15
    return cn_int(text)
