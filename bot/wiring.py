"""Background parts the composition root wires: the WeChat client, delivery channels, the worker."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.logging_setup import LoggedChannel
from bot.pages.links import PageLinks
from bot.settings import Settings
from bot.wechat.client import WeChatClient
from bot.wechat.delivery import WeChatCustomChannel, WeChatTemplateChannel
from bot.wechat.push_data import page_link
from bot.wechat.subscribe import WeChatSubscribeChannel
from render.push import digest_text, reminder_text
from schedule.budget import PushBudget
from schedule.channel import Channel
from schedule.clock import Clock
from schedule.firing import Scheduler
from schedule.retry import RetryPolicy
from schedule.worker import DeliveryWorker

log = logging.getLogger(__name__)


def wechat_client(settings: Settings, sessions: async_sessionmaker[AsyncSession], clock: Clock
                  ) -> WeChatClient | None:
    """The outbound WeChat client, or None while credentials are missing."""
    if not (settings.H5_WECHAT_MP_ENABLED and settings.WECHAT_APP_ID and settings.WECHAT_APP_SECRET):
        return None
    return WeChatClient(app_id=settings.WECHAT_APP_ID, app_secret=settings.WECHAT_APP_SECRET, sessions=sessions,
                        clock=clock, api_base=settings.WECHAT_API_BASE, timeout=settings.WECHAT_API_TIMEOUT_S)


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
