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


class PageRenderer:
    """Builds the Environment once; render calls are pure functions of the view model."""

    def __init__(self, directory: Path = TEMPLATES) -> None:
        self._env = Environment(loader=FileSystemLoader(directory), autoescape=True, undefined=StrictUndefined,
                                trim_blocks=True, lstrip_blocks=True, auto_reload=False)
        self._env.globals["SNOOZE"] = (("10m", "10 分钟"), ("1h", "1 小时"), ("morning", "明早"))
        self._itinerary = self._env.get_template("itinerary.html")
        self._empty = self._env.get_template("empty.html")
        self._error = self._env.get_template("error.html")

    def itinerary(self, view: Itinerary, *, url: str, actions: PageActions | None = None) -> str:
        """The itinerary page (or the empty state); `url` is the page's own address for Open Graph."""
        template = self._empty if view.empty else self._itinerary
        return template.render(view=view, actions=actions, url=url, description=summary(view).replace("\n", " "),
                               page_title=view.title)

    def error(self, *, status: int, title: str, message: str, back: str = "") -> str:
        return self._error.render(status=status, page_title=title, title=title, message=message, url="",
                                  description=message, back=back)
