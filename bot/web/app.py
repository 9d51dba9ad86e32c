"""The composition root: `create_app(settings, *, clock, agent, ...)` wires every port."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi_offline import FastAPIOffline
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot import heap
from bot.agent import build_agent
from bot.agent.scheduled import RunnerTask, request_runner, run_lease_ms
from bot.conversation import ConversationHandler
from bot.logging_setup import RequestLog, loggable_path
from bot.pages.links import PageLinks
from bot.pages.routes import pages_router
from bot.pages.visitor import WebOAuth
from bot.wiring import IN_PROCESS_BATCH, WorkerTask, delivery_worker, push_budget_of, wechat_client
from bot.settings import Settings
from bot.web import api, home
from bot.web.headers import SecurityHeaders
from bot.web.metrics import CONTENT_TYPE_LATEST, Metrics, allowed
from bot.wechat import incident
from bot.wechat.endpoint import MAX_BODY_BYTES, WeChatFastPath, build_wechat_router, replay_spool
from bot.wechat.handler import Handler
from bot.wechat.jsapi import JsApiTickets, jsapi_router, subscribe_button
from bot.wechat.spool import Spool, SpoolReplayer
from intent import target
from schedule import holiday_store
from schedule.clock import Clock, SystemClock, now_ms
from schedule.db import create_engine, session_factory
from schedule.errors import InvalidChange, NotFound
from schedule.migrate import upgrade
from schedule.service import ScheduleService

log = logging.getLogger("schedbot")


class BodyLimit:
    """Refuse request bodies over the limit with 413 before any handler reads them."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await JSONResponse({"detail": "request body too large"}, status_code=413)(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await JSONResponse({"detail": "request body too large"}, status_code=413)(scope, receive, send)


class _TooLarge(HTTPException):
    """Raised from `receive` once a chunked body passes the limit: FastAPI re-raises HTTPExceptions from body
    parsing (any other error becomes 400 "There was an error parsing the body"), so the answer is 413."""

    def __init__(self) -> None:
        super().__init__(413, "request body too large")


class SchedbotApp(FastAPI):
    """FastAPI, with GET and POST `/wechat` answered before the framework's own middleware stack.

    WeChat's callbacks are nearly all the traffic. They keep what every request gets here (`RequestLog`'s
    id, access line and histogram, `BodyLimit`'s 413, a JSON 500 should anything escape), but skip
    Starlette's and FastAPI's layers (error and telemetry middleware, FastAPI's body limit) that a
    callback never needs: ~3 % of a message's CPU (py-spy on the webhook bench). Every other request,
    and `/wechat` on any other method, goes through the framework as before. `FastAPIOffline` is a factory
    of plain FastAPI objects, so `create_app` turns its object into this subclass (`adopt`), which adds only
    this routing.
    """

    _wechat: ASGIApp | None = None

    @classmethod
    def adopt(cls, app: FastAPI) -> SchedbotApp:
        app.__class__ = cls
        return app  # type: ignore[return-value]

    def serve_wechat_first(self, router: Any) -> None:
        self._wechat = RequestLog(self._guarded(BodyLimit(WeChatFastPath(super().__call__, router=router))))

    @staticmethod
    def _guarded(inner: ASGIApp) -> ASGIApp:
        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            try:
                await inner(scope, receive, send)
            except Exception:
                log.exception("unhandled error on %s /wechat", scope.get("method"))
                with contextlib.suppress(RuntimeError):  # the answer had begun: the server closes the connection
                    await JSONResponse({"detail": "internal error"}, status_code=500)(scope, receive, send)

        return guarded

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._wechat is not None and WeChatFastPath.takes(scope):
            await self._wechat(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(NotFound)
    async def _not_found(_request: Request, _exc: NotFound) -> JSONResponse:
        return JSONResponse({"detail": "not found"}, status_code=404)

    @app.exception_handler(InvalidChange)
    async def _invalid(_request: Request, exc: InvalidChange) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", ""))[:300]}
            for err in exc.errors()[:20]
        ]
        return JSONResponse({"detail": problems}, status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, loggable_path(request.url.path))
        return JSONResponse({"detail": "internal error"}, status_code=500)


HOLIDAY_REFRESH_S = 600  # a schedule loaded by `schedbot holidays load` reaches every web process this soon


