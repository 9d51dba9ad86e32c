"""Chat commands the intent contract does not cover: calling off a question, picking by position, undo and
withdraw, 再记一条, help, and the page links (分享行程页 / 取消分享 / 订阅日历 / 关闭日历订阅 / 重置链接).

Each reads the message as every rule does (`normalise`: fillers, thanks, a trailing mood particle or emoji,
full-width forms and punctuation unified), so 再记一条 🙂 or 撤销哈 mean what they say.
"""

from __future__ import annotations

import re
from typing import Literal

from intent.normalise import normalise

_DROP = re.compile(r"^(算了|不用了|不要了|不记了|没事了|取消吧?|那算了|先不用了)[吧啊呀了哈。.!！~～]*$")
_LATER = re.compile(r"^(后面|后边|下面|后一个|最后)(那个|那条|一个|一条)?[吧的。.]*$")
_EARLIER = re.compile(r"^(前面|前边|上面|前一个|第一个)(那个|那条|一个|一条)?[吧的。.]*$")
_LINKS: tuple[tuple[re.Pattern[str], Literal["share", "unshare", "feed", "unfeed", "reset"]], ...] = (
    (re.compile(r"(重置|作废|重新生成)(一下)?(全部|所有)?的?(行程页?|页面|日历|订阅|分享)?链接"), "reset"),
    (re.compile(r"(取消|关闭|停止|撤销|不要|退订)(日历订阅|订阅日历|日历)"), "unfeed"),
    (re.compile(r"(取消|关闭|停止|撤销|不要)(公开)?分享"), "unshare"),
    (re.compile(r"分享.{0,4}(行程|日程|页面|链接)|(行程|日程).{0,3}分享"), "share"),
    (re.compile(r"订阅.{0,3}日历|日历.{0,3}订阅|(ics|ical|日历)\s*(链接|地址)", re.IGNORECASE), "feed"),
)


_UNDO = re.compile(r"^(?:帮我|请)?(?:撤销|撤回|恢复|还原|反悔了?|"
                   r"刚才的?(?:取消|删除|完成)?(?:撤销|撤回|恢复|错了|弄错了|不算)|"
                   r"(?:取消|删|完成)错了|恢复刚才的?(?:那个|那条|那些)?)(?:吧|一下|了)?[。.!！~～]*$")
_HELP = re.compile(r"^(帮助|help|菜单|使用说明|怎么用|你能做什么|你会什么|你能干什么|功能)[？?。!！]*$", re.IGNORECASE)


def asks_help(text: str) -> bool:
    """帮助 (the HELP menu key sends it): what the bot can do, with examples."""
    return bool(_HELP.match(_plain(text)))


def drops(text: str) -> bool:
    """"算了": call off the open question."""
    return bool(_DROP.match(_plain(text)))


def position(text: str) -> int | None:
    """"后面那个" → -1 (the last offered), "前面那个" → 1."""
    t = _plain(text)
    if _LATER.match(t):
        return -1
    if _EARLIER.match(t):
        return 1
    return None


def link_request(text: str) -> Literal["share", "unshare", "feed", "unfeed", "reset"] | None:
    text = _plain(text)
    if len(text) > 30:
        return None
    for pattern, what in _LINKS:
        if pattern.search(text):
            return what
    return None


def undoes(text: str) -> bool:
    """撤销 / 刚才取消错了: take back the last cancel or complete (or, right after a create, the create)."""
    return bool(_UNDO.match(_plain(text)))


# 刚才那条删掉 / 刚记的那个删了吧 / 撤回刚才那个 / 搞错了，这条不要了 / 记错了: pointer words, an admission, a verb.
_POINTER = re.compile(r"(?:刚才|刚刚|刚|上面|上一)(?:记|加|说|写|发)?(?:的)?(?:那|这)?(?:一)?(?:条|个|项)?"
                      r"|(?:这|那)(?:一)?(?:条|个|项)|把它|把|它")
_ADMIT = re.compile(r"(?:我)?(?:[记写弄搞说加发]?错(?:了|啦|咯)|不对)")
_GONE = re.compile(r"删掉|删了|删除|删|去掉|不要了|不要|作废|不算|撤掉|撤销|撤回|没这回事|没有这回事|没这事")
_PARTICLES = re.compile(r"[,，。.!！~～ 吧了一下掉哈呀啊]")
_AGAIN = re.compile(r"^(?:再记一条|再记一次|再加一条|再添一条|还要再记一条|确实要再记一条|重复记一条)[吧。.!！~～]*$")


def withdraws(text: str) -> bool:
    """刚才那条删掉 / 记错了: take back what was just recorded (the item in focus)."""
    plain = _plain(text)
    if len(plain) > 16:
        return False
    pointed, admitted = _POINTER.search(plain), _ADMIT.search(plain)
    rest = _PARTICLES.sub("", _ADMIT.sub("", _POINTER.sub("", plain)))
    if not rest:  # 记错了 / 刚才那条记错了 (错了 / 说错了 alone correct something: 要改成什么)
        return admitted is not None and re.search(r"[记写加弄搞发]错", admitted.group()) is not None
    return _GONE.fullmatch(rest) is not None and (pointed is not None or admitted is not None or len(plain) <= 4)


def reverts(text: str) -> bool:
    """撤销刚才那条 / 撤回刚才那个: 撤销 said with a pointer (a create is withdrawn, a cancel restored)."""
    return withdraws(text) and re.search(r"撤销|撤回", _plain(text)) is not None


def again(text: str) -> bool:
    """再记一条: the request refused as a repeat (the same request twice) is wanted twice after all."""
    return bool(_AGAIN.match(_plain(text)))


def _plain(text: str) -> str:
    """The message as the rules read it, without its closing punctuation."""
    return normalise(text).rstrip(",.!?~ ")
