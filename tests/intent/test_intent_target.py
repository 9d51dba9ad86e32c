"""Target matching (docs/conversation.md#changing): which of a user's items "取消明天的会" / "带材料那个完成了" means.

Every table case runs twice: through the character matcher (kept for a dictionary that cannot load), and through
jieba with the user's titles kept whole. A subprocess proves the loading is lazy and never blocks `rank`.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from intent_helpers import NOW, TZ

from intent import parse
from intent import target as target_module
from intent.model import CancelIntent, CompleteIntent, UpdateIntent
from intent.target import Candidate, rank, ready, warm_up

ROOT = Path(__file__).resolve().parents[2]
JUN = {d: date(2026, 6, d) for d in range(18, 31)}  # NOW is Thursday 6-18

# A realistic fortnight: similar titles, a weekly meeting twice, meetings of several names, a party that is no meeting.
ITEMS = [
    Candidate(1, "周会", JUN[19], 900, "event"),
    Candidate(2, "项目评审会议", JUN[18], 600, "event"),
    Candidate(3, "带材料", JUN[19], 540),
    Candidate(4, "和王总吃饭", JUN[20], 1110, "event"),
    Candidate(5, "年度体检", JUN[22], 480, "event"),
    Candidate(6, "同学聚会", JUN[19], 1140, "event"),
    Candidate(7, "交房租"),
    Candidate(8, "打印材料", JUN[19]),
    Candidate(9, "周会", JUN[26], 900, "event"),
    Candidate(10, "给妈妈打电话", JUN[18], 1200),
    Candidate(11, "交电费", JUN[25]),
    Candidate(12, "部门例会", JUN[22], 600, "event"),
    Candidate(13, "改PPT", JUN[23]),
    Candidate(14, "取体检报告", JUN[29]),
    Candidate(15, "带材料去公司", JUN[24], 540),
]
MEETINGS = [2, 1, 12, 9]  # chronological

# (target_text, target_date, target_minute, expected ids best first)
CASES: list[tuple[str | None, date | None, int | None, list[int]]] = [
    # the meeting family: 会 means any meeting, never 聚会
    ("会", None, None, MEETINGS),
    ("会", JUN[19], None, [1]),
    ("会", JUN[19], 900, [1]),
    ("会", None, 600, [2, 12]),
    ("开会", None, None, MEETINGS),
    ("周会", None, None, [1, 9]),
    ("周会", JUN[26], None, [9]),
    ("周会", JUN[20], None, [1, 9]),  # nothing that day: the words alone decide
    ("例会", None, None, [12]),
    ("会议", None, None, [2]),
    ("评审会", None, None, [2]),
    ("明天的周会", None, None, [1, 9]),  # a leftover date word costs the words nothing they matched
    ("聚会", None, None, [6]),
    ("同学聚会", JUN[19], None, [6]),
    # similar titles: the exact title wins, shared words tie
    ("带材料", None, None, [3]),
    ("带材料去公司", None, None, [15]),
    ("材料", None, None, [3, 8, 15]),
    ("材料", JUN[19], None, [3, 8]),
    ("材料", JUN[19], 540, [3]),
    ("打印材料", None, None, [8]),
    ("打印", None, None, [8]),
    ("体检", None, None, [5, 14]),
    ("年度体检", None, None, [5]),
    ("体检报告", None, None, [14]),
    ("体检", JUN[19], None, [5, 14]),
    ("体检", JUN[29], None, [14]),
    # a person, a dinner
    ("王总", None, None, [4]),
    ("和王总吃饭", None, None, [4]),
    ("王总吃饭", None, None, [4]),
    ("和王总的饭局", None, None, [4]),
    ("吃饭", None, None, [4]),
    ("饭局", None, None, [4]),  # meals are one kind of thing, as meetings are
    ("聚餐", JUN[20], None, [4]),
    ("晚饭", None, None, [4]),
    ("妈妈", None, None, [10]),
    ("给妈妈打电话的那个提醒", None, None, [10]),
    ("打电话", JUN[18], 1200, [10]),
    ("交房租", None, None, [7]),
    ("房租", None, None, [7]),
    ("交电费", None, None, [11]),
    ("电费", None, None, [11]),
    ("ppt", None, None, [13]),
    ("ＰＰＴ", None, None, [13]),
    # generic words weigh nothing; the date/time alone then picks
    ("那个提醒", JUN[19], None, [3, 1, 6, 8]),
    (None, JUN[19], 900, [1]),
    ("", JUN[18], None, [2, 10]),
    ("这个日程", None, 600, [2, 12]),
    (None, JUN[21], None, []),
    (None, JUN[19], 600, []),
    # no match
    ("那个提醒", None, None, []),
    (None, None, None, []),
    ("跑步", None, None, []),
    ("交水费", None, None, []),  # 交 alone is a third of the words: not enough
    ("会员卡", None, None, []),
    ("跑步", JUN[19], None, []),
]


def _ids(found: list[Candidate]) -> list[int]:
    return [c.id for c in found]


@pytest.fixture(scope="module")
def jieba_words() -> Callable[[str], list[str]]:
    warm_up()
    assert ready()
    return target_module._splitter(ITEMS)


@pytest.fixture(params=["characters", "jieba"])
def split(request: pytest.FixtureRequest) -> Callable[[str], list[str]]:
    if request.param == "characters":
        return target_module._fragments
    words: Callable[[str], list[str]] = request.getfixturevalue("jieba_words")
    return words


@pytest.mark.parametrize(("text", "on", "minute", "expected"), CASES)
def test_matching_table(split: Callable[[str], list[str]], text: str | None, on: date | None, minute: int | None,
                        expected: list[int]) -> None:
    found = target_module._rank(text, ITEMS, on, minute, split)
    assert _ids(found) == expected, (text, on, minute, [c.title for c in found])


@pytest.mark.parametrize(("text", "on", "minute", "expected"), CASES[::4])
def test_public_rank_after_warm_up(jieba_words: Callable[[str], list[str]], text: str | None, on: date | None,
                                   minute: int | None, expected: list[int]) -> None:
    assert _ids(rank(text, ITEMS, target_date=on, target_minute=minute)) == expected


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_order_does_not_depend_on_the_input_order(split: Callable[[str], list[str]], seed: int) -> None:
    shuffled = ITEMS[:]
    random.Random(seed).shuffle(shuffled)
    for text, on, minute, expected in CASES:
        assert _ids(target_module._rank(text, shuffled, on, minute, split)) == expected, text


def test_same_title_same_day_ties_by_time_then_id(split: Callable[[str], list[str]]) -> None:
    items = [Candidate(31, "吃药", JUN[19], 1200), Candidate(30, "吃药", JUN[19], 480), Candidate(29, "吃药", JUN[19]),
             Candidate(28, "吃药", JUN[19])]
    assert _ids(target_module._rank("吃药", items, None, None, split)) == [30, 31, 28, 29]


def test_no_candidates(split: Callable[[str], list[str]]) -> None:
    assert target_module._rank("会", [], JUN[19], 900, split) == []


# The parser's own target words and dates, fed to the matcher the way the conversation handler does.
SENTENCES = [
    ("把明天的会取消", CancelIntent, [1]),
    ("明天下午3点的周会取消", CancelIntent, [1]),
    ("带材料那个完成了", CompleteIntent, [3]),
    ("体检做完了", CompleteIntent, [5, 14]),
    ("交房租已完成", CompleteIntent, [7]),
    ("取消和王总的饭局", CancelIntent, [4]),
    ("和王总吃饭改到周五", UpdateIntent, [4]),
    ("删除明天的日程", CancelIntent, [3, 1, 6, 8]),
    ("把下周五的周会推迟一小时", UpdateIntent, [9]),
]


@pytest.mark.parametrize(("sentence", "kind", "expected"), SENTENCES)
def test_parsed_requests_find_their_item(jieba_words: Callable[[str], list[str]], sentence: str, kind: type,
                                         expected: list[int]) -> None:
    it = parse(sentence, now=NOW, tz=TZ)
    assert isinstance(it, kind), it
    assert isinstance(it, CancelIntent | CompleteIntent | UpdateIntent)
    for split in (target_module._fragments, jieba_words):
        found = target_module._rank(it.target_text, ITEMS, it.target_date, None, split)
        assert _ids(found) == expected, (sentence, it.target_text, it.target_date, split)


def test_the_users_titles_are_cut_as_one_word(jieba_words: Callable[[str], list[str]]) -> None:
    coined = "小王生日趴踢"
    mine = [Candidate(1, coined), Candidate(2, "小王"), Candidate(3, "生日蛋糕")]
    assert coined in target_module._splitter(mine)(f"取消{coined}")
    assert coined not in jieba_words(f"取消{coined}")  # another user's titles do not carry it
    assert _ids(rank(coined, mine)) == [1]


def test_one_users_titles_never_change_how_another_users_text_is_matched() -> None:
    """Bob's 打球 is found by "和小李打球" before and after Alice's 2,000 titles, 小李打 among them, were matched."""
    bob = [Candidate(1, "打球", JUN[19], 900, "event"), Candidate(2, "交周报", JUN[19])]
    asked = ["和小李打球", "周报", "小李", "交周报那个"]
    before = [_ids(rank(text, bob)) for text in asked]
    cut_before = [target_module._splitter(bob)(text) for text in asked]
    alice = [Candidate(i, f"{i}号{word}") for i, word in enumerate(["小李打", "周报交", "和小李", "李打球"] * 500)]
    alice += [Candidate(5000 + i, word) for i, word in enumerate(["小李打", "周报交", "和小李", "李打球"])]
    for text in ["小李打", "周报交", "和小李", "李打球"]:
        assert rank(text, alice)  # Alice's own words do find her items
    assert before == [[1], [2], [], [2]]
    assert [_ids(rank(text, bob)) for text in asked] == before
    assert [target_module._splitter(bob)(text) for text in asked] == cut_before


def test_matching_leaves_the_dictionary_as_jieba_ships_it() -> None:
    import jieba

    warm_up()
    tokenizer = target_module._SEGMENTER._tokenizer
    shipped = (len(tokenizer.FREQ), tokenizer.total, len(jieba.dt.FREQ), jieba.dt.total)
    titles = [Candidate(i, f"用户自己的标题{i}号事项") for i in range(2_000)]
    for i in range(0, 2_000, 100):
        assert _ids(rank(f"用户自己的标题{i}号事项", titles)) == [i]
    assert (len(tokenizer.FREQ), tokenizer.total, len(jieba.dt.FREQ), jieba.dt.total) == shipped


_SAME_SCRIPT = textwrap.dedent("""
    import sys
    import intent.target as target
    assert "jieba" not in sys.modules, "importing intent.target must not import jieba"

    items = [target.Candidate(1, "周会"), target.Candidate(2, "同学聚会"), target.Candidate(3, "带材料"),
             target.Candidate(4, "和大学同学聚餐"), target.Candidate(5, "水费")]
    asked = ["会", "带材料", "聚餐", "水费", "那个聚会"]
    first = [[c.id for c in target.rank(t, items)] for t in asked]  # the process's very first matches
    assert target.ready(), "rank must not answer before the dictionary is there (same text, same answer)"
    again = [[c.id for c in target.rank(t, items)] for t in asked]
    assert first == again, (first, again)
    by_words = [[c.id for c in target._rank(t, items, None, None, target._splitter(items))] for t in asked]
    assert first == by_words, (first, by_words)
    print(first)
""")


def test_the_same_text_is_matched_the_same_way_from_the_first_message_on() -> None:
    """No answer depends on the dictionary having finished loading; a process that warmed up at start
    and one that did not give the same matches."""
    cold = subprocess.run([sys.executable, "-c", _SAME_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=90)
    assert cold.returncode == 0, cold.stderr
    warm = subprocess.run([sys.executable, "-c", "import intent.target as t; t.warm_up()\n" + _SAME_SCRIPT.replace(
        'assert "jieba" not in sys.modules, "importing intent.target must not import jieba"', "")],
        cwd=ROOT, capture_output=True, text=True, timeout=90)
    assert warm.returncode == 0, warm.stderr
    assert cold.stdout == warm.stdout and cold.stdout.startswith("[[1], [3], [4], [5], [2]]"), cold.stdout
    assert cold.stderr == ""  # jieba's "Building prefix dict…" chatter is silenced
