"""The item in focus (docs/conversation.md#focus) and the short memory that goes with it, kept in `dialog_states.focus`.

The focus is what the conversation is about: the item(s) the last message created, changed, completed,
cancelled or snoozed, or the single item a query returned. A follow-up that names no item ("不对，是十一点",
"提前一刻钟提醒我", "取消吧") applies to it for `TTL_MS`. Beside it: the day of the last one-day query (那天),
fingerprints of recent creates (the same text twice is not stored twice) and the last few turns,
for the agent (it sees the conversation). Everything here is a small JSON value written with the message's unit of work.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from intent.followup import FocusHint
from render import outcome as o
from schedule.clock import from_ms
from schedule.domain import Item

TTL_MS = 30 * 60_000  # a follow-up applies to the focus for 30 minutes
SAME_TEXT_MS = 10 * 60_000  # the same request within 10 minutes is not stored again
TURNS_KEPT = 4  # the agent sees this many recent turns
TURN_CHARS = 100  # each side of a turn is cut to this length (the store is not an archive of what was said)
_WORDS = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Sent:
    """A create whose text may come again (the same request twice): the text's fingerprint, when, and what it stored."""

    print: str
    at: int
    ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Focus:
    ids: tuple[int, ...] = ()
    at: int = 0  # epoch ms the focus was set
    op: str = ""  # created | changed | completed | cancelled | snoozed | listed | restored | withdrawn
    on: str | None = None  # local ISO date of the item (the occurrence, for a series) or of a one-day query
    clock: str | None = None  # local HH:MM of the item in focus, when it has a time of day
    title: str | None = None  # the title of the (first) item in focus: its words restate it (话剧是两点半开演)
    sent: tuple[Sent, ...] = ()
    again: str | None = None  # the text refused as a repeat, stored on "再记一条"
    turns: tuple[tuple[str, str], ...] = field(default=())  # (user, bot), oldest first

    def live_ids(self, now_ms: int) -> tuple[int, ...]:
        """The items in focus while fresh."""
        return self.ids if self.ids and now_ms - self.at < TTL_MS else ()

    def day(self, now_ms: int) -> date | None:
        """那天 / 当天: the focus's day while fresh."""
        return date.fromisoformat(self.on) if self.on and now_ms - self.at < TTL_MS else None

    def hint(self, now_ms: int, tz: ZoneInfo) -> FocusHint | None:
        """What the parser may know of the focus (its day, and its time of day when it has one)."""
        if self.op == "digest" and now_ms - self.at < TTL_MS:
            return FocusHint(digest=True)  # digest changes in words: 改到晚上9点半 is about the push just set
        day = self.day(now_ms)
        if day is None:
            return None
        at = None
        if self.clock and self.live_ids(now_ms):
            hour, minute = (int(p) for p in self.clock.split(":"))
            at = datetime.combine(day, time(hour, minute), tzinfo=tz)
        return FocusHint(on=day, at=at, title=self.title if self.live_ids(now_ms) else None)

    def created_just_now(self, now_ms: int) -> tuple[int, ...]:
        """The items the last create stored, while an undo of that create still makes sense (10 minutes)."""
        return self.ids if self.op == "created" and now_ms - self.at < SAME_TEXT_MS else ()

    def repeat_of(self, text: str, now_ms: int) -> Sent | None:
        """The recent create of the same text (the same request twice), if any."""
        mark = fingerprint(text)
        return next((s for s in self.sent if s.print == mark and now_ms - s.at < SAME_TEXT_MS), None)

    def to_json(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "at": self.at, "op": self.op, "on": self.on, "clock": self.clock,
                "title": self.title,
                "sent": [[s.print, s.at, list(s.ids)] for s in self.sent], "again": self.again,
                "turns": [list(t) for t in self.turns]}

    @classmethod
    def from_json(cls, data: Any) -> Focus:
        """The stored focus; an empty one for a missing or unreadable value (never fails a message)."""
        if not isinstance(data, dict):
            return cls()
        try:
            return cls(ids=tuple(int(i) for i in data.get("ids") or ()), at=int(data.get("at") or 0),
                       op=str(data.get("op") or ""), on=data.get("on") or None, clock=data.get("clock") or None,
                       title=str(data["title"]) if data.get("title") else None,
                       sent=tuple(Sent(str(p), int(a), tuple(int(i) for i in ids))
                                  for p, a, ids in data.get("sent") or ()),
                       again=data.get("again") or None,
                       turns=tuple((str(u), str(b)) for u, b in data.get("turns") or ()))
        except (TypeError, ValueError):
            return cls()


