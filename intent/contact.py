"""Links, phone numbers and meeting codes inside a request (noise around a request): they go to the item's note, and
neither the title nor the time rules ever see them (a phone number's digits are no time, a URL's colon no clock).
"""

from __future__ import annotations

import re

_VALUE = (r"(?:https?://|www\.)[!-~]+"  # a link runs to the first space or non-ASCII character
          r"|(?<![\d-])(?:1[3-9]\d{9}|0\d{2,3}-?\d{7,8}|\d{3,4}-\d{7,8}|400-?\d{3}-?\d{4})(?![\d-])"
          r"|(?<=会议号)[:\s]*\d{3}(?:[\s-]?\d{3}){2,3}|(?<=密码)[:：\s]*[0-9A-Za-z]{4,12}(?![0-9A-Za-z])")
# The words that introduce the value belong to the note too: 电话是 / 联系人王先生 / 会议号 / 链接:
_LABEL = (r"(?:(?:电话|手机|手机号|号码|电话号码|联系方式|联系电话|联系人[^\s\d,，:：]{0,4}|链接|网址|会议链接|"
          r"会议号|密码)(?:是|为)?[:：]?\s*)?")
_CONTACT = re.compile(rf"{_LABEL}(?:{_VALUE})")


def pull(text: str) -> tuple[str, str | None]:
    """`text` with its links and numbers cut out (each replaced by a separator), and the note they make."""
    found = list(_CONTACT.finditer(text))
    if not found:
        return text, None
    note = " ".join(m.group(0).strip() for m in found)
    out = text
    for m in reversed(found):
        out = out[:m.start()] + "，" + out[m.end():]
    return out, note[:500]
