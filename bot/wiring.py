"""The one wiring of `schedbot serve`, `worker` and `chat`: every port built once, closed by one `aclose()`.

`Wiring` holds what every process shares (the database engine and sessions, the clock, the schedule
service, page links, the WeChat client) and builds the rest on demand (agents, the conversation handler,
the delivery worker, the scheduled-request runner, the `/wechat` router and its spool replayer). Whatever
it built, it closes, last built first: background loops stop, slow answers finish, then the agents, the
WeChat client and the engine close. A port handed in (an engine, an agent, a handler) is the caller's.
`web`, `worker` and `chat` are the three compositions; `create_app` serves the first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.agent import build_agent
from bot.agent.port import Agent, PageLink
from bot.agent.scheduled import RunnerTask, request_runner, run_lease_ms
from bot.conversation import ConversationHandler
from bot.logging_setup import LoggedChannel
from bot.pages.links import PageLinks
from bot.settings import Settings
from bot.wechat.client import WeChatClient
from bot.wechat.delivery import WeChatCustomChannel, WeChatTemplateChannel
from bot.wechat.endpoint import WeChatRouter, build_wechat_router, replay_spool
from bot.wechat.handler import Handler
from bot.wechat.jsapi import JsApiTickets
from bot.wechat.push_data import page_link
from bot.wechat.spool import Spool, SpoolReplayer
from bot.wechat.subscribe import WeChatSubscribeChannel
from render.push import digest_text, reminder_text
from schedule.budget import PushBudget
from schedule.channel import Channel
from schedule.clock import Clock, SystemClock
from schedule.db import create_engine, session_factory
from schedule.firing import Scheduler
from schedule.request_runner import RequestRunner
from schedule.retry import RetryPolicy
from schedule.service import ScheduleService
from schedule.worker import DeliveryWorker

log = logging.getLogger(__name__)


def wechat_client(settings: Settings, sessions: async_sessionmaker[AsyncSession], clock: Clock
                  ) -> WeChatClient | None:
    """The outbound WeChat client, or None while credentials are missing."""
    if not (settings.H5_WECHAT_MP_ENABLED and settings.WECHAT_APP_ID and settings.WECHAT_APP_SECRET):
        return None
    return WeChatClient.over_http(app_id=settings.WECHAT_APP_ID, app_secret=settings.WECHAT_APP_SECRET,
                                  sessions=sessions, clock=clock, api_base=settings.WECHAT_API_BASE,
                                  timeout=settings.WECHAT_API_TIMEOUT_S)


IN_PROCESS_BATCH = 64  # the web process's own worker takes small bites: a claim blocks its event loop
STANDALONE_BATCH = 256  # `schedbot worker`: large batches, cheapest per push (schedule/worker.py)


RECOVERY_MARGIN_MS = 30_000  # past the answer's budget: its finishing write, a busy event loop


def answer_budget_ms(settings: Settings) -> int:
    """The longest a slow answer may take: each tool round's request, its retries included, timing out."""
    return int(settings.AGENT_TIMEOUT_S * (settings.AGENT_MAX_RETRIES + 1) * settings.AGENT_MAX_TOOL_ROUNDS * 1000)


def push_budget_of(settings: Settings) -> PushBudget:
    return PushBudget(per_user_daily=settings.PUSH_DAILY_BUDGET_PER_USER,
                      series_gap_ms=settings.PUSH_SERIES_MIN_INTERVAL_MINUTES * 60_000,
                      template_daily=settings.TEMPLATE_DAILY_BUDGET,
                      digest_share_percent=settings.TEMPLATE_DIGEST_SHARE_PERCENT)


