"""Titles and target words: the utterance minus time words, reminder/record filler and particles."""

from __future__ import annotations

import re
from collections.abc import Iterable

from intent.lexicon import NO_REMINDER_RX

_ANYWHERE = re.compile(
    NO_REMINDER_RX + r"|(?:先|帮我|给我|请)?(?:记一下|记下来|记下|记录一下|记上|备忘(?:一下)?|记个事|记件事|记一件事)"
    r"|帮我记录|(?:增加|添加|设置|设定|设|加|定|订|弄)(?:一)?个?提醒|提醒一下我|提醒我|提醒下我|到时候?提醒|到点了?提醒|准时提醒|叫醒我|叫我|喊我|通知我"
    r"|(?:设|定|订|调|上)(?:一)?个?闹钟|的?闹钟|闹铃"
    r"|帮我|麻烦(?:你|您)?|请(?:你|您)?|能不能|能否|可不可以|可以|你能|您能|我想|我希望|谢谢您?"
    r"|(?:差点|差一点|险些|都快)忘(?:记)?了?|(?:帮我|给我)?记(?:着|住)(?:点|了|啊|哈)?"  # 差点忘了 / 帮我记着点
    r"|【[^】]{0,8}】|召开|举行|举办|截[止至](?:时间|日期)?(?:是|为)?"  # forwarded notices: 【通知】定于…在…召开…
)
_LEAD = re.compile(
    r"^(?:[,.:!?\"'()~\- ]|额|呃|嗯+|唔|emm+|就是说?|然后|兹?定于|将于|这次|这回|别忘了?|不要忘了?|别忘记|"
    r"那天|当天|还是|终于|以后|今后|往后|从此|"
    r"好的|好吧|好嘞|收到|行吧|好(?=,|$)|大概|大约|差不多|"
    r"我们|我|你|您|给我|一下|有个|有一个|有一场|有场|有|还(?=要|得|需要|有)|都(?=要|得|需要|去)|已经|要|得|需要|必须|先|的|"
    r"不行|要不|干脆|临时有事|有事|想(?=吃|去|看|买|约|喝)|"
    r"去(?=[取拿买办看开参接送交吃见做找打修剪领还寄])|从|开始|起(?!床|来|飞)|"
    r"一会儿?|待会儿?|等会儿?|过会儿?|回头|吧|呗|啦|"  # 一会儿三点提醒我开会 / 四点吧 去理发: not what
    r"是|在|再|把|将|(?:添加|增加|新建|新增|设置|设定|创建)(?:一)?[个条]|一个|(?:设|定)个|个|之前|以前|前|也|就|那个|这个|那件|这件|准时|按时|记得|该|再次|到时|时候|左右|整(?![理顿改治])|开始)+"
)
_TRAIL = re.compile(
    r"(?:[,.:!?\"'()~\- ]|提前|大概|大约|差不多|了|吧|哦|啊|呀|哈|呢|嘛|吗|一下|的|提醒|提醒我|"
    r"一声|一次|一遍|(?<![成首京])都|全部|全都|那个|那件事|这件事|的事|事情|那场|这场|来着|好吗|行吗|可以吗|谢谢|哈哈|"
    r"别忘了?|不要忘了?|别忘记了?|千万别忘了?|记住了?|记得|很急|紧急|加急|(?<![着焦心])急|"
    r"(?:具体)?(?:地点|地方|时间|会议室)(?:还|暂时|暂)?(?:待定|未定|没定|再定|另行通知|等通知)|"  # 开会地点待定
    r"(?:以后|今后|往后|之后|从此)?[, ]*(?:都|也)?(?:这样|如此|照此|照旧)|"  # …,以后每天都这样
    r"(?<= )(?:以后|今后|往后|从此))+$"
)
_SEP = re.compile(r"[,:!?;]")


