"""Test double for the time engine: `FakeTimex` finds given phrases and returns hand-built mentions."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from intent.timex.types import TimeMention


@dataclass
class FakeTimex:
    """`FakeTimex({"明天上午九点": dict(type="point", start=..., has_date=True, has_clock=True)})`."""

    phrases: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __call__(self, text: str, *, now: datetime, tz: ZoneInfo) -> list[TimeMention]:
        from intent.timex.types import TimeMention

        found: list[TimeMention] = []
        taken: list[tuple[int, int]] = []
        for phrase in sorted(self.phrases, key=len, reverse=True):
            at = text.find(phrase)
            if at < 0 or any(b < at + len(phrase) and at < e for b, e in taken):
                continue
            spec = {"type": "point", "rule": "fake", **self.phrases[phrase]}
            taken.append((at, at + len(phrase)))
            found.append(replace(TimeMention(span=(at, at + len(phrase)), text=phrase, type=spec.pop("type"),
                                             rule=spec.pop("rule")), **spec))
        return sorted(found, key=lambda m: m.span)
