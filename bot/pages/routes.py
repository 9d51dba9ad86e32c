"""HTTP for the pages: GET /p/{token}, its one-tap POST (POST/redirect/GET), GET /ics/{token}.ics.

Every failure is a small friendly page (404 unknown link, 410 expired or revoked, 403 stale form),
never a stack trace; private pages are never cached and never leak their URL as a referrer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pages.actions import SNOOZE_CHOICES, PageActions
from bot.pages.itinerary import BadRange, DayRange, ItineraryLoader, parse_range
from bot.pages.links import PageLinks
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
ACTIONS = frozenset({"complete", "cancel", "snooze", "dismiss"})
SECURITY_HEADERS = {
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Robots-Tag": "noindex, nofollow",
    "Content-Security-Policy": ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
}
MESSAGES = {
    400: ("日期不对", "链接里的日期看不懂，或者范围超过了 92 天。"),
    403: ("页面已过时", "这个页面打开太久了，请刷新后再点一次。"),
    404: ("找不到这个行程页", "链接不完整或者不存在。"),
    410: ("链接已失效", "这个链接已过期或已被取消分享。"),
}


class Pages:
    """The page endpoints' behaviour; the route functions below only translate HTTP."""

    def __init__(self, *, links: PageLinks, loader: ItineraryLoader, actions: PageActions, renderer: PageRenderer,
                 clock: Clock, subscribe: SubscribeFor | None = None) -> None:
        self.links, self.loader, self.actions, self.renderer, self.clock = links, loader, actions, renderer, clock
        self.subscribe = subscribe  # issue 30: the 订阅通知 button (signed wx.config) on private pages

    def error(self, status: int) -> HTMLResponse:
        title, message = MESSAGES[status]
        return HTMLResponse(self.renderer.error(status=status, title=title, message=message), status_code=status,
                            headers=SECURITY_HEADERS)

    async def page(self, token: str, raw_from: str | None, raw_to: str | None, query: str = "") -> Response:
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
        view = await self.loader.itinerary(claims.user_id, tz, span, private=private)
        context = await self._form_context(token, claims.user_id, span) if private else None
        headers = SECURITY_HEADERS
        if context is not None and self.subscribe is not None:  # issue 30: signed for the URL the browser shows
            button = await self.subscribe(f"{self.links.base_url}/p/{token}" + (f"?{query}" if query else ""))
            if button is not None:
                context = replace(context, subscribe=button)
                headers = {**SECURITY_HEADERS, "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"]
                           + f"; script-src https://res.wx.qq.com 'nonce-{button.script_nonce}'"}
        html = self.renderer.itinerary(view, url=f"{self.links.base_url}/p/{token}", actions=context)
        return HTMLResponse(html, headers=headers)

    async def act(self, token: str, form: dict[str, str]) -> Response:
        """One tap: `do` is action:id (snooze:id:delay); checked token, then CSRF, then ownership."""
        try:
            claims = await self.links.resolve(token, scopes=PRIVATE)
        except LinkError as exc:
            return self.error(exc.status)
        if not await self.links.csrf_ok(token, form.get("csrf", "")):
            return self.error(403)
        action, _, rest = form.get("do", "").partition(":")
        target, _, delay = rest.partition(":")
        if not (target.isascii() and target.isdigit()) or len(target) > 18 or action not in ACTIONS:
            return self.error(404)
        if action == "snooze" and delay not in SNOOZE_CHOICES:
            return self.error(404)
        target_id, user_id = int(target), claims.user_id
        try:
            tz = await self.loader.timezone(user_id)
            if action == "complete":
                await self.actions.complete(user_id, target_id)
            elif action == "cancel":
                await self.actions.cancel(user_id, target_id)
            elif action == "snooze":
                await self.actions.snooze(user_id, target_id, delay, now_ms=now_ms(self.clock), tz=tz)
            else:
                await self.actions.dismiss(user_id, target_id)
        except NotFound:
            return self.error(404)
        try:
            span: DayRange | None = parse_range(form.get("from"), form.get("to"), today=self.loader.today(tz))
        except BadRange:
            span = None
        path = self.links.page_path(token, span.start_on, span.end_on) if span else self.links.page_path(token)
        anchor = f"#item-{target_id}" if action != "dismiss" else ""
        return RedirectResponse(path + anchor, status_code=303, headers=SECURITY_HEADERS)

    async def feed(self, token: str) -> Response:
        try:
            claims = await self.links.resolve(token, scopes=FEED)
            tz = await self.loader.timezone(claims.user_id)
        except LinkError as exc:
            return self.error(exc.status)
        except NotFound:
            return self.error(404)
        items = await self.loader.feed_items(claims.user_id)
        body = calendar_feed(items, uid_domain=self.links.uid_domain, tz=tz)
        headers = {**SECURITY_HEADERS, "Content-Disposition": 'inline; filename="schedbot.ics"'}
        return Response(body, media_type="text/calendar; charset=utf-8", headers=headers)

    async def _form_context(self, token: str, user_id: int, span: DayRange) -> FormContext:
        week = span.end_on - span.start_on
        return FormContext(
            base=f"/p/{token}", csrf=await self.links.csrf_for(token), range_from=span.start_on.isoformat(),
            range_to=(span.end_on - timedelta(days=1)).isoformat(),
            prev_href=self.links.page_path(token, span.start_on - week, span.start_on),
            next_href=self.links.page_path(token, span.end_on, span.end_on + week),
            feed_href=await self.links.feed_url(user_id),
        )


async def _form(request: Request) -> dict[str, str]:
    raw = (await request.body()).decode("utf-8", "replace")
    parsed = parse_qs(raw, max_num_fields=20)
    return {name: values[0] for name, values in parsed.items() if values}


def build_pages_router(pages: Pages) -> APIRouter:
    router = APIRouter(tags=["pages"], include_in_schema=False)

    @router.get("/p/{token}")
    async def itinerary_page(token: str, request: Request) -> Response:
        return await pages.page(token, request.query_params.get("from"), request.query_params.get("to"),
                                request.url.query)

    @router.post("/p/{token}")
    async def page_action(token: str, request: Request) -> Response:
        return await pages.act(token, await _form(request))

    @router.get("/ics/{token}.ics")
    async def calendar(token: str) -> Response:
        return await pages.feed(token)

    return router


def pages_router(links: PageLinks, service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                 clock: Clock, *, subscribe: SubscribeFor | None = None) -> APIRouter:
    """Wire the page endpoints (templates are loaded here, once per app)."""
    pages = Pages(links=links, loader=ItineraryLoader(service, sessions, clock), actions=PageActions(service),
                  renderer=PageRenderer(), clock=clock, subscribe=subscribe)
    return build_pages_router(pages)
