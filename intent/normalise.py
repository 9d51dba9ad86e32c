"""Input clean-up before any rule runs: cap the length, blank control characters, unify punctuation."""

from __future__ import annotations

import re

MAX_CHARS = 200  # utterances are short; longer text is cut so work stays bounded
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")
_SPACES = re.compile(r"\s+")
_PUNCT = str.maketrans({"。": ",", "；": ",", ";": ",", "、": ",", "！": "!", "？": "?", "（": "(", "）": ")",
                        "“": '"', "”": '"', "‘": "'", "’": "'", "「": '"', "」": '"'})


def normalise(text: str) -> str:
    """Return the text the rules and the time engine see (one line, ≤ MAX_CHARS, ASCII punctuation)."""
    head = text[: MAX_CHARS * 4]
    head = _CONTROL.sub(" ", head)
    from intent.timex.normalise import normalise as timex_normalise  # lazy: keeps `import intent` light

    head = timex_normalise(head).translate(_PUNCT)
    return _SPACES.sub(" ", head).strip()[:MAX_CHARS]
