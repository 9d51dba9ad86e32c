"""Requests the bot runs later, in chat: set one (每天早上8点告诉我今天的天气), list them (我有哪些定时任务),
cancel one (早上的天气不用发了). Free-form ones need an LLM: without one they are refused, never stored to fail."""

from __future__ import annotations

from datetime import timedelta

from bot.conversation.context import Context
from intent.model import RequestIntent
from render import request as wording
from render.outcome import Outcome, Said
from render.timefmt import local
from schedule import requests
from schedule.clock import to_ms
from schedule.domain import AgendaQuery, Lunar, NewRequest, Recurrence, ScheduledRequest
from schedule.recurrence import first_occurrence

# the local hours a part of the day said when cancelling covers: [from, to)
_HOURS = {"凌晨": (0, 6), "早上": (4, 12), "早晨": (4, 12), "清晨": (4, 9), "上午": (6, 12), "中午": (11, 14),
          "下午": (12, 18), "傍晚": (17, 20), "晚上": (17, 24), "夜里": (19, 24)}


async def run(intent: RequestIntent, ctx: Context) -> Outcome:
    if intent.op == "list":
        async with ctx.service.orm_session() as session:
            return Said(wording.listed(await requests.active(session, ctx.user.id)))
    if intent.op == "cancel":
        return await _cancel(intent, ctx)
    if intent.op == "update":
        return await _retime(intent, ctx)
    return await _create(intent, ctx)


async def _create(intent: RequestIntent, ctx: Context) -> Outcome:
    if intent.query is None and not ctx.llm:
        return Said(wording.NEEDS_LLM)
    if intent.first_at is None:
        return Said("请告诉我几点做，例如“每天早上8点告诉我今天有什么安排”。")
    recurrence = _recurrence(intent)
    first = intent.first_at
    if recurrence is not None:  # 每个工作日: the first run is the first workday at that time
        first = first_occurrence(recurrence, dtstart=first, tz=ctx.tz) or first
    query = intent.query
    new = NewRequest(text=intent.text, title=intent.title or intent.text, first_at=to_ms(first),
                     timezone=ctx.user.timezone, remind=intent.remind, recurrence=recurrence,
                     query=AgendaQuery(span=query.span, shift=query.shift, filter_kind=query.filter_kind,
                                       done=query.done) if query else None)
    try:
        async with ctx.service.orm_session() as session:
            stored = await requests.add(session, ctx.user.id, new, now_ms=ctx.now_ms, limit=ctx.request_limit)
    except requests.QuotaReached as full:
        return Said(wording.quota_reached(full.limit))
    return Said(wording.created(stored))


async def _cancel(intent: RequestIntent, ctx: Context) -> Outcome:
    async with ctx.service.orm_session() as session:
        found = [r for r in await requests.active(session, ctx.user.id) if _matches(r, intent)]
        if not found:
            return Said(wording.no_match(intent.target_text))
        await requests.cancel(session, ctx.user.id, [r.id for r in found], now_ms=ctx.now_ms)
    return Said(wording.cancelled(found))


async def _retime(intent: RequestIntent, ctx: Context) -> Outcome:
    """天气改成早上7点发: the request's new time (its series kept unless a new one was said)."""
    if intent.first_at is None:
        return Said(wording.no_match(intent.target_text))
    async with ctx.service.orm_session() as session:
        found = [r for r in await requests.active(session, ctx.user.id) if _matches(r, intent)]
        if len(found) != 1:
            return Said(wording.no_match(intent.target_text) if not found else wording.which(found))
        request = found[0]
        first = intent.first_at
        old_hour = local(request.first_at, request.timezone).hour
        if intent.period is None and old_hour < 12 <= first.hour < 24 and first.hour != 12:
            first -= timedelta(hours=12)  # 天气改成7点发 said of a morning request: 07:00, not 19:00
            if first <= ctx.now:
                first += timedelta(days=1)
        recurrence = _recurrence(intent) or request.recurrence
        run_at = first_occurrence(recurrence, dtstart=first, tz=ctx.tz) or first if recurrence else first
        changed = await requests.retime(session, ctx.user.id, request.id, first_at=to_ms(first),
                                        run_at=to_ms(run_at), recurrence=recurrence, now_ms=ctx.now_ms)
    return Said(wording.retimed(changed))


def _matches(request: ScheduledRequest, intent: RequestIntent) -> bool:
    words = intent.target_text or ""
    said = request.title + request.text + (request.remind or "")
    if words and words not in said and not any(words[i:i + 2] in said for i in range(len(words) - 1)):
        return False
    hours = _HOURS.get(intent.period or "")
    if hours is not None:
        hour = local(request.first_at, request.timezone).hour
        return hours[0] <= hour < hours[1]
    return bool(words)


def _recurrence(intent: RequestIntent) -> Recurrence | None:
    rec = intent.recurrence
    if rec is None:
        return None
    lunar = Lunar(month=rec.lunar.month, day=rec.lunar.day, leap=rec.lunar.leap) if rec.lunar else None
    return Recurrence(rrule=rec.rrule, workdays=rec.workdays, lunar=lunar)
