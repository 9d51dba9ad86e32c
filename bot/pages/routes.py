"""HTTP for the pages: GET /p/{token}, its one-tap POST (POST/redirect/GET), GET /ics/{token}.ics (answered by
bot.pages.feed). HEAD is answered like GET, without the body.

Every failure is a small friendly page (404 unknown link, 410 expired or revoked, 403 stale form or not the
owner), never a stack trace; private pages are never cached and never leak their URL as a referrer. A
private page acts only for its owner (bot.pages.visitor says who opened it); a GET never changes anything.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import timedelta
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pages.actions import BadTap, PageActions, Tap
from bot.pages.edit import BadEdit, Fields, PageEdits
from bot.pages.feed import CalendarFeed
from bot.pages.itinerary import INLINE_CARDS, BadRange, DayRange, ItineraryLoader, parse_range
from bot.pages.links import PageLinks, shares_notes, webcal
from bot.pages.tokens import LinkError
from bot.pages.visitor import (
    SESSION_COOKIE,
    SESSION_TTL_S,
    STATE_COOKIE,
    STATE_TTL_S,
    UNKNOWN_TTL_S,
    SignIn,
    clean_query,
    in_wechat,
    new_state,
    seal,
    state_ok,
    unseal,
)
from render.entry import date_label
from render.html import EditForm, PageNav, PageRenderer
from render.html import PageActions as FormContext
from render.itinerary import Flash
from render.subscribe import SubscribeButton
from schedule.clock import Clock, now_ms
from schedule.errors import InvalidChange, NotFound, QuotaExceeded
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
NOT_OWNER = ("只能查看", "只有这个行程页的主人能在微信里操作它。想要自己的行程页，在微信里对 schedbot 说“生成行程页”。")
SEEN = "seen:0"  # 知道了 on the undelivered-reminder notices
_ON_ITEM = frozenset({"complete", "cancel", "end", "undo-complete", "undo-cancel", "undo-end"})


class Pages:
    """The page endpoints' behaviour; the route functions below only translate HTTP."""

    def __init__(self, *, links: PageLinks, loader: ItineraryLoader, actions: PageActions, renderer: PageRenderer,
                 clock: Clock, calendar: CalendarFeed, subscribe: SubscribeFor | None = None,
                 oauth: SignIn | None = None, edits: PageEdits | None = None) -> None:
        self.links, self.loader, self.actions, self.renderer, self.clock = links, loader, actions, renderer, clock
        self.calendar = calendar
        self.subscribe = subscribe  # the 订阅通知 button (signed wx.config) on private pages
        self.oauth = oauth  # None: WeChat is not configured, and the private link is its holder's (a local demo)
        self.edits = edits
        self.secure_cookies = self.links.base_url.startswith("https://")

    def not_owner(self, back: str) -> HTMLResponse:
        title, message = NOT_OWNER
        return HTMLResponse(self.renderer.error(status=403, title=title, message=message, back=back),
                            status_code=403, headers=SECURITY_HEADERS)

    async def viewer(self, user_id: int, user_agent: str, cookies: Mapping[str, str]) -> str:
        """owner | visitor (someone else, in WeChat) | outside (not WeChat's browser) | login (WeChat's browser
        that has not said who it is yet: the page goes through WeChat's silent OAuth first)."""
        if self.oauth is None:
            return "owner"
        session = unseal(await self.links.session_key(), cookies.get(SESSION_COOKIE, ""),
                         now_s=now_ms(self.clock) // 1000)
        if session is not None and session.openid and session.openid == await self.loader.openid(user_id):
            return "owner"
        if not in_wechat(user_agent):
            return "outside"
        return "login" if session is None else "visitor"

    def _login(self, token: str, query: str) -> Response:
        """Off to WeChat's authorize URL; back at /p/{token}/login with a code, then at this page."""
        assert self.oauth is not None
        state = new_state()
        back = clean_query(query)
        redirect_uri = f"{self.links.base_url}/p/{token}/login" + (f"?{urlencode({'back': back})}" if back else "")
        response = RedirectResponse(self.oauth.authorize_url(redirect_uri, state), status_code=302,
                                    headers=SECURITY_HEADERS)
        response.set_cookie(STATE_COOKIE, state, max_age=STATE_TTL_S, path="/p/", secure=self.secure_cookies,
                            httponly=True, samesite="lax")
        return response

    async def login(self, token: str, code: str, state: str, back: str, state_cookie: str) -> Response:
        """WeChat's redirect back: the code becomes the visitor's openid (or an unknown visitor, for a while)."""
        try:
            await self.links.resolve(token, scopes=PRIVATE)
        except LinkError as exc:
            return self.error(exc.status)
        if self.oauth is None:
            return RedirectResponse(self.links.page_path(token), status_code=303, headers=SECURITY_HEADERS)
        openid = await self.oauth.openid(code) if state_ok(state_cookie, state) else None
        query = clean_query(back)
        response = RedirectResponse(f"/p/{token}" + (f"?{query}" if query else ""), status_code=303,
                                    headers=SECURITY_HEADERS)
        ttl = SESSION_TTL_S if openid else UNKNOWN_TTL_S
        value = seal(await self.links.session_key(), openid or "", now_s=now_ms(self.clock) // 1000, ttl_s=ttl)
        response.set_cookie(SESSION_COOKIE, value, max_age=ttl, path="/p/", secure=self.secure_cookies,
                            httponly=True, samesite="lax")
        response.delete_cookie(STATE_COOKIE, path="/p/", secure=self.secure_cookies, httponly=True, samesite="lax")
        return response

    def error(self, status: int, *, back: str = "") -> HTMLResponse:
        """The friendly page; `back` (the page the form came from, freshly loaded) is offered as the way on."""
        title, message = (TAP_MESSAGES if back else MESSAGES)[status]
        return HTMLResponse(self.renderer.error(status=status, title=title, message=message, back=back),
                            status_code=status, headers=SECURITY_HEADERS)

    async def page(self, token: str, raw_from: str | None, raw_to: str | None, did: str | None = None,
                   *, gzip_ok: bool = False, query: str = "", user_agent: str = "",
                   cookies: Mapping[str, str] | None = None) -> Response:
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
        viewer = await self.viewer(claims.user_id, user_agent, cookies or {}) if private else "share"
        if viewer == "login":
            return self._login(token, query)
        owner = viewer == "owner"
        flash = await self._flash(claims.user_id, did, tz=tz) if owner else None
        view = await self.loader.itinerary(claims.user_id, tz, span, private=private, owner=owner, flash=flash,
                                           share_notes=not private and shares_notes(claims.nonce))
        context = await self._form_context(token, claims.user_id, span) if owner else None
        nav = self._nav(token, span) if private else None
        headers = SECURITY_HEADERS
        if context is not None and self.subscribe is not None:  # signed for the URL the browser shows
            button = await self.subscribe(f"{self.links.base_url}/p/{token}" + (f"?{query}" if query else ""))
            if button is not None:
                context = replace(context, subscribe=button)
                headers = {**SECURITY_HEADERS, "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"]
                           + f"; script-src https://res.wx.qq.com 'nonce-{button.script_nonce}'"}
        url = f"{self.links.base_url}/p/{token}"
        if view.count > INLINE_CARDS:  # a long page renders on a worker thread: the event loop serves others
            html = await asyncio.to_thread(self.renderer.itinerary, view, url=url, actions=context, nav=nav,
                                           viewer=viewer)
        else:
            html = self.renderer.itinerary(view, url=url, actions=context, nav=nav, viewer=viewer)
        return _html(html, gzip_ok=gzip_ok, headers=headers)

    async def _flash(self, user_id: int, did: str | None, *, tz: str) -> Flash | None:
        if did == SEEN:
            return Flash("好的，这些未送达的提醒已标为已读。")
        if did and did.startswith("edit:") and did[5:].isdigit():
            try:
                item = await self.loader.item(user_id, int(did[5:]))
            except NotFound:
                return None
            return Flash(f"已修改“{item.title}”。")
        return await self.actions.describe(user_id, did, tz=tz)

    async def act(self, token: str, form: dict[str, str] | None, *, user_agent: str = "",
                  cookies: Mapping[str, str] | None = None) -> Response:
        """One tap: `do` names the action (see bot.pages.actions); checked token, then the form (None: not one
        of ours, e.g. too many fields), then CSRF, then the visitor (only the owner acts: a forwarded link
        alone does nothing), then the item's ownership. The answer is POST/redirect/GET back to the same range,
        saying what was done (with 撤销)."""
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
        if await self.viewer(user_id, user_agent, cookies or {}) != "owner":
            return self.not_owner(path)
        if form.get("do") == SEEN:  # 知道了: the notices are seen now, by the owner's own tap
            await self.loader.mark_seen(user_id)
            return RedirectResponse(path + f"{'&' if '?' in path else '?'}{urlencode({'did': SEEN})}",
                                    status_code=303, headers=SECURITY_HEADERS)
        try:
            tap = Tap.parse(form.get("do", ""))
            done = await self.actions.perform(user_id, tap, now_ms=now_ms(self.clock), tz=tz)
        except (BadTap, NotFound):
            return self.error(404, back=path)
        said = f"{'&' if '?' in path else '?'}{urlencode({'did': str(done)})}" if done is not None else ""
        anchor = f"#item-{tap.target}-{tap.on}" if tap.on else f"#item-{tap.target}" if tap.verb in _ON_ITEM else ""
        return RedirectResponse(path + said + anchor, status_code=303, headers=SECURITY_HEADERS)

    async def feed(self, token: str, headers: Mapping[str, str]) -> Response:
        """The calendar feed (304 to a re-poll whose validators hold, gzip when taken): bot.pages.feed."""
        try:
            return await self.calendar.answer(token, headers)
        except LinkError as exc:
            return self.error(exc.status)
        except NotFound:
            return self.error(404)

    async def calendar_link(self, token: str, *, user_agent: str = "",
                            cookies: Mapping[str, str] | None = None) -> Response:
        """订阅到手机日历 on the page: the webcal:// feed link, handed out only to the owner of a live page token.
        The page carries this address rather than the feed's own, so forwarding a page leaks no feed."""
        try:
            claims = await self.links.resolve(token, scopes=PRIVATE)
        except LinkError as exc:
            return self.error(exc.status)
        if await self.viewer(claims.user_id, user_agent, cookies or {}) != "owner":
            return self.not_owner(self.links.page_path(token))
        url = webcal(await self.links.feed_url(claims.user_id))  # the live page's owner gets the live feed
        return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)

    async def _form_context(self, token: str, user_id: int, span: DayRange) -> FormContext:
        week = span.end_on - span.start_on
        range_from, range_to = span.start_on.isoformat(), (span.end_on - timedelta(days=1)).isoformat()
        return FormContext(
            base=f"/p/{token}", csrf=await self.links.csrf_for(token), range_from=range_from, range_to=range_to,
            prev_href=self.links.page_path(token, span.start_on - week, span.start_on),
            next_href=self.links.page_path(token, span.end_on, span.end_on + week),
            feed_href=f"/p/{token}/calendar",  # never the feed itself: a forwarded page must not carry it
            edit_href=f"/p/{token}/edit?" + urlencode({"from": range_from, "to": range_to}),
        )

    def _nav(self, token: str, span: DayRange) -> PageNav:
        week = span.end_on - span.start_on
        return PageNav(base=f"/p/{token}", prev_href=self.links.page_path(token, span.start_on - week, span.start_on),
                       next_href=self.links.page_path(token, span.end_on, span.end_on + week), span_days=week.days,
                       jump_value=span.start_on.isoformat())

    # ------------------------------------------------------------ 修改 (owner only)
    async def edit_form(self, token: str, ref: str, raw_from: str | None, raw_to: str | None, *, user_agent: str,
                        cookies: Mapping[str, str]) -> Response:
        """The edit page of one card (a GET: it shows a form and changes nothing)."""
        try:
            claims = await self.links.resolve(token, scopes=PRIVATE)
            tz = await self.loader.timezone(claims.user_id)
        except LinkError as exc:
            return self.error(exc.status)
        except NotFound:
            return self.error(404)
        span = self._span_or_none(raw_from, raw_to, tz)
        back = self.links.page_path(token, span.start_on, span.end_on) if span else self.links.page_path(token)
        if await self.viewer(claims.user_id, user_agent, cookies) != "owner":
            return self.not_owner(back)
        assert self.edits is not None
        try:
            editing = await self.edits.load(claims.user_id, ref, tz=tz)
        except NotFound:
            return self.error(404, back=back)
        item = editing.item
        form = EditForm(action=f"/p/{token}/edit", back=back, csrf=await self.links.csrf_for(token), ref=ref,
                        range_from=span.start_on.isoformat() if span else "",
                        range_to=(span.end_on - timedelta(days=1)).isoformat() if span else "",
                        title=item.title, day=editing.day, clock=editing.clock, location=item.location or "",
                        note=item.description or "", occurrence=date_label(editing.on) if editing.on else "")
        return HTMLResponse(self.renderer.edit(form), headers=SECURITY_HEADERS)

    async def edit_save(self, token: str, form: dict[str, str] | None, *, user_agent: str,
                        cookies: Mapping[str, str]) -> Response:
        """保存: token, form, CSRF, owner, then the same service calls as chat; back to the page, saying so."""
        try:
            claims = await self.links.resolve(token, scopes=PRIVATE)
            tz = await self.loader.timezone(claims.user_id)
        except LinkError as exc:
            return self.error(exc.status)
        except NotFound:
            return self.error(404)
        if form is None:
            return self.error(400)
        span = self._span_or_none(form.get("from"), form.get("to"), tz)
        path = self.links.page_path(token, span.start_on, span.end_on) if span else self.links.page_path(token)
        if not await self.links.csrf_ok(token, form.get("csrf", "")):
            return self.error(403, back=path)
        if await self.viewer(claims.user_id, user_agent, cookies) != "owner":
            return self.not_owner(path)
        assert self.edits is not None
        fields = Fields(title=form.get("title", ""), day=form.get("day", ""), clock=form.get("clock", ""),
                        location=form.get("location", ""), note=form.get("note", ""))
        ref = form.get("item", "")
        try:
            saved = await self.edits.save(claims.user_id, ref, fields, tz=tz, now_ms=now_ms(self.clock))
        except NotFound:
            return self.error(404, back=path)
        except (BadEdit, InvalidChange, QuotaExceeded) as exc:
            message = str(exc) if isinstance(exc, BadEdit) else "这样改不了（时间或数量不合规则），没有做任何改动。"
            return HTMLResponse(self.renderer.edit(self._refill(token, form, fields, path, message)), status_code=400,
                                headers=SECURITY_HEADERS)
        said = f"{'&' if '?' in path else '?'}{urlencode({'did': f'edit:{saved.id}'})}" if saved is not None else ""
        return RedirectResponse(path + said + (f"#item-{saved.id}" if saved is not None else ""), status_code=303,
                                headers=SECURITY_HEADERS)

    def _refill(self, token: str, form: dict[str, str], fields: Fields, back: str, error: str) -> EditForm:
        return EditForm(action=f"/p/{token}/edit", back=back, csrf=form.get("csrf", ""), ref=form.get("item", ""),
                        range_from=form.get("from", ""), range_to=form.get("to", ""), title=fields.title,
                        day=fields.day, clock=fields.clock, location=fields.location, note=fields.note, occurrence="",
                        error=error)

    def _span_or_none(self, raw_from: str | None, raw_to: str | None, tz: str) -> DayRange | None:
        try:
            return parse_range(raw_from, raw_to, today=self.loader.today(tz))
        except BadRange:
            return None


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

    @router.api_route("/p/{token}", methods=["GET", "HEAD"])
    async def itinerary_page(token: str, request: Request) -> Response:
        query = request.query_params
        return await pages.page(token, query.get("from"), query.get("to"), query.get("did"),
                                gzip_ok="gzip" in request.headers.get("accept-encoding", ""), query=request.url.query,
                                user_agent=request.headers.get("user-agent", ""), cookies=request.cookies)

    @router.post("/p/{token}")
    async def page_action(token: str, request: Request) -> Response:
        return await pages.act(token, await _form(request), user_agent=request.headers.get("user-agent", ""),
                               cookies=request.cookies)

    @router.get("/p/{token}/login")
    async def page_login(token: str, request: Request) -> Response:
        query = request.query_params
        return await pages.login(token, query.get("code", ""), query.get("state", ""), query.get("back", ""),
                                 request.cookies.get(STATE_COOKIE, ""))

    @router.get("/p/{token}/edit")
    async def edit_page(token: str, request: Request) -> Response:
        query = request.query_params
        return await pages.edit_form(token, query.get("item", ""), query.get("from"), query.get("to"),
                                     user_agent=request.headers.get("user-agent", ""), cookies=request.cookies)

    @router.post("/p/{token}/edit")
    async def edit_save(token: str, request: Request) -> Response:
        return await pages.edit_save(token, await _form(request), user_agent=request.headers.get("user-agent", ""),
                                     cookies=request.cookies)

    @router.get("/p/{token}/calendar")
    async def subscribe_calendar(token: str, request: Request) -> Response:
        return await pages.calendar_link(token, user_agent=request.headers.get("user-agent", ""),
                                         cookies=request.cookies)

    @router.api_route("/ics/{token}.ics", methods=["GET", "HEAD"])
    async def calendar(token: str, request: Request) -> Response:
        return await pages.feed(token, request.headers)

    return router


def pages_router(links: PageLinks, service: ScheduleService, sessions: async_sessionmaker[AsyncSession],
                 clock: Clock, *, subscribe: SubscribeFor | None = None, oauth: SignIn | None = None) -> APIRouter:
    """Wire the page endpoints (templates are loaded here, once per app). `oauth` None: WeChat is not
    configured, and a private link acts for whoever holds it (the local demo)."""
    loader = ItineraryLoader(service, sessions, clock)
    calendar = CalendarFeed(links=links, loader=loader, sessions=sessions, clock=clock)
    pages = Pages(links=links, loader=loader, actions=PageActions(service), renderer=PageRenderer(), clock=clock,
                  calendar=calendar, subscribe=subscribe, oauth=oauth, edits=PageEdits(service))
    return build_pages_router(pages)