def fingerprint(text: str) -> str:
    """The same request however it is punctuated or spaced: a short hash, not the text (privacy)."""
    return hashlib.sha256(_WORDS.sub("", text).lower().encode()).hexdigest()[:16]


_OPS = {"complete": "completed", "cancel": "cancelled", "update": "changed"}


def after(focus: Focus, outcomes: list[o.Outcome], *, text: str, now_ms: int, tz: str) -> Focus:
    """The focus once a message's outcomes are known: the last outcome that touched items takes it."""
    new = focus
    created: list[int] = []
    for x in outcomes:
        if isinstance(x, o.Created):
            created.append(x.item.id)
            new = _on(new, (x.item,), "created", None, now_ms, tz)
        elif isinstance(x, o.Changed):
            new = _on(new, (x.item,), _OPS[x.verb], x.occurrence_on, now_ms, tz)
        elif isinstance(x, o.ChangedAll) and x.changes:
            new = _on(new, tuple(c.item for c in x.changes), _OPS[x.verb], None, now_ms, tz)
        elif isinstance(x, o.Subscribed):  # the conversation is about the digest now (digest changes in words)
            new = replace(new, ids=(), op="digest", on=None, clock=None, title=None, at=now_ms)
        elif isinstance(x, o.Snoozed):
            new = _on(new, (x.item,), "snoozed", None, now_ms, tz)
        elif isinstance(x, o.Restored) and x.items:
            new = _on(new, x.items, "restored", None, now_ms, tz)
        elif isinstance(x, o.Withdrawn):
            new = replace(new, ids=(), op="withdrawn", title=None, at=now_ms,
                          sent=tuple(s for s in new.sent if not set(s.ids) & {i.id for i in x.items}))
        elif isinstance(x, o.Answered) and x.item is not None:  # 周会在哪开 → 改到三楼 is about that meeting
            new = _on(new, (x.item,), "listed", None, now_ms, tz)
        elif isinstance(x, o.Listed):
            one_day = x.end_ms - x.start_ms <= 25 * 3_600_000
            day = from_ms(x.start_ms).astimezone(_zone(tz)).date().isoformat() if one_day else None
            if len(x.items) == 1:
                new = _on(new, x.items, "listed", None, now_ms, tz)
            else:  # several (or none): a follow-up must say which; 那天 is the day asked about
                new = replace(new, ids=(), op="listed", clock=None, title=None, on=day, at=now_ms)
    if created:
        kept = tuple(s for s in new.sent if now_ms - s.at < SAME_TEXT_MS)
        new = replace(new, sent=(*kept, Sent(fingerprint(text), now_ms, tuple(created)))[-5:], again=None)
    return new


def with_turn(focus: Focus, user_text: str, bot_text: str) -> Focus:
    turn = (user_text[:TURN_CHARS], bot_text[:TURN_CHARS])
    return replace(focus, turns=(*focus.turns, turn)[-TURNS_KEPT:])


def _on(focus: Focus, items: tuple[Item, ...], op: str, day: str | None, now_ms: int, tz: str) -> Focus:
    """The focus on `items`: the day (and time of day) of the first, unless a day is given (an occurrence's)."""
    first = items[0]
    at = from_ms(first.anchor_at).astimezone(_zone(first.timezone or tz)) if first.anchor_at is not None else None
    clock = at.strftime("%H:%M") if at is not None and not first.all_day else None
    return replace(focus, ids=tuple(i.id for i in items), op=op, at=now_ms, clock=clock, title=first.title[:60],
                   on=day[:10] if day else (at.date().isoformat() if at is not None else None))


def _zone(tz: str) -> ZoneInfo:
    return ZoneInfo(tz)