def delivery_worker(settings: Settings, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                    client: WeChatClient | None, *, batch_size: int | None = None) -> DeliveryWorker:
    """The worker with its channel ladder; without WeChat every push waits in the in-app queue.
    `batch_size` None: the standalone worker's default (large batches, cheapest per push)."""
    push_budget = push_budget_of(settings)
    channels: dict[str, Channel] = {}
    if client is not None:
        # a template or subscription message opens the user's page, where the pages are served
        link = page_link(PageLinks(settings, sessions, clock)) if settings.H5_SCHEDULE_ENABLED else None
        channels["wechat"] = LoggedChannel(WeChatCustomChannel(client, clock))
        if settings.WECHAT_SUBSCRIBE_TEMPLATE_ID:  # subscription messages: 订阅通知, for users who granted it
            channels["subscribe"] = LoggedChannel(WeChatSubscribeChannel(
                client, sessions, clock, settings.WECHAT_SUBSCRIBE_TEMPLATE_ID,
                long_term=settings.WECHAT_SUBSCRIBE_LONG_TERM, page_link=link))
        if settings.WECHAT_TEMPLATE_ID_REMINDER:
            channels["template"] = LoggedChannel(WeChatTemplateChannel(
                client, settings.WECHAT_TEMPLATE_ID_REMINDER, page_link=link, clock=clock))
    scheduler = Scheduler(sessions, clock, reminder_text=lambda item, at: reminder_text(item, remind_at=at),
                          digest_text=lambda day, items, tz, ahead: digest_text(day, items, tz=tz, next_day=ahead),
                          catchup_hours=settings.H5_REMINDER_CATCHUP_HOURS,
                          recovery_after_ms=answer_budget_ms(settings) + RECOVERY_MARGIN_MS, push_budget=push_budget)
    return DeliveryWorker(sessions, clock, channels, scheduler=scheduler,
                          policy=RetryPolicy(max_attempts=settings.H5_REMINDER_MAX_ATTEMPTS,
                                             catchup_ms=settings.H5_REMINDER_CATCHUP_HOURS * 3_600_000),
                          poll_interval_s=settings.H5_REMINDER_SCAN_INTERVAL_MS / 1000,
                          batch_size=batch_size or STANDALONE_BATCH, push_budget=push_budget)


class WorkerTask:
    """Runs a worker loop in the background of the current event loop; stops it cleanly."""

    def __init__(self, worker: DeliveryWorker) -> None:
        self.worker = worker
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self.worker.run(), name="schedbot-delivery-worker")

    async def stop(self) -> None:
        if self._task is None:
            return
        self.worker.stop()
        try:
            await asyncio.wait_for(self._task, timeout=10)
        except TimeoutError:
            log.warning("delivery worker did not stop within 10 s; cancelling")
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class Wiring:
    """The ports one process shares, and the factories of the rest; `aclose()` closes all it built."""

    def __init__(self, settings: Settings, *, clock: Clock | None = None, engine: AsyncEngine | None = None,
                 wechat: bool = True) -> None:
        """`engine` None: one of its own (disposed by `aclose`); `wechat` False: no WeChat client even when
        configured (`schedbot chat`: pushes wait in the in-app queue)."""
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self._closers: list[Callable[[], Awaitable[object]]] = []
        if engine is None:
            engine = create_engine(settings.DATABASE_URL)
            self._closers.append(engine.dispose)
        self.engine = engine
        self.sessions: async_sessionmaker[AsyncSession] = session_factory(engine)
        self.service = ScheduleService(self.sessions, self.clock, default_timezone=settings.H5_DEFAULT_TIMEZONE,
                                       max_active_items=settings.H5_MAX_ACTIVE_ITEMS)
        self.page_links = PageLinks(settings, self.sessions, self.clock)
        self.client = wechat_client(settings, self.sessions, self.clock) if wechat else None
        if self.client is not None:
            self._closers.append(self.client.aclose)

    def agent(self, *, with_page_links: bool = False) -> Agent:
        """A new agent with its own LLM client (its own connection pool); `with_page_links`: its plan-page tool
        links to /p/…, where the pages are served."""
        link: PageLink | None = None
        if with_page_links and self.settings.H5_SCHEDULE_ENABLED:
            async def link(user_id: int, start_ms: int, end_ms: int) -> str:
                return await self.page_links.itinerary_url(user_id, start_ms=start_ms, end_ms=end_ms)
        agent = build_agent(self.settings, service=self.service, sessions=self.sessions, clock=self.clock,
                            page_link=link)
        self._closers.append(agent.aclose)
        return agent

    def conversation(self, agent: Agent) -> ConversationHandler:
        """The message handler WeChat messages and `schedbot chat` reach."""
        settings = self.settings
        return ConversationHandler(
            self.service, self.clock, agent=agent, links=self.page_links if settings.H5_SCHEDULE_ENABLED else None,
            meeting_offset_minutes=settings.H5_REMINDER_DEFAULT_MEETING_OFFSET_MINUTES,
            dialog_ttl_minutes=settings.H5_DIALOG_TTL_MINUTES,
            subscribe_template_id=settings.WECHAT_SUBSCRIBE_TEMPLATE_ID if self.client is not None else "",
            request_limit=settings.SCHEDULED_REQUESTS_PER_USER)

    def delivery_worker(self, *, batch_size: int | None = None) -> DeliveryWorker:
        return delivery_worker(self.settings, self.sessions, self.clock, self.client, batch_size=batch_size)

    def requests(self, agent: Agent, worker: DeliveryWorker, *, poll_interval_s: float = 1.0) -> RunnerTask:
        """The scheduled-request runner (stopped by `aclose` once started); its answers go out through
        `worker`. Give it an agent of its own: a run never queues a chat answer behind it."""
        settings = self.settings
        runner = request_runner(self.sessions, self.clock, self.service, agent,
                                catchup_hours=settings.H5_REMINDER_CATCHUP_HOURS, poll_interval_s=poll_interval_s,
                                lease_ms=run_lease_ms(settings), concurrency=settings.SCHEDULED_REQUEST_CONCURRENCY,
                                push_budget=push_budget_of(settings), on_queued=worker.notify)
        task = RunnerTask(runner)
        self._closers.append(task.stop)
        return task

    def background(self, worker: DeliveryWorker) -> WorkerTask:
        """`worker` as a background loop of this event loop, stopped by `aclose` once started."""
        task = WorkerTask(worker)
        self._closers.append(task.stop)
        return task

    def webhook(self, handler: Handler, *, reply_budget_s: float) -> tuple[WeChatRouter, SpoolReplayer]:
        """`/wechat` around one dispatcher, and the replayer of what its spool kept through a database outage.
        `aclose` stops the replayer, then waits for slow answers still being computed."""
        spool = Spool(self.settings.SPOOL_DIR)
        router = build_wechat_router(settings=self.settings, sessions=self.sessions, clock=self.clock,
                                     handler=handler, client=self.client, users=self.service,
                                     reply_budget_s=reply_budget_s, spool=spool)
        replayer = SpoolReplayer(spool, partial(replay_spool, spool, router.dispatcher))
        self._closers.append(router.dispatcher.drain)
        self._closers.append(replayer.stop)
        return router, replayer

    async def aclose(self) -> None:
        """Close everything built here, last built first; one failing close does not keep the rest open."""
        while self._closers:
            close = self._closers.pop()
            try:
                await close()
            except Exception:
                log.exception("closing %s failed", getattr(close, "__qualname__", close))


