"""Where an item happens, when the user names it as such: 地点在望京SOHO / 地址：人民路8号 / 位置是三楼会议室.

Only explicit markers count; "在三楼开会" stays in the title (the place words are part of what the user said).
"""

from __future__ import annotations

import re

# The place runs to the clause's end or to a space before Chinese (地点：国贸三期 提前1小时叫我);
# 望京SOHO T3 keeps its space.
_PLACE = re.compile(r"(?:(?:地点|地址|位置)(?:在|是|为|:|\s)|(?:会议室|会场)(?:在|是|为|:))\s*"
                    r"(?P<place>(?:[^,!?;\s]|\s(?=[A-Za-z0-9]))+)")
_TRAIL = re.compile(r"[吧哈啊呀呢哦。.~\s]+$|(?:提醒我|叫我|见面|集合|见|碰头)+$")


def place_of(text: str) -> tuple[str, tuple[int, int]] | None:
    """The place named and the span to leave out of the title, or None."""
    m = _PLACE.search(text)
    if m is None:
        return None
    place = _TRAIL.sub("", m.group("place")).strip()
    if not place or place.startswith(("哪", "什么", "啥", "多少")):
        return None  # 地点在哪 asks; it names nothing
    marker = m.group(0)[:3] if m.group(0).startswith("会议室") else m.group(0)[:2]
    if marker in ("会议室", "会场"):
        place = marker + place  # 会议室是A302 → 会议室A302
    return place[:60], m.span()
