"""Running requests the bot was asked to do later: a schedule query through the rules' listing, a
free-form request through the agent with its tools; and the background task that runs them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent.builtin import BuiltinResponder
from bot.agent.port import APOLOGY, Agent
from bot.settings import Settings
from render import request as wording
from render.agenda import listing
from render.outcome import Listed
from render.reply import MAX_BYTES
from render.timefmt import day_label
from schedule.budget import PushBudget
from schedule.clock import Clock, to_ms
from schedule.domain import AgendaQuery, ScheduledRequest
from schedule.occurrence import occurrences
from schedule.recurrence import localize
from schedule.request_runner import RequestFailed, RequestRunner
from schedule.service import ScheduleService

log = logging.getLogger(__name__)
_FAR = 1 << 62


def runs_free_form(agent: Any) -> bool:
    """Free-form requests need an LLM: the built-in responder cannot do them."""
    return agent is not None and not isinstance(agent, BuiltinResponder)


class RequestAnswerer:
    """The `schedule.request_runner.Answerer`: the rules answer schedule queries, the agent everything else."""

    def __init__(self, service: ScheduleService, agent: Agent | None) -> None:
        self._service = service
        self._agent = agent if runs_free_form(agent) else None

    async def __call__(self, request: ScheduledRequest, *, run_at: datetime) -> str:
        head = wording.answer_head(request)
        if request.query is not None:
            return head + await self._agenda(request, request.query, run_at)
        if self._agent is None:
            raise RequestFailed("no LLM is configured")
        user = await self._service.get_user(request.user_id)
        local = run_at.astimezone(ZoneInfo(request.timezone))
        prompt = f"（定时请求，{local:%Y-%m-%d %H:%M} 到点执行，直接给出结果）{request.text}"
        answer = (await self._agent.answer(user, prompt, now=run_at)).strip()
        if not answer or answer.startswith(APOLOGY):  # the agent never raises: its apology means no answer
            raise RequestFailed("the agent gave no answer")
        return head + answer

    async def _agenda(self, request: ScheduledRequest, query: AgendaQuery, run_at: datetime) -> str:
        tz = ZoneInfo(request.timezone)
        day = run_at.astimezone(tz).date()
        first, last = _span(day, query)
        start_ms = to_ms(localize(datetime.combine(first, time()), tz))
        end_ms = to_ms(localize(datetime.combine(last, time()), tz))
        budget = MAX_BYTES - len(wording.answer_head(request).encode("utf-8"))
        if query.done:
            found = await self._service.list_items(request.user_id, start_ms=start_ms, end_ms=end_ms,
                                                   kind=query.filter_kind, statuses=("completed",))
            label = "本周" if query.span == "week" and query.shift == 0 else day_label(first)
            return wording.done_list(found, label=label)
        found = await self._service.list_items(request.user_id, start_ms=start_ms, end_ms=end_ms,
                                               kind=query.filter_kind)
        items = sorted((o for item in found for o in occurrences(item, end_ms)),
                       key=lambda i: (i.anchor_at if i.anchor_at is not None else _FAR, i.id))
        return listing(Listed(start_ms=start_ms, end_ms=end_ms, tz=request.timezone, items=tuple(items),
                              kind=query.filter_kind, today=day), budget=budget)


def _span(day: date, query: AgendaQuery) -> tuple[date, date]:
    if query.span == "week":
        monday = day - timedelta(days=day.weekday()) + timedelta(weeks=query.shift)
        return monday, monday + timedelta(days=7)
    first = day + timedelta(days=query.shift)
    return first, first + timedelta(days=1)


def run_lease_ms(settings: Settings) -> int:
    """A run's lease outlasts the agent's whole budget (timeout × attempts × tool rounds and the answer), so a
    slow run is never taken over while it may still finish."""
    rounds = settings.AGENT_MAX_TOOL_ROUNDS + 1
    return int(settings.AGENT_TIMEOUT_S * (settings.AGENT_MAX_RETRIES + 1) * rounds * 1000) + 60_000


def request_runner(sessions: async_sessionmaker[AsyncSession], clock: Clock, service: ScheduleService,
                   agent: Agent | None, *, catchup_hours: int = 12, poll_interval_s: float = 1.0,
                   lease_ms: int = 180_000, concurrency: int = 2, push_budget: PushBudget | None = None,
                   on_queued: Callable[[], None] | None = None) -> RequestRunner:
    """The runner; `on_queued` wakes the delivery worker when an answer was queued. Give it an agent of its own
    (its own HTTP client), not the one answering chat: runs then never queue a chat answer behind them."""
    return RequestRunner(sessions, clock, RequestAnswerer(service, agent), failed_text=wording.failed,
                         missed_text=wording.missed, catchup_hours=catchup_hours, poll_interval_s=poll_interval_s,
                         lease_ms=lease_ms, concurrency=concurrency, push_budget=push_budget, on_queued=on_queued)


class RunnerTask:
    """Runs a `RequestRunner` loop in the background of the current event loop; stops it cleanly."""

    def __init__(self, runner: RequestRunner) -> None:
        self.runner = runner
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self.runner.run(), name="schedbot-scheduled-requests")

    async def stop(self) -> None:
        if self._task is None:
            return
        self.runner.stop()
        try:
            await asyncio.wait_for(self._task, timeout=10)
        except TimeoutError:
            log.warning("scheduled requests did not stop within 10 s; cancelling")
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
