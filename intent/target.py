"""Which of a user's items a complete/cancel/update request means (the target): title words, date, time.

The target text is cut into words with jieba, the user's own titles (the candidates') kept whole; jieba's
dictionary itself is never changed. Loading it takes about a second: `serve`, `worker` and `chat` load it at
start, before the first message; a process that has not loads it on its first match, so the same text always
gets the same cut (same text, same answer). Only if the dictionary cannot load at all is the target cut at generic words
instead (a character matcher), for the process's whole life.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from intent.lexicon import is_meeting

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One of the user's items as the matcher sees it; `on`/`at_minute` are local (the occurrence's for series)."""

    id: int
    title: str
    on: date | None = None
    at_minute: int | None = None
    kind: str = "task"  # task | event


# Words that name no item: pointers, the item types themselves, particles. They carry no weight.
_GENERIC = (
    r"那个|这个|那条|这条|那件|这件|那场|这场|那次|这次|提醒|事情|的事|日程|待办|安排|行程|任务|计划|一下|我的|"
    r"帮我|给我|的|了|吧|呢|啊|和|跟|与|把|将"
)
_GENERIC_ONLY = re.compile(rf"(?:{_GENERIC})+")
_FRAGMENT_GAP = re.compile(rf"(?:{_GENERIC}|[\W_])+")
_WORDLIKE = re.compile(r"[^\W_]")
_PUNCTUATION = re.compile(r"[\W_]+")
_MEETING_TERM = re.compile(
    r"电话会议|视频会议|评审会|项目会|部门会|开会|会议|例会|周会|晨会|组会|早会|夕会|月会|站会|会|meeting"
)
# Meals are one kind of thing too: 饭局 / 聚餐 / 吃饭 / 午饭 name the same lunch with 小王.
_MEAL_TERM = re.compile(r"饭局|聚餐|吃饭|约饭|请客|宴请|午饭|晚饭|早饭|午餐|晚餐|早餐|便饭|饭|宴")
_FULL, _RELATED = 4, 3  # per character: the word itself in the title / another meeting (meal) word for one


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _bare(text: str) -> str:
    return _FRAGMENT_GAP.sub("", text)


def _fragments(text: str) -> list[str]:
    """The character matcher's words: the text cut at generic words and punctuation."""
    return [part for part in _FRAGMENT_GAP.split(_normal(text)) if part]


class _Segmenter:
    """jieba's own dictionary behind a lock: loaded once (lazily, off the request path), never changed after.

    A user's titles are not added to it: each cut takes that user's words as data (`own`), so one user's
    titles never change how another's text is cut, and the dictionary does not grow with the users."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self.failed = False

    @property
    def ready(self) -> bool:
        return self._tokenizer is not None

    @property
    def tokenizer(self) -> Any:
        """jieba's tokenizer, to read its dictionary (never to change it); None until loaded."""
        return self._tokenizer

    def load(self) -> None:
        """Import jieba and build its prefix dictionary (seconds, the first time: from its cache after)."""
        if self.ready:
            return
        import tempfile

        import jieba  # deferred: importing it costs ~150 ms, building the dictionary ~1 s

        jieba.setLogLevel(logging.WARNING)  # it logs "Building prefix dict…" to stderr on every load
        tokenizer = jieba.Tokenizer()
        tokenizer.tmp_dir = tempfile.gettempdir()  # the cache must go somewhere writable, whatever the cwd
        tokenizer.initialize()
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = tokenizer

    def words(self, text: str, own: frozenset[str] = frozenset()) -> list[str]:
        """The text's words: the user's own title words kept whole (longest first), jieba's cut between them."""
        tokens: list[str] = []
        for piece, whole in _own_pieces(_normal(text), own):
            tokens.extend([piece] if whole else self._tokenizer.lcut(piece))
        return [t for t in tokens if _WORDLIKE.search(t) and not _GENERIC_ONLY.fullmatch(t.strip())]


_SEGMENTER = _Segmenter()
_LONGEST_OWN = 20  # characters: longer title words are not looked for in the target text


def _own_words(candidates: Iterable[Candidate]) -> frozenset[str]:
    """The words a user's titles add to the cut: each title split at punctuation."""
    return frozenset(w for c in candidates for w in _PUNCTUATION.split(_normal(c.title))
                     if 2 <= len(w) <= _LONGEST_OWN)


def _own_pieces(text: str, own: frozenset[str]) -> list[tuple[str, bool]]:
    """The text cut around the user's words (leftmost, then longest), each piece marked whether it is one."""
    pieces: list[tuple[str, bool]] = []
    start = i = 0
    while own and i < len(text):
        for size in range(min(_LONGEST_OWN, len(text) - i), 1, -1):
            if text[i:i + size] in own:
                if start < i:
                    pieces.append((text[start:i], False))
                pieces.append((text[i:i + size], True))
                i = start = i + size
                break
        else:
            i += 1
    if start < len(text):
        pieces.append((text[start:], False))
    return pieces


def _splitter(candidates: Sequence[Candidate]) -> Callable[[str], list[str]]:
    """jieba's cut with these candidates' title words kept whole."""
    own = _own_words(candidates)
    return lambda text: _SEGMENTER.words(text, own)