@dataclass(frozen=True)
class Web:
    """`schedbot serve`'s ports: the handler behind `/wechat`, the in-process worker and request runner."""

    ports: Wiring
    agent: Agent
    handler: Handler
    worker: DeliveryWorker
    requests: RequestRunner
    background: tuple[WorkerTask, RunnerTask]
    router: WeChatRouter | None
    replayer: SpoolReplayer | None
    jsapi: JsApiTickets | None

    def start(self, *, run_worker: bool) -> None:
        """Start the background loops: the worker and request runner (`run_worker`), the spool replayer."""
        if run_worker:
            for task in self.background:
                task.start()
        if self.replayer is not None:
            self.replayer.start()  # what an earlier outage (or a process that died) spooled goes out now


def web(settings: Settings, *, clock: Clock | None = None, agent: Agent | None = None, handler: Handler | None = None,
        engine: AsyncEngine | None = None, reply_budget_s: float = 4.0) -> Web:
    """The web process's ports; those not given get their production implementation."""
    ports = Wiring(settings, clock=clock, engine=engine)
    if agent is None:
        agent = ports.agent(with_page_links=True)
        run_agent = ports.agent(with_page_links=True)  # scheduled runs: an LLM client of their own, capped apart
    else:
        run_agent = agent
    handler = handler or ports.conversation(agent)
    worker = ports.delivery_worker(batch_size=IN_PROCESS_BATCH)
    background = ports.background(worker)
    requests = ports.requests(run_agent, worker, poll_interval_s=settings.H5_REMINDER_SCAN_INTERVAL_MS / 1000)
    router, replayer = (ports.webhook(handler, reply_budget_s=reply_budget_s) if settings.H5_WECHAT_MP_ENABLED
                        else (None, None))
    client = ports.client
    jsapi = (JsApiTickets(client, ports.sessions, ports.clock)
             if client is not None else None)
    return Web(ports, agent, handler, worker, requests.runner, (background, requests), router, replayer, jsapi)


@dataclass(frozen=True)
class Worker:
    """`schedbot worker`'s ports: the delivery worker (run in the foreground) and the request runner."""

    ports: Wiring
    worker: DeliveryWorker
    requests: RunnerTask


def worker(settings: Settings) -> Worker:
    ports = Wiring(settings)
    delivery = ports.delivery_worker()
    return Worker(ports, delivery, ports.requests(ports.agent(), delivery))


@dataclass(frozen=True)
class Chat:
    """`schedbot chat`'s ports: the handler WeChat messages reach, and a worker with no WeChat (pushes wait in
    the in-app queue, shown at the top of the next reply)."""

    ports: Wiring
    handler: ConversationHandler
    worker: DeliveryWorker


def chat(settings: Settings, clock: Clock) -> Chat:
    ports = Wiring(settings, clock=clock, wechat=False)
    return Chat(ports, ports.conversation(ports.agent()), ports.delivery_worker())