async def _keep_holidays_fresh(sessions: async_sessionmaker[AsyncSession]) -> None:
    while True:
        await asyncio.sleep(HOLIDAY_REFRESH_S)
        await holiday_store.refresh(sessions)


def create_app(
    settings: Settings,
    *,
    clock: Clock | None = None,
    agent: Any = None,
    handler: Handler | None = None,
    engine: AsyncEngine | None = None,
    run_worker: bool | None = None,
    reply_budget_s: float = 4.0,
) -> FastAPI:
    """Build the web app. Ports not given get their production implementation.

    `run_worker` (default: H5_REMINDER_WORKER_ENABLED) runs the delivery worker in-process;
    `reply_budget_s` is how long a WeChat answer may take before it goes through the outbox.
    """
    clock = clock or SystemClock()
    owns_engine = engine is None
    engine = engine or create_engine(settings.DATABASE_URL)
    sessions: async_sessionmaker[AsyncSession] = session_factory(engine)
    service = ScheduleService(sessions, clock, default_timezone=settings.H5_DEFAULT_TIMEZONE,
                              max_active_items=settings.H5_MAX_ACTIVE_ITEMS)
    client = wechat_client(settings, sessions, clock)
    page_links = PageLinks(settings, sessions, clock)

    async def agent_page_link(user_id: int, start_ms: int, end_ms: int) -> str:
        return await page_links.itinerary_url(user_id, start_ms=start_ms, end_ms=end_ms)

    owns_agent = agent is None
    page_link = agent_page_link if settings.H5_SCHEDULE_ENABLED else None
    if agent is None:  # the agent's plan-page tool links to /p/… only where the pages are served
        agent = build_agent(settings, service=service, sessions=sessions, clock=clock, page_link=page_link)
    # scheduled runs get an LLM client of their own (its own connection pool), capped apart from chat
    run_agent = (build_agent(settings, service=service, sessions=sessions, clock=clock, page_link=page_link)
                 if owns_agent else agent)
    handler = handler or ConversationHandler(
        service, clock, agent=agent, links=page_links if settings.H5_SCHEDULE_ENABLED else None,
        meeting_offset_minutes=settings.H5_REMINDER_DEFAULT_MEETING_OFFSET_MINUTES,
        dialog_ttl_minutes=settings.H5_DIALOG_TTL_MINUTES,
        subscribe_template_id=settings.WECHAT_SUBSCRIBE_TEMPLATE_ID if client is not None else "",
        request_limit=settings.SCHEDULED_REQUESTS_PER_USER)
    worker = delivery_worker(settings, sessions, clock, client, batch_size=IN_PROCESS_BATCH)
    background = WorkerTask(worker)
    requests = request_runner(sessions, clock, service, run_agent,
                              catchup_hours=settings.H5_REMINDER_CATCHUP_HOURS,
                              poll_interval_s=settings.H5_REMINDER_SCAN_INTERVAL_MS / 1000,
                              lease_ms=run_lease_ms(settings), concurrency=settings.SCHEDULED_REQUEST_CONCURRENCY,
                              push_budget=push_budget_of(settings),
                              on_queued=worker.notify)  # requests run later, answers pushed by the worker
    requests_task = RunnerTask(requests)
    if run_worker is None:
        run_worker = settings.H5_REMINDER_WORKER_ENABLED
    router, replayer = None, None
    if settings.H5_WECHAT_MP_ENABLED:
        spool = Spool(settings.SPOOL_DIR)
        router = build_wechat_router(settings=settings, sessions=sessions, clock=clock, handler=handler,
                                     client=client, users=service, reply_budget_s=reply_budget_s, spool=spool)
        replayer = SpoolReplayer(spool, partial(replay_spool, spool, router.dispatcher))

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if settings.DATABASE_AUTO_MIGRATE:
            await upgrade(engine)
        await holiday_store.refresh(sessions)  # the official holiday schedules an operator loaded
        calendar = asyncio.create_task(_keep_holidays_fresh(sessions), name="holiday-schedules")
        # jieba's dictionary loads before the first request (the same text gets the same answer from the first
        # message on), off the event loop; then the start-up heap is frozen out of the GC's full passes
        await asyncio.to_thread(target.warm_up)
        threading.Thread(target=heap.settle, name="warm-up", daemon=True).start()
        if not settings.wechat_configured:
            log.info("WeChat is not configured: set %s to enable /wechat",
                     ", ".join(settings.missing_wechat_variables))
        if run_worker:
            background.start()
            requests_task.start()
        if replayer is not None:
            replayer.start()  # what an earlier outage (or a process that died) spooled goes out now
        try:
            yield
        finally:
            calendar.cancel()
            if replayer is not None:
                await replayer.stop()
            await requests_task.stop()
            await background.stop()
            if router is not None:
                await router.dispatcher.drain()
            if client is not None:
                await client.aclose()
            if owns_agent:
                await agent.aclose()
                await run_agent.aclose()
            if owns_engine:
                await engine.dispose()

    # Docs assets come from the package (fastapi-offline), not a CDN often unreachable in mainland China;
    # validatorUrl None stops Swagger UI from fetching a badge from validator.swagger.io.
    app = SchedbotApp.adopt(FastAPIOffline(title="schedbot", version=home.VERSION, lifespan=lifespan,
                                           swagger_ui_parameters={"validatorUrl": None}))
    app.state.settings, app.state.clock, app.state.service = settings, clock, service
    app.state.sessions, app.state.engine = sessions, engine
    app.state.agent, app.state.handler = agent, handler
    app.state.wechat_client, app.state.wechat_router, app.state.worker = client, router, worker
    app.state.page_links, app.state.spool_replayer = page_links, replayer
    app.state.requests = requests
    _install_error_handlers(app)
    jsapi = JsApiTickets(client, sessions, clock, api_base=settings.WECHAT_API_BASE) if client is not None else None
    subscribe = (subscribe_button(jsapi, settings.WECHAT_SUBSCRIBE_TEMPLATE_ID)  # the 订阅通知 button
                 if jsapi is not None and settings.WECHAT_SUBSCRIBE_TEMPLATE_ID else None)
    if settings.H5_SCHEDULE_ENABLED:
        app.include_router(api.router)
        oauth = (WebOAuth(app_id=settings.WECHAT_APP_ID, app_secret=settings.WECHAT_APP_SECRET,
                          api_base=settings.WECHAT_API_BASE, oauth_base=settings.WECHAT_OAUTH_BASE,
                          timeout_s=settings.WECHAT_API_TIMEOUT_S)
                 if settings.WECHAT_APP_ID and settings.WECHAT_APP_SECRET else None)  # who opens a page (web OAuth)
        app.include_router(pages_router(page_links, service, sessions, clock, subscribe=subscribe, oauth=oauth))
    if router is not None:
        app.include_router(router)
    if jsapi is not None:  # the JS-SDK signature for our pages
        app.state.jsapi = jsapi
        app.include_router(jsapi_router(jsapi, public_base_url=settings.PUBLIC_BASE_URL))

    app.include_router(home.router)

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> JSONResponse:
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception:
            log.warning("health check: database unreachable")
            return JSONResponse({"status": "degraded", "database": "unreachable"}, status_code=503)
        # Public: ok or degraded, nothing more. What is wrong with WeChat (bad AppID/secret, the server's IP
        # missing from the whitelist, an incident any worker met) is for the operator: the ERROR line, `doctor`.
        degraded = client is not None and client.misconfigured is not None
        degraded = degraded or bool(await incident.standing(sessions, now_ms(clock)))
        return JSONResponse({"status": "degraded" if degraded else "ok", "database": "ok"})

    metrics = Metrics(sessions, clock)

    networks = settings.metrics_networks

    @app.get("/metrics", tags=["ops"], response_class=Response)
    async def prometheus_metrics(request: Request) -> Response:
        """Prometheus text format: outbox backlog, delivery attempts and latency, webhook latency. Only for
        METRICS_ALLOW (the backlog is nobody else's business, and a scrape reads the database)."""
        if not allowed(request.client.host if request.client else None, request.headers.get("x-forwarded-for"),
                       networks):
            raise HTTPException(status_code=404)
        return Response(await metrics.render(), media_type=CONTENT_TYPE_LATEST)

    if router is not None:
        app.serve_wechat_first(router)
    app.add_middleware(SecurityHeaders)  # innermost: no-store on the API, CSP on / and the docs
    app.add_middleware(BodyLimit)
    app.add_middleware(RequestLog)  # outermost: every answer, 413s included, gets an id and an access line
    return app