def warm_up() -> None:
    """Load jieba's dictionary now (`serve` and `chat` do at start, before the first message); never raises."""
    _ensure_loaded()


def ready() -> bool:
    return _SEGMENTER.ready


def ensure_loaded() -> bool:
    """jieba's dictionary, loaded now if it was not (see `_ensure_loaded`); False when it cannot load."""
    return _ensure_loaded()


def is_word(text: str) -> bool:
    """Whether jieba's dictionary holds `text` as a word (the dictionary must be loaded)."""
    return bool(_SEGMENTER.tokenizer.FREQ.get(text))


def dictionary() -> tuple[dict[str, int], int]:
    """jieba's word counts and their total, read only (the dictionary must be loaded)."""
    tokenizer = _SEGMENTER.tokenizer
    return tokenizer.FREQ, tokenizer.total


def word_graph(text: str) -> dict[int, list[int]]:
    """For each position of `text`, the last positions of the dictionary words starting there (jieba's DAG)."""
    graph: dict[int, list[int]] = _SEGMENTER.tokenizer.get_DAG(text)
    return graph


def rank(
    target_text: str | None, candidates: Sequence[Candidate], *, target_date: date | None = None,
    target_minute: int | None = None,
) -> list[Candidate]:
    """The best-matching candidates (all those tied at the best score), best first; [] when nothing matches.

    The candidates are the user's own items: their titles are the only words added to the cut."""
    split = _splitter(candidates) if _ensure_loaded() else _fragments
    return _rank(target_text, candidates, target_date, target_minute, split)


def _ensure_loaded() -> bool:
    """jieba's dictionary, loaded now if start-up has not done it yet: the same text must be cut the same way in
    every process at any time after start (same text, same answer), so there is no "until it is loaded" answer. Only a
    dictionary that fails to load leaves the character matcher in charge, and then for good."""
    if _SEGMENTER.ready:
        return True
    if _SEGMENTER.failed:
        return False
    try:
        _SEGMENTER.load()
    except Exception:
        _SEGMENTER.failed = True
        _log.exception("jieba failed to load; target matching stays character-based")
        return False
    return True


def _rank(
    target_text: str | None, candidates: Sequence[Candidate], target_date: date | None, target_minute: int | None,
    split: Callable[[str], list[str]],
) -> list[Candidate]:
    """Text first (at least half the target's words found), then the date and the time narrow what is left."""
    units = split(target_text) if target_text else []
    scored: list[tuple[tuple[int, bool], Candidate]]
    if units:
        whole = "".join(units)
        scored = []
        for candidate in candidates:
            title = _normal(candidate.title)
            meeting = is_meeting(title)
            found = sum(_unit_score(unit, title, meeting) for unit in units)
            if found and 2 * found >= _FULL * len(whole):
                scored.append(((found, _bare(title) == _bare(whole)), candidate))
        hard = False
    elif target_date is not None or target_minute is not None:
        scored = [((0, False), c) for c in candidates]  # "明天的日程": the date alone picks
        hard = True
    else:
        return []
    if target_date is not None:
        scored = _narrow(scored, lambda c: c.on == target_date, hard)
    if target_minute is not None:
        scored = _narrow(scored, lambda c: c.at_minute == target_minute, hard)
    if not scored:
        return []
    best = max(score for score, _ in scored)
    return sorted((c for score, c in scored if score == best), key=_chronological)


def _narrow(
    scored: list[tuple[tuple[int, bool], Candidate]], keep: Callable[[Candidate], bool], hard: bool
) -> list[tuple[tuple[int, bool], Candidate]]:
    """Those that fit win; when none fits, the words alone decide (hard: when there are no words, nothing)."""
    fitting = [pair for pair in scored if keep(pair[1])]
    return fitting if fitting or hard else scored


def _unit_score(unit: str, title: str, title_is_meeting: bool) -> int:
    """Characters of `unit` found in `title`: the whole word, or runs of two or more, or a related meeting word."""
    if unit in title:
        # 会 inside 聚会/学会/会员 is not the meeting the user means.
        single_meeting = len(unit) == 1 and _MEETING_TERM.fullmatch(unit) is not None
        return _FULL * len(unit) if title_is_meeting or not single_meeting else 0
    covered = [0] * len(unit)
    for i in range(len(unit) - 1):
        if unit[i:i + 2] in title:
            covered[i] = covered[i + 1] = _FULL
    related = []
    if title_is_meeting and is_meeting(unit):  # 开会/例会/周会/会议 are the same kind of thing
        related = list(_MEETING_TERM.finditer(unit))
    elif _MEAL_TERM.search(title):
        related = list(_MEAL_TERM.finditer(unit))
    for term in related:
        for i in range(*term.span()):
            covered[i] = max(covered[i], _RELATED)
    return sum(covered)


def _chronological(candidate: Candidate) -> tuple[bool, date, bool, int, int]:
    return (candidate.on is None, candidate.on or date.min, candidate.at_minute is None, candidate.at_minute or 0,
            candidate.id)
