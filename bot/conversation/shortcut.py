"""Chat commands the intent contract does not cover: calling off a question, picking by position,
and the page links (分享行程页 / 取消分享 / 订阅日历 / 关闭日历订阅)."""

from __future__ import annotations

import re
from typing import Literal

_DROP = re.compile(r"^(算了|不用了|不要了|不记了|没事了|取消吧?|那算了|先不用了)[吧啊呀了哈。.!！~～]*$")
_LATER = re.compile(r"^(后面|后边|下面|后一个|最后)(那个|那条|一个|一条)?[吧的。.]*$")
_EARLIER = re.compile(r"^(前面|前边|上面|前一个|第一个)(那个|那条|一个|一条)?[吧的。.]*$")
_LINKS: tuple[tuple[re.Pattern[str], Literal["share", "unshare", "feed", "unfeed"]], ...] = (
    (re.compile(r"(取消|关闭|停止|撤销|不要|退订)(日历订阅|订阅日历|日历)"), "unfeed"),
    (re.compile(r"(取消|关闭|停止|撤销|不要)(公开)?分享"), "unshare"),
    (re.compile(r"分享.{0,4}(行程|日程|页面|链接)|(行程|日程).{0,3}分享"), "share"),
    (re.compile(r"订阅.{0,3}日历|日历.{0,3}订阅|(ics|ical|日历)\s*(链接|地址)", re.IGNORECASE), "feed"),
)


_UNDO = re.compile(r"^(?:撤销|撤回|恢复|还原|反悔了?|刚才的?(?:取消|删除|完成)?(?:撤销|撤回|恢复|错了|弄错了|不算)|"
                   r"(?:取消|删|完成)错了|恢复刚才的?(?:那个|那条|那些)?)(?:吧|一下|了)?[。.!！~～]*$")
_HELP = re.compile(r"^(帮助|help|菜单|使用说明|怎么用|你能做什么|你会什么|你能干什么|功能)[？?。!！]*$", re.IGNORECASE)


def asks_help(text: str) -> bool:
    """帮助 (the HELP menu key sends it): what the bot can do, with examples."""
    return bool(_HELP.match(text.strip()))


def drops(text: str) -> bool:
    """"算了": call off the open question."""
    return bool(_DROP.match(text.strip()))


def position(text: str) -> int | None:
    """"后面那个" → -1 (the last offered), "前面那个" → 1."""
    t = text.strip()
    if _LATER.match(t):
        return -1
    if _EARLIER.match(t):
        return 1
    return None


def link_request(text: str) -> Literal["share", "unshare", "feed", "unfeed"] | None:
    if len(text) > 30:
        return None
    for pattern, what in _LINKS:
        if pattern.search(text):
            return what
    return None


def undoes(text: str) -> bool:
    """撤销 / 刚才取消错了: take back the last cancel or complete."""
    return bool(_UNDO.match(text.strip()))
