"""Fillers that open a message and carry no request: 哎 / 嗯 / 哦对 / 算了 / 那个 …, and a reported-speech
lead-in (他说 / 医生说 / 王总说) before what was said.

"哎算了 那个聚餐取消吧" is "聚餐取消吧" to every rule after this; a filler alone ("算了吧", "嗯") is left as it
is, for the rules that read it as an answer.
"""

from __future__ import annotations

import re

_LEADING = re.compile(
    r"^(?:(?:哦+对了?|噢对了?|sorry|sry|抱歉|不好意思|谢谢您?|多谢|那个啥|那啥|那什么|您|呜+|哎呀|哎哟|哎|唉|诶|欸|唔+|嗯+|哦+|噢|喔|呃+|额|啊|哈+|嘿|em+|对了|算了|好吧|那就|那么|太早了啦?|太晚了啦?|不行|"
    r"那个(?![月星周礼])|这个(?![月星周礼]))[,.!~ ]*)+"
)
_NOTHING_LEFT = re.compile(r"^[吧啊呀了哈嘛呢,.!?~ ]*$")
# Reported speech: "医生说在门诊楼二楼" / "他说改到下午两点" pass on what someone else said, which is the request.
_REPORTED = re.compile(
    r"^(?:他|她|他们|她们|对方|人家|老师|医生|大夫|护士|师傅|老板|领导|经理|主管|客户|房东|物业|快递员?|群里|通知上?|"
    r"(?:我|我家)?(?:老婆|老公|媳妇|爱人|妈妈?|爸爸?|儿子|女儿|闺女|孩子|同事|朋友|同学|室友|对象|男朋友|女朋友)|"
    r"前台|秘书|助理|家长|班主任|教练|导游|司机|客服|中介|商家|店家|阿姨|保姆|人事|行政|组长|队长|HR|hr|"
    r"[\u4e00-\u9fff]总|[\u4e00-\u9fff](?:老师|医生|师傅|经理))(?:刚刚?|刚才|又|也|那边)?(?:说|讲|通知|告诉我)"
    r"(?:了)?(?:一下)?(?!的)[,.: ]*"
)


_THANKS = re.compile(r"[,. ]*(?:谢谢您?|谢谢你|多谢|谢啦|麻烦了|麻烦您了|辛苦了|辛苦啦)[!.~ ]*$")


# A mood particle at the very end (开会哈 / 交了啊 / 地点在断桥呀): it colours what was said, it asks nothing.
_MOOD_END = re.compile(r"(?<=[^\W哈啊呀哦喔嘿])[,.!~ ]*(?:哈+|啊+|呀+|哦+|喔+|嘿+)[,.!~ ]*$")


# A filler said as a clause of its own inside the message (…国贸，那个，是三里屯 / 牛奶，嗯，鸡蛋): nothing to read.
_MID_CLAUSE = re.compile(r"(?<=[,.!?~ ])\s*(?:那个|这个|嗯+|呃+|额|哦+|啊+|唔+|就是说?|然后|emm+)\s*[,.!~]+\s*")


def strip(text: str) -> str:
    """`text` without its opening fillers (and a closing thank-you), unless nothing but particles would be left."""
    text = _MOOD_END.sub("", _MID_CLAUSE.sub("", text))
    thanked = _THANKS.sub("", text)
    text = thanked if thanked.strip() and thanked != text and not _NOTHING_LEFT.match(thanked) else text
    rest, before = text, ""
    while rest != before:  # 他说 哦不对… / 嗯 老师说…: fillers and reported speech, in any order
        before = rest
        for opening in (_LEADING, _REPORTED):
            m = opening.match(rest)
            rest = rest[m.end():] if m is not None else rest
    return text if rest == text or _NOTHING_LEFT.match(rest) else rest
