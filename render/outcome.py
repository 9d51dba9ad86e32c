"""What a conversation step did, as facts: the handlers return these, `render.reply` words them.

Every value carries what the service returned (stored items, reminders, subscriptions), so a reply
built from an outcome can only claim what was stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from schedule.domain import DigestSubscription, Item, Reminder

Verb = Literal["complete", "cancel", "update"]


@dataclass(frozen=True, slots=True)
class Created:
    item: Item
    reminder_due_now: bool = False  # the reminder time had passed: it goes out at once (past times)
    hint_lead: bool = False  # other events get no reminder: offer to remind ahead
    explicit_no_reminder: bool = False
    rolled: bool = False  # a clock time already past today moved to tomorrow (past times roll forward): say 明天


@dataclass(frozen=True, slots=True)
class Asked:
    question: str


@dataclass(frozen=True, slots=True)
class Listed:
    start_ms: int
    end_ms: int
    tz: str
    items: tuple[Item, ...]
    kind: str | None = None  # event | task filter
    today: date | None = None  # the user's local date when asked (marks 今天/明天/已过期)
    page_url: str | None = None  # a long list: a page link with a short summary instead of the full list
    page_wanted: bool = False  # a page link is due; the link is made after the message's transaction
    rest: tuple[Item, ...] = ()  # the whole truth: the range is part of one day (or one kind): what else that day holds
    complete: bool = True  # False: the range held more than one request expands; `items` are the earliest


@dataclass(frozen=True, slots=True)
class Changed:
    verb: Verb
    item: Item
    before: Item | None = None  # the item as it was (update)
    occurrence_on: str | None = None  # one occurrence of a series was cancelled (its local day, or its start)
    text: str | None = None  # the reply, when the change said exactly what it did (a series' time, its end)


@dataclass(frozen=True, slots=True)
class ChangedAll:
    """Several items cancelled or completed at once ("明天的会都取消"); `skipped` could not be changed."""

    verb: Literal["complete", "cancel"]
    changes: tuple[Changed, ...]
    skipped: int = 0


@dataclass(frozen=True, slots=True)
class Restored:
    """撤销: the items the last cancel or complete closed, active again (empty: nothing to undo), and how many
    series it touched by one occurrence, which stay as they are."""

    items: tuple[Item, ...]
    series_left: int = 0


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """撤销 / 刚才那条删掉 right after a create: the items that create stored, deleted again."""

    items: tuple[Item, ...]


@dataclass(frozen=True, slots=True)
class Repeated:
    """The same request twice: again within minutes; `items` are what the first one stored."""

    items: tuple[Item, ...]


@dataclass(frozen=True, slots=True)
class Ambiguous:
    verb: Verb
    candidates: tuple[Item, ...]
    unnamed: bool = False  # the message named no item and nothing is in focus: these are the likely ones


@dataclass(frozen=True, slots=True)
class NoMatch:
    verb: Verb
    target: str


@dataclass(frozen=True, slots=True)
class Subscribed:
    digest: DigestSubscription


@dataclass(frozen=True, slots=True)
class Unsubscribed:
    had: bool


@dataclass(frozen=True, slots=True)
class Snoozed:
    item: Item
    reminder: Reminder


@dataclass(frozen=True, slots=True)
class NothingToSnooze:
    pass


@dataclass(frozen=True, slots=True)
class Dropped:
    """The user called off the pending question (算了)."""

    label: str = ""


@dataclass(frozen=True, slots=True)
class Linked:
    """A link the user asked for: the itinerary page, a public share link, the calendar feed."""

    what: Literal["page", "share", "feed", "unshare", "unfeed", "reset"]
    url: str | None = None
    done: bool = True


@dataclass(frozen=True, slots=True)
class Said:
    """Free text (the agent's answer, or a plain explanation)."""

    text: str


@dataclass(frozen=True, slots=True)
class Answered:
    """A question about one item (跟王总吃饭是哪天 / 周会在哪开): the item found, or None, and what was asked."""

    about: str
    asked: Literal["when", "where"]
    item: Item | None
    others: int = 0  # further items the words fit as well


@dataclass(frozen=True, slots=True)
class Failed:
    """Something could not be done; `why` is plain Chinese for the user."""

    why: str


Outcome = (Created | Asked | Listed | Changed | ChangedAll | Restored | Withdrawn | Repeated | Ambiguous | NoMatch
           | Subscribed
           | Unsubscribed | Snoozed | NothingToSnooze | Dropped | Linked | Said | Failed | Answered)


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything one message produced, in order, plus notices from the in-app queue."""

    outcomes: tuple[Outcome, ...]
    notices: tuple[str, ...] = field(default=())
    expired: int = 0  # how many of the notices are reminders that expired during downtime
    only_reminders: bool = True  # all notices are reminders (else: 未送达的消息 — digests, late answers)
