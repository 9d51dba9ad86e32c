"""The web app: `create_app(settings, ...)` serves the ports `bot.wiring.web` built with routes and middleware."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from starlette.types import ASGIApp, Receive, Scope, Send

from bot import heap, wiring
from bot.agent.port import Agent
from bot.logging_setup import RequestLog, loggable_path
from bot.pages.routes import pages_router
from bot.settings import Settings
from bot.web import api, home
from bot.web.headers import SecurityHeaders
from bot.web.health import health_router
from bot.web.metrics import Metrics, metrics_router
from bot.web.middleware import BodyLimit, guarded
from bot.wechat.endpoint import WeChatRouter, serves
from bot.wechat.handler import Handler
from bot.wechat.jsapi import jsapi_router, subscribe_button
from bot.wechat.oauth import WebOAuth
from intent import target
from schedule import holiday_store
from schedule.clock import Clock
from schedule.errors import InvalidChange, NotFound
from schedule.migrate import upgrade

log = logging.getLogger("schedbot")


class SchedbotApp(FastAPI):
    """FastAPI, with GET and POST `/wechat` answered before the framework's own middleware stack.

    WeChat's callbacks are nearly all the traffic. They keep what every request gets here (`RequestLog`'s
    id, access line and histogram, `BodyLimit`'s 413, a JSON 500 should anything escape), but skip
    Starlette's and FastAPI's layers (error and telemetry middleware, FastAPI's body limit, routing and
    request objects) that a callback never needs: ~3 % of a message's CPU (py-spy on the webhook bench).
    Every other request, and `/wechat` on any other method, goes through the framework as before.
    """

    _wechat: ASGIApp | None = None

    def serve_wechat_first(self, router: WeChatRouter) -> None:
        """Answer GET and POST `/wechat` with `router`'s ASGI callable (the endpoint behind the body limit)."""
        self._wechat = RequestLog(guarded(router.asgi))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._wechat is not None and serves(scope):
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
    ports: wiring.Web | None = None,
    clock: Clock | None = None,
    agent: Agent | None = None,
    handler: Handler | None = None,
    engine: AsyncEngine | None = None,
    run_worker: bool | None = None,
    reply_budget_s: float = 4.0,
) -> SchedbotApp:
    """The web app around `ports` (default: `wiring.web` with the clock, agent, handler, engine and reply budget
    given here, production implementations for the rest); its lifespan closes them.

    `run_worker` (default: H5_REMINDER_WORKER_ENABLED) runs the delivery worker in-process;
    `reply_budget_s` is how long a WeChat answer may take before it goes through the outbox.
    """
    if ports is None:
        ports = wiring.web(settings, clock=clock, agent=agent, handler=handler, engine=engine,
                           reply_budget_s=reply_budget_s)
    if run_worker is None:
        run_worker = settings.H5_REMINDER_WORKER_ENABLED
    wired = ports.ports
    sessions = wired.sessions

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if settings.DATABASE_AUTO_MIGRATE:
            await upgrade(wired.engine)
        await holiday_store.refresh(sessions)  # the official holiday schedules an operator loaded
        calendar = asyncio.create_task(_keep_holidays_fresh(sessions), name="holiday-schedules")
        # jieba's dictionary loads before the first request (the same text gets the same answer from the first
        # message on), off the event loop; then the start-up heap is frozen out of the GC's full passes
        await asyncio.to_thread(target.warm_up)
        threading.Thread(target=heap.settle, name="warm-up", daemon=True).start()
        if not settings.wechat_configured:
            log.info("WeChat is not configured: set %s to enable /wechat",
                     ", ".join(settings.missing_wechat_variables))
        ports.start(run_worker=run_worker)
        try:
            yield
        finally:
            calendar.cancel()
            await wired.aclose()

    # validatorUrl None stops Swagger UI from fetching a badge from validator.swagger.io
    app = SchedbotApp(title="schedbot", version=home.VERSION, lifespan=lifespan, docs_url=None, redoc_url=None,
                      swagger_ui_parameters={"validatorUrl": None})
    home.serve_docs(app)
    app.state.settings, app.state.clock, app.state.service = settings, wired.clock, wired.service
    app.state.sessions, app.state.engine = sessions, wired.engine
    app.state.agent, app.state.handler = ports.agent, ports.handler
    app.state.wechat_client, app.state.wechat_router, app.state.worker = wired.client, ports.router, ports.worker
    app.state.page_links, app.state.spool_replayer = wired.page_links, ports.replayer
    app.state.requests = ports.requests
    _install_error_handlers(app)
    _include_routes(app, settings, ports)
    if ports.router is not None:
        app.serve_wechat_first(ports.router)
    app.add_middleware(SecurityHeaders)  # innermost: no-store on the API, CSP on / and the docs
    app.add_middleware(BodyLimit)
    app.add_middleware(RequestLog)  # outermost: every answer, 413s included, gets an id and an access line
    return app


def _include_routes(app: FastAPI, settings: Settings, ports: wiring.Web) -> None:
    wired, jsapi = ports.ports, ports.jsapi
    subscribe = (subscribe_button(jsapi, settings.WECHAT_SUBSCRIBE_TEMPLATE_ID)  # the 订阅通知 button
                 if jsapi is not None and settings.WECHAT_SUBSCRIBE_TEMPLATE_ID else None)
    if settings.H5_SCHEDULE_ENABLED:
        app.include_router(api.router)
        oauth = (WebOAuth(app_id=settings.WECHAT_APP_ID, app_secret=settings.WECHAT_APP_SECRET,
                          api_base=settings.WECHAT_API_BASE, oauth_base=settings.WECHAT_OAUTH_BASE,
                          timeout_s=settings.WECHAT_API_TIMEOUT_S)
                 if settings.WECHAT_APP_ID and settings.WECHAT_APP_SECRET else None)  # who opens a page (web OAuth)
        app.include_router(pages_router(wired.page_links, wired.service, wired.sessions, wired.clock,
                                        subscribe=subscribe, oauth=oauth))
    if ports.router is not None:
        app.include_router(ports.router)
    if jsapi is not None:  # the JS-SDK signature for our pages
        app.state.jsapi = jsapi
        app.include_router(jsapi_router(jsapi, public_base_url=settings.PUBLIC_BASE_URL))
    app.include_router(home.router)
    app.include_router(health_router(wired.engine, wired.sessions, wired.clock, wired.client))
    app.include_router(metrics_router(Metrics(wired.sessions, wired.clock), settings.metrics_networks))
