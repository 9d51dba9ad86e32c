"""HTML pages from `templates/` through one Jinja2 Environment (autoescape on, templates loaded once)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from render.itinerary import Itinerary, summary
from render.subscribe import SubscribeButton

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@dataclass(frozen=True, slots=True)
class PageActions:
    """What the private page needs to print its one-tap forms (the public share page gets None)."""

    base: str  # /p/{token}: the one form posts here, each button naming its action ("complete:12")
    csrf: str
    range_from: str  # the shown range, echoed so the redirect comes back to it
    range_to: str
    prev_href: str
    next_href: str
    feed_href: str  # /p/{token}/calendar: redirects the page owner to the webcal:// feed (subscribe, not a copy)
    subscribe: SubscribeButton | None = None  # subscription messages: the 订阅通知 consent button, inside WeChat
    edit_href: str = ""  # /p/{token}/edit?from=…&to=…: each card's 修改 adds &item=ref


@dataclass(frozen=True, slots=True)
class PageNav:
    """Moving through dates (plain links and a GET form: changes nothing, so every private view has it)."""

    base: str  # /p/{token}
    prev_href: str
    next_href: str
    span_days: int  # what the arrows jump: the shown range's length
    jump_value: str  # the date input's value (the range's first day)


# Who reads a private page, and what they are told: the owner acts; anyone else reads only.
VIEWERS = frozenset({"owner", "visitor", "outside", "share"})


@dataclass(frozen=True, slots=True)
class EditForm:
    """The edit page of one item or one occurrence of a series."""

    action: str  # /p/{token}/edit
    back: str  # the page it came from
    csrf: str
    ref: str  # 12 or 12:2026-06-18
    range_from: str
    range_to: str
    title: str
    day: str  # YYYY-MM-DD
    clock: str  # HH:MM, "" for an all-day item
    location: str
    note: str
    occurrence: str  # 6月18日 when one occurrence of a series is edited, else ""
    error: str = ""


class PageRenderer:
    """Builds the Environment once; render calls are pure functions of the view model."""

    def __init__(self, directory: Path = TEMPLATES) -> None:
        self._env = Environment(loader=FileSystemLoader(directory), autoescape=True, undefined=StrictUndefined,
                                trim_blocks=True, lstrip_blocks=True, auto_reload=False)
        self._env.globals["SNOOZE"] = (("10m", "10 分钟后"), ("1h", "1 小时后"), ("morning", "明早"))
        self._itinerary = self._env.get_template("itinerary.html")
        self._edit = self._env.get_template("edit.html")
        self._empty = self._env.get_template("empty.html")
        self._error = self._env.get_template("error.html")

    def itinerary(self, view: Itinerary, *, url: str, actions: PageActions | None = None, nav: PageNav | None = None,
                  viewer: str | None = None) -> str:
        """The itinerary page (or the empty state); `url` is the page's own address for Open Graph. `actions` only
        for the owner; `viewer` says who else reads it (visitor: someone the link was forwarded to, inside
        WeChat; outside: a browser that is not WeChat's; share: a public share link)."""
        viewer = viewer or ("share" if view.shared else "owner")
        if viewer not in VIEWERS:
            raise ValueError(f"unknown viewer {viewer!r}")
        template = self._empty if view.empty else self._itinerary
        title = view.title if viewer == "owner" else view.title.replace("我的行程", "行程", 1)  # not the reader's
        return template.render(view=view, actions=actions, nav=nav, viewer=viewer, url=url,
                               description=summary(view).replace("\n", " "), page_title=title)

    def edit(self, form: EditForm) -> str:
        return self._edit.render(form=form, page_title=f"修改：{form.title}", url="", description="修改日程")

    def error(self, *, status: int, title: str, message: str, back: str = "") -> str:
        return self._error.render(status=status, page_title=title, title=title, message=message, url="",
                                  description=message, back=back)
