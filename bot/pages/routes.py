"""HTTP for the pages: GET /p/{token}, its one-tap POST (POST/redirect/GET), GET /ics/{token}.ics.

Every failure is a small friendly page (404 unknown link, 410 expired or revoked, 403 stale form),
never a stack trace; private pages are never cached and never leak their URL as a referrer.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pages.actions import BadTap, PageActions, Tap
from bot.pages.itinerary import INLINE_CARDS, BadRange, DayRange, ItineraryLoader, parse_range
from bot.pages.links import PageLinks, webcal
from bot.pages.tokens import LinkError
from render.html import PageActions as FormContext
from render.html import PageRenderer
from render.ics import calendar_feed
from render.subscribe import SubscribeButton
from schedule.clock import Clock, now_ms
from schedule.errors import NotFound
from schedule.service import ScheduleService

SubscribeFor = Callable[[str], Awaitable[SubscribeButton | None]]  # page URL → the button, None when unavailable
PRIVATE, SHARE, FEED = frozenset({"p"}), frozenset({"s"}), frozenset({"c"})
MAX_FORM_FIELDS = 20
SECURITY_HEADERS = {
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Robots-Tag": "noindex, nofollow",
    "Content-Security-Policy": ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
}
MESSAGES = {
    400: ("日期不对", "链接里的日期看不懂、不在 2000–2100 年之间，或者范围超过了 92 天。"),
    403: ("页面已过时", "这个页面打开太久了，请刷新后再点一次。"),
    404: ("找不到这个行程页", "链接不完整或者不存在。"),
    410: ("链接已失效", "这个链接已过期或已被取消分享。"),
}
TAP_MESSAGES = {  # a tap on a live page that could not be done: the way back is a fresh page
    403: ("页面已过时", "这个页面打开太久了，刷新后再点一次就好。"),
    404: ("这一项已经不在了", "它可能刚被改过或删除了，或者这个按钮已失效。"),
}
_ON_ITEM = frozenset({"complete", "cancel", "end", "undo-complete", "undo-cancel", "undo-end"})


class Pages:
    """The page endpoints' behaviour; the route functions below only translate HTTP."""

    def __init__(self, *, links: PageLinks, loader: ItineraryLoader, actions: PageActions, renderer: PageRenderer,
                 clock: Clock, subscribe: SubscribeFor | None = None) -> None:
        self.links, self.loader, self.actions, self.renderer, self.clock = links, loader, actions, renderer, clock
        self.subscribe = subscribe  # the 订阅通知 button (signed wx.config) on private pages

    def error(self, status: int, *, back: str = "") -> HTMLResponse:
        """The friendly page; `back` (the page the form came from, freshly loaded) is offered as the way on."""
        title, message = (TAP_MESSAGES if back else MESSAGES)[status]
        return HTMLResponse(self.renderer.error(status=status, title=title, message=message, back=back),
                            status_code=status, headers=SECURITY_HEADERS)

    async def page(self, token: str, raw_from: str | None, raw_to: str | None, did: str | None = None,
                   *, gzip_ok: bool = False, query: str = "") -> Response:
        try:
            claims = await self.links.resolve(token, scopes=PRIVATE | SHARE)
            tz = await self.loader.timezone(claims.user_id)
            if claims.scope == "s":  # a public share shows the coming week only, whatever the query says
                raw_from = raw_to = None
            span = parse_range(raw_from, raw_to, today=self.loader.today(tz))
        except LinkError as exc:
            return self.error(exc.status)
        except NotFound:
            return self.error(404)
        except BadRange:
            return self.error(400)
        private = claims.scope == "p"
        flash = await self.actions.describe(claims.user_id, did, tz=tz) if private else None
        view = await self.loader.itinerary(claims.user_id, tz, span, private=private, flash=flash)
        context = await self._form_context(token, claims.user_id, span) if private else None
        headers = SECURITY_HEADERS
        if context is not None and self.subscribe is not None:  # signed for the URL the browser shows
            button = await self.subscribe(f"{self.links.base_url}/p/{token}" + (f"?{query}" if query else ""))
            if button is not None:
                context = replace(context, subscribe=button)
                headers = {**SECURITY_HEADERS, "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"]
                           + f"; script-src https://res.wx.qq.com 'nonce-{button.script_nonce}'"}
        url = f"{self.links.base_url}/p/{token}"
        if view.count > INLINE_CARDS:  # a long page renders on a worker thread: the event loop serves others
            html = await asyncio.to_thread(self.renderer.itinerary, view, url=url, actions=context)
        else:
            html = self.renderer.itinerary(view, url=url, actions=context)
        return _html(html, gzip_ok=gzip_ok, headers=headers)

    async def act(self, token: str, form: dict[str, str] | None) -> Response:
        """One tap: `do` names the action (see bot.pages.actions); checked token, then the form (None: not one
        of ours, e.g. too many fields), then CSRF, then ownership. The answer is POST/redirect/GET back to the
        same range, saying what was done (with 撤销)."""
        try:
            claims = await self.links.resolve(token, scopes=PRIVATE)
        except LinkError as exc:
            return self.error(exc.status)
        if form is None:
            return self.error(400)
        user_id = claims.user_id
        try:
            tz = await self.loader.timezone(user_id)
        except NotFound:
            return self.error(404)
        try:
            span: DayRange | None = parse_range(form.get("from"), form.get("to"), today=self.loader.today(tz))
        except BadRange:
            span = None
        path = self.links.page_path(token, span.start_on, span.end_on) if span else self.links.page_path(token)
        if not await self.links.csrf_ok(token, form.get("csrf", "")):
            return self.error(403, back=path)
        try:
            tap = Tap.parse(form.get("do", ""))
            done = await self.actions.perform(user_id, tap, now_ms=now_ms(self.clock), tz=tz)
        except (BadTap, NotFound):
            return self.error(404, back=path)
        said = f"{'&' if '?' in path else '?'}{urlencode({'did': str(done)})}" if done is not None else ""
        anchor = f"#item-{tap.target}-{tap.on}" if tap.on else f"#item-{tap.target}" if tap.verb in _ON_ITEM else ""
        return RedirectResponse(path + said + anchor, status_code=303, headers=SECURITY_HEADERS)

    async def feed(self, token: str, *, head: bool = False) -> Response:
        try:
            claims = await self.links.resolve(token, scopes=FEED)
            tz = await self.loader.timezone(claims.user_id)
        except LinkError as exc:
            return self.error(exc.status)
        except NotFound:
            return self.error(404)
        items = await self.loader.feed_items(claims.user_id)
        body = calendar_feed(items, uid_domain=self.links.uid_domain, tz=tz)
        headers = {**SECURITY_HEADERS, "Content-Disposition": 'inline; filename="schedbot.ics"',
                   "Content-Length": str(len(body))}
        return Response(b"" if head else body, media_type="text/calendar; charset=utf-8", headers=headers)

    async def calendar_link(self, token: str) -> Response:
        """订阅到手机日历 on the page: the webcal:// feed link, handed out only to a live page token. The page
        carries this address rather than the feed's own (400 days), so forwarding a page leaks no feed."""
        try:
            claims = await self.links.resolve(token, scopes=PRIVATE)
        except LinkError as exc:
            return self.error(exc.status)
        url = webcal(await self.links.feed_url(claims.user_id))  # the live page's owner gets the live feed
        return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)

    async def _form_context(self, token: str, user_id: int, span: DayRange) -> FormContext:
        week = span.end_on - span.start_on
        return FormContext(
            base=f"/p/{token}", csrf=await self.links.csrf_for(token), range_from=span.start_on.isoformat(),
            range_to=(span.end_on - timedelta(days=1)).isoformat(),
            prev_href=self.links.page_path(token, span.start_on - week, span.start_on),
            next_href=self.links.page_path(token, span.end_on, span.end_on + week),
            feed_href=f"/p/{token}/calendar",  # never the feed itself: a forwarded page must not carry it
        )