def remove_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Replace each span with a separator so words on both sides do not fuse."""
    merged: list[tuple[int, int]] = []
    for b, e in sorted(set(spans)):
        if merged and b < merged[-1][1]:  # overlapping spans (a context clause holding a date) become one
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((b, e))
    out = text
    for b, e in reversed(merged):
        out = out[:b] + "," + out[e:]
    return out


# 把报告交了 → 交报告: the 把 construction puts the object first; a title reads verb + object.
_BA = re.compile(r"^(?:之前|以前|前)?(?:要|得|先)?把(.{1,10}?)"
                 r"(交|买|取|办|做|写|还|付|寄|发|送|带|拿|领|签|填|报|修|洗|休|改|订|退|换|处理|确认|提交|打印|整理|准备)"
                 r"(?:了|完|好|掉|一下|上)?$")


_EACH_ONCE = re.compile(r"各(?:提醒我?|叫我|喊我)?([\u4e00-\u9fff]{0,2}?)一次")  # 早晚各吃一次药 → 吃药


def clean(segment: str) -> str:
    seg = _ANYWHERE.sub(",", _EACH_ONCE.sub(r"\1", segment))
    parts = [p for p in (_strip(_BA.sub(r"\2\1", p.strip()) if "把" in p else p) for p in _SEP.split(seg)) if p]
    if len(parts) > 1:  # 家长会，提醒我提前一小时出发: setting off is what the reminder is for, not the item
        parts = [p for p in parts if p not in _SETTING_OFF and p not in WHICH_ONE and p not in _FROM_NOW] or parts
    return "".join(parts)


_SETTING_OFF = frozenset({"出发", "动身", "出门", "走", "过去"})
_FROM_NOW = frozenset({"之后", "以后", "今后", "往后", "从此", "从今以后"})  # …，之后每天都提醒: when, not what
# 七点半的场 / 八点那班: which showing or which train the time was, said after the activity
WHICH_ONE = frozenset({"场", "场次", "一场", "那场", "这场", "班", "班次", "那班", "这班", "趟", "那趟", "这趟"})


def _strip(part: str) -> str:
    prev = None
    while prev != part:
        prev = part
        part = _TRAIL.sub("", _LEAD.sub("", part))
    return part


_SAID_TWICE = re.compile(r"([\u4e00-\u9fff]{2,4})\1")


def title_of(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The activity: 明天上午九点提醒我带材料 → 带材料; 今天下午三点有个会 → 会议."""
    title = _SAID_TWICE.sub(r"\1", clean(remove_spans(text, spans)))[:60]  # 开会开会: a stutter
    return "会议" if title in ("会", "个会") else "开会" if title == "开个会" else title


_TARGET_TRAIL = re.compile(r"(?:的提醒|提醒|的?那个|的?时间|的事|的|我们|我|这件事|那件事|掉|吧)+$")


_EMOJI = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF\ufe0f]")
_NOT_NEEDED = re.compile(r"不用了|不要了|不需要了|甭了|取消掉?|删掉|算了|不搞了|不弄了|不整了")


def target_of(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Words naming an existing item: 带材料那个已经完成了 → 带材料 (verb spans are passed in)."""
    words = clean(_NOT_NEEDED.sub(",", _EMOJI.sub("", remove_spans(text, spans))))
    words = _strip(_TARGET_TRAIL.sub("", _ALL_OF.sub("", words)))
    return "" if words in _NAMES_NOTHING else words[:60]


_ALL_OF = re.compile(r"^(?:所有|全部|一切)的?(?=[^人])")  # 所有的会 → 会 (都/所有 itself is read as `every`)


_PRONOUNS = frozenset({"它", "这", "那", "这个", "那个", "刚才那个", "刚刚那个", "上一个", "刚才", "刚刚"})
# Words that point at every item rather than one: "把明天的事取消" means the date alone picks.
_EVERYTHING = frozenset({
    "事", "事儿", "事情", "东西", "安排", "日程", "行程", "待办", "所有", "全部", "一切", "所有事", "所有的事",
    "全部的事", "所有事情", "所有安排", "所有的安排", "所有日程", "全部安排", "全部日程", "所有待办", "全部待办",
})
_NAMES_NOTHING = _PRONOUNS | _EVERYTHING
