"""Chinese numeral conversion and the offset-keeping normaliser."""

from __future__ import annotations

import pytest

from intent.timex.normalise import normalise
from intent.timex.numerals import cn_int, minute_word


@pytest.mark.parametrize(
    ("text", "value"),
    [("零", 0), ("一", 1), ("两", 2), ("十", 10), ("十一", 11), ("二十", 20), ("二十三", 23), ("廿三", 23),
     ("卅", 30), ("一百", 100), ("一百零五", 105), ("两千零四", 2004), ("二零零四", 2004), ("一二", 12),
     ("15", 15), ("零五", 5), ("三十七", 37), ("2000万", 20_000_000), ("一千零一", 1001)],
)
def test_cn_int(text: str, value: int) -> None:
    assert cn_int(text) == value


@pytest.mark.parametrize("text", ["", "点", "abc", "十a"])
def test_cn_int_rejects(text: str) -> None:
    assert cn_int(text) is None


@pytest.mark.parametrize(("text", "value"), [("半", 30), ("一刻", 15), ("三刻", 45), ("零五", 5), ("十五", 15)])
def test_minute_word(text: str, value: int) -> None:
    assert minute_word(text) == value


def test_normalise_keeps_offsets() -> None:
    raw = "明天１５：３０，後天"
    out = normalise(raw)
    assert out == "明天15:30,后天"
    assert len(out) == len(raw)