def _html(html: str, *, gzip_ok: bool, headers: dict[str, str] | None = None) -> Response:
    """The page, gzip-compressed when the browser takes it (a week of cards is mostly repeated markup)."""
    headers = headers or SECURITY_HEADERS
    body = html.encode("utf-8")
    if not gzip_ok or len(body) < 1024:
        return Response(body, media_type="text/html; charset=utf-8", headers=headers)
    headers = {**headers, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
    return Response(gzip.compress(body, compresslevel=5, mtime=0), media_type="text/html; charset=utf-8",
                    headers=headers)


async def _form(request: Request) -> dict[str, str] | None:
    """The posted form's first values, or None when it has more fields than any of our forms."""
    raw = (await request.body()).decode("utf-8", "replace")
    try:
        parsed = parse_qs(raw, max_num_fields=MAX_FORM_FIELDS)
    except ValueError:  # "Max number of fields exceeded": answered after the token check, never a 500
        return None
    return {name: values[0] for name, values in parsed.items() if values}


def build_pages_router(pages: Pages) -> APIRouter:
    router = APIRouter(tags=["pages"], include_in_schema=False)

    @router.get("/p/{token}")
    async def itinerary_page(token: str, request: Request) -> Response:
        query = request.query_params
        return await pages.page(token, query.get("from"), query.get("to"), query.get("did"),
                                gzip_ok="gzip" in request.headers.get("accept-encoding", ""), query=request.url.query)

    @router.post("/p/{token}")
    async def page_action(token: str, request: Request) -> Response:
        return await pages.act(token, await _form(request))

    @router.get("/p/{token}/calendar")
    async def subscribe_calendar(token: str) -> Response:
        return await pages.calendar_link(token)

    @router.api_route("/ics/{token}.ics", methods=["GET", "HEAD"])
    async def calendar(token: str, request: Request) -> Response:
        return await pages.feed(token, head=request.method == "HEAD")

    return router


def pages_router(links: PageLinks, service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                 clock: Clock, *, subscribe: SubscribeFor | None = None) -> APIRouter:
    """Wire the page endpoints (templates are loaded here, once per app)."""
    pages = Pages(links=links, loader=ItineraryLoader(service, sessions, clock), actions=PageActions(service),
                  renderer=PageRenderer(), clock=clock, subscribe=subscribe)
    return build_pages_router(pages)
