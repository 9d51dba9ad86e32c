"""Where an item happens, when the user names it as such: 地点在望京SOHO / 地址：人民路8号 / 位置是三楼会议室.

Only explicit markers count; "在三楼开会" stays in the title (the place words are part of what the user said).
"""

from __future__ import annotations

import re

# The place runs to the clause's end or to a space before Chinese (地点：国贸三期 提前1小时叫我);
# 望京SOHO T3 keeps its space.
_PLACE = re.compile(r"(?:(?:地点|地址|位置)(?:在|是|为|:|\s)|(?:会议室|会场)(?:在|是|为|:)"
                    r"|(?:^|(?<=[\s,]))(?:地点|地址)(?=[^\s,!?;在是为:哪什啥多]))\s*"  # 项目评审 地点三楼会议室
                    r"(?P<place>(?:[^,!?;\s]|\s(?=[A-Za-z0-9]))+)")
_TRAIL = re.compile(r"[吧哈啊呀呢哦。.~\s]+$|(?:提醒我|叫我|见面|集合|见|碰头)+$")
_UNDECIDED = re.compile(r"(?:还|暂时|暂)?(?:待定|未定|没定|再定|另行通知|等通知|不确定|还不知道|不知道)")


def place_of(text: str) -> tuple[str, tuple[int, int]] | None:
    """The place named and the span to leave out of the title, or None; the place is "" when the user said it
    is not known yet (地点待定)."""
    m = _PLACE.search(text)
    if m is None:
        return None
    place = _TRAIL.sub("", m.group("place")).strip()
    if not place or place.startswith(("哪", "什么", "啥", "多少")):
        return None  # 地点在哪 asks; it names nothing
    if _UNDECIDED.fullmatch(place):  # 地点待定: no place yet, and no words of the title either
        return "", m.span()
    marker = m.group(0)[:3] if m.group(0).startswith("会议室") else m.group(0)[:2]
    if marker in ("会议室", "会场"):
        place = marker + place  # 会议室是A302 → 会议室A302
    return place[:60], m.span()


_VENUE = (r"影城|影院|电影院|剧院|大剧院|音乐厅|体育场|展馆|博物馆|医院|卫生院|诊所|咖啡馆|咖啡厅|餐厅|饭店|酒店|"
          r"会议室|大厦|广场|公园|体育馆|健身房|"
          r"图书馆|机场|火车站|高铁站|商场|购物中心|球馆|游泳馆")
_BRAND = r"星巴克|麦当劳|肯德基|必胜客|瑞幸|海底捞|宜家|喜茶"
_ACTIVITY = (r"看|见|复查|复诊|吃|开|面试|体检|检查|接|买|办|参加|聚|喝|打|做|取|签|碰头|碰面|会合|集合|约|谈|"
             r"和|跟|与|陪|找|给|听|逛|"
             r"上课|学|练|游|跑|剪|理发|拔牙|看牙|挂号")
_LEADING_VENUE = re.compile(rf"^(?P<venue>[^\s,]{{1,8}}?(?:{_VENUE})|{_BRAND})(?P<title>(?:{_ACTIVITY})[^\s,]*)$")
_TRAILING_VENUE = re.compile(
    rf"^(?P<title>[^\s,]{{2,}})\s+(?P<venue>[^\s,]{{1,12}}?(?:{_VENUE}|楼|层|室|厅|号院)|{_BRAND})$")


# 需求评审 在A座502 / 拜访客户@望京SOHO / 在星巴克和猎头聊聊: 在 or @ says where
_AT_VENUE = re.compile(r"^(?P<title>[^\s,@]{2,})(?:\s+在|\s*@\s*)(?P<venue>[^\s,@]{2,20})$"
                       r"|^在(?P<venue2>[^\s,]{2,10}?)(?P<title2>(?:和|跟|与|陪|见|找)[^\s,]{2,})$")


def venue_in(title: str) -> tuple[str, str] | None:
    """万达影城看电影 → (看电影, 万达影城); 项目评审 5楼大会议室 → (项目评审, 5楼大会议室); None otherwise."""
    at = _AT_VENUE.match(title)
    if at is not None:
        return (at.group("title") or at.group("title2")), (at.group("venue") or at.group("venue2"))
    m = _LEADING_VENUE.match(title) or _TRAILING_VENUE.match(title)
    if m is None:
        return None
    venue = _GOING.sub("", _ERRAND.split(m.group("venue"))[-1])  # 带妈妈去医院: the place is 医院
    if _GENERIC_VENUE.fullmatch(venue):  # 去医院复查: a generic place is part of what is done, no location
        return None
    return m.group("title"), venue


_GOING = re.compile(r"^(?:去|到|在|上)")
_ERRAND = re.compile(r"(?<=[\u4e00-\u9fff])(?:去|到)(?=[\u4e00-\u9fff])")
_AT_BEFORE = re.compile(r"(?<![现正实存好])在(?P<v>[^\s,，。在的我你他她]{2,8}?)(?=跟|和|与|陪|找|见|给)")
_GENERIC_VENUE = re.compile(
    r"医院|公园|餐厅|饭店|酒店|商场|机场|火车站|高铁站|健身房|图书馆|会议室|电影院|影院|咖啡馆|咖啡厅")


# 后天中午跟老同学吃饭 十二点半 在万达: a last clause of 在 and a place, set apart by a space or a comma
_AT_END = re.compile(r"(?:^|(?<=[\s,]))在(?P<v>[^\s,在的我你他她要想忙等做考准吗呢吧了线家]{2,12})$")


def place_at_end(text: str) -> tuple[str, tuple[int, int]] | None:
    """The place of a last clause that only says where (… 在万达): the place and its span."""
    m = _AT_END.search(text)
    return (m.group("v"), m.span()) if m is not None else None


def place_after_zai(text: str) -> tuple[str, tuple[int, int]] | None:
    """在国贸跟朋友吃饭: a place said with 在 before who or what (跟/和/与/陪/找/见/给): the place and its span."""
    m = _AT_BEFORE.search(text)
    if m is None:
        return None
    return m.group("v"), m.span()
