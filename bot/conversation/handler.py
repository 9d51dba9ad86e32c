"""The conversation handler: one user message → stored changes → one reply.

    user → open question (dialog_states) → intent.parse_all(text, now, tz, pending)
         → one small step per intent (create, query, change, digest, snooze) through ScheduleService
         → dialogue saved, in-app notices taken → reply text from render/

Everything a message writes (items, reminders, the dialogue, notices marked shown) commits in one
unit of work, or nothing does and the reply says so. The unit is the caller's (`turn(message, unit)`, the
`Handler` port): the webhook's, whose finishing writes commit with it, or `run_alone`'s. Messages that are
not schedule requests go to the agent after that transaction (`finish`), so a slow LLM never holds a
database lock.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any
from zoneinfo import ZoneInfo

from bot.agent.port import Agent, Conversation
from bot.agent.scheduled import runs_free_form
from bot.conversation import change, create, dialog, digest, query, snooze
from bot.conversation import focus as focusing
from bot.conversation import request as scheduled_request
from bot.conversation.context import Context, PageLinks
from bot.web.metrics import AGENT_FALLBACKS
from bot.wechat.handler import CAPABILITIES, Opening, Reply, Turn, run_alone
from bot.wechat.messages import InboundMessage
from bot.wechat.subscribe import hint_once
from intent import command, parse_all
from intent.model import (
    CancelIntent,
    CompleteIntent,
    CreateIntent,
    Intent,
    NoneIntent,
    QueryIntent,
    RequestIntent,
    SnoozeIntent,
    SubscribeDigestIntent,
    UnsubscribeDigestIntent,
    UpdateIntent,
)
from render import outcome as o
from render.reply import reply
from render.subscribe import HINT as SUBSCRIBE_HINT
from schedule import inbox
from schedule.clock import Clock, to_ms
from schedule.domain import User
from schedule.errors import QuotaExceeded
from schedule.fastsql import Executor
from schedule.service import ScheduleService

log = logging.getLogger(__name__)
Step = Callable[[Any, Context], Awaitable[o.Outcome]]
STEPS: dict[type[Intent], Step] = {
    CreateIntent: create.run,
    QueryIntent: query.run,
    UpdateIntent: change.run,
    CancelIntent: change.run,
    CompleteIntent: change.run,
    SnoozeIntent: snooze.run,
    SubscribeDigestIntent: digest.subscribe,
    UnsubscribeDigestIntent: digest.unsubscribe,
    RequestIntent: scheduled_request.run,  # requests the bot runs later
}
UNDO_WINDOW_MS = 10 * 60_000  # 撤销 takes back a cancel or complete of the last 10 minutes
NOT_SAVED = "抱歉，刚才出了点问题，这条消息没有保存任何内容，请再发一次。"


@dataclass(frozen=True, slots=True)
class _Later:
    """What a committed turn leaves for `finish`: the outcomes still to link, and the agent's question."""

    outcomes: o.Turn
    user: User
    text: str
    to_agent: bool
    context: Conversation | None


class ConversationHandler:
    """The webhook's and `schedbot chat`'s message handler (the `Handler` port)."""

    def __init__(self, service: ScheduleService, clock: Clock, *, agent: Agent, links: PageLinks | None = None,
                 meeting_offset_minutes: int = 60, dialog_ttl_minutes: int = 30,
                 subscribe_template_id: str = "", request_limit: int = 20) -> None:
        self._service = service
        self._clock = clock
        self._agent = agent
        self._llm = runs_free_form(agent)  # free-form requests run later need an LLM
        self._subscribe_template = subscribe_template_id  # 订阅通知: hint once how far-off reminders arrive
        self._links = links
        self._offset = meeting_offset_minutes
        self._ttl_ms = dialog_ttl_minutes * 60_000
        self._request_limit = request_limit

    @staticmethod
    def opening(user_id: int) -> Opening:
        """The first statement of a message's unit of work (the webhook may send it with its claim)."""
        return dialog.opening(user_id)

    async def __call__(self, message: InboundMessage) -> Reply:
        """One message with no webhook around it (`schedbot chat`): its unit of work, then its answer."""
        return await run_alone(self, message, self._service.unit_of_work)

    async def turn(self, message: InboundMessage, unit: Executor) -> Turn:
        """The message's steps in `unit`: their writes, the dialogue and the notices commit together, and with
        them the reply when it is final already (no agent and no page link still to make)."""
        text = (message.content or "").strip()
        if not text:
            return Turn.answered(message, None)
        service = self._service.within(unit)
        user_id = message.user_id if message.user_id is not None else (await service.get_or_create_user(
            message.openid)).id
        opening = await dialog.open_turn(unit, user_id)  # user, question and notices flag at once
        user = opening.user
        service.user_read(unit, user.id, user.timezone, locked=True)  # open_turn: FOR UPDATE
        now = self._clock.now().astimezone(ZoneInfo(user.timezone))
        now_ms = to_ms(now)
        pending = opening.pending(now_ms)
        # Shown first, so a reminder that waited in-app counts as delivered for a snooze in this message.
        notices = await inbox.take(unit, user.id, now_ms=now_ms) if opening.has_notices else []
        ctx = Context(user=user, tz=ZoneInfo(user.timezone), now=now, text=text, service=service,
                      message_id=message.msg_id,
                      candidates=pending.candidates if pending else (), focus=opening.focus, llm=self._llm,
                      request_limit=self._request_limit)
        outcomes, to_agent = await self._steps(ctx, pending, text)
        if self._subscribe_template:  # the hint about far-off reminders
            outcomes = await subscribe_hint(ctx, outcomes, self._subscribe_template)
        turn = o.Turn(outcomes=tuple(self._links_now(outcomes, user.id)), notices=tuple(n.text for n in notices),
                      expired=sum(n.expired for n in notices),
                      only_reminders=all(n.kind == "reminder" or n.expired for n in notices))
        final = None if to_agent or _wants_links(turn) else reply(turn)
        focus = replace(focusing.after(opening.focus, outcomes, text=text, now_ms=now_ms, tz=user.timezone),
                        again=ctx.again)
        if final is not None:
            focus = focusing.with_turn(focus, text, final)
        if ctx.asks:
            await dialog.save(unit, user.id, ctx.asks[-1], expires_at_ms=now_ms + self._ttl_ms, focus=focus)
        elif pending is not None and outcomes:  # answered, replaced by a new request, or called off
            await dialog.save(unit, user.id, None, expires_at_ms=0, focus=focus)
        elif focus != opening.focus:  # the question, if one is open, stays as it was
            await dialog.keep_question(unit, user.id, opening, focus=focus)
        if final is not None:
            return Turn.answered(message, final)
        context = await _conversation(ctx, focus) if to_agent else None
        return Turn.pending(message, _Later(turn, user, text, to_agent, context))

    async def finish(self, turn: Turn) -> Reply:
        """The answer once the unit is over: page links made, the agent asked; a unit that failed saved nothing."""
        later = turn.later
        if turn.failed or not isinstance(later, _Later):
            return NOT_SAVED
        outcomes = await self._links_for(later.outcomes, later.user)
        if later.to_agent:
            AGENT_FALLBACKS.inc()
            answer = await self._agent.answer(later.user, later.text, now=self._clock.now(), context=later.context)
            outcomes = replace(outcomes, outcomes=(*outcomes.outcomes, o.Said(answer)))
        return reply(outcomes)

    async def _steps(self, ctx: Context, pending: dialog.Pending | None, text: str) -> tuple[list[o.Outcome], bool]:
        if pending is not None and command.drops(text):
            label = pending.intent.pending.label if pending.intent.pending else ""
            return [o.Dropped(label)], False
        if command.asks_help(text):
            return [o.Said(CAPABILITIES)], False
        undo, withdraw = command.undoes(text) or command.reverts(text), command.withdraws(text)
        if undo or withdraw:
            just_created = ctx.focus.created_just_now(ctx.now_ms)
            if just_created:  # 刚才那条删掉 / 记错了 / 撤销 right after a create: take the create back
                return [await _withdraw(ctx, just_created)], False
        if withdraw and ctx.focus.op in ("cancelled", "completed") and ctx.focus.live_ids(ctx.now_ms):
            undo = True  # 记错了 right after a cancel or complete: take that back
        if withdraw and not undo:  # 删掉吧 about an item in focus that was not just created: cancel it
            return [await change.run(CancelIntent(needs_clarification=["target"], rule="withdraw.focus"), ctx)], False
        if undo:
            since = to_ms(ctx.now) - UNDO_WINDOW_MS
            try:
                items, series = await ctx.service.restore_recent(ctx.user.id, since_ms=since)
            except QuotaExceeded as exc:  # reopening counts towards the quota as creating does
                return [o.Failed(f"没能撤销：进行中的事项已达上限 {exc.limit} 条，先完成或取消一些再撤销。")], False
            return [o.Restored(tuple(items), series_left=series)], False
        repeat_checked = True
        if command.again(text) and ctx.focus.again:
            text, repeat_checked = ctx.focus.again, False  # 再记一条: the refused repeat, stored after all
            ctx.text = text
        link = command.link_request(text)
        if link is not None:
            return [o.Linked(link, done=False)], False  # made after the transaction (`_links_for`)
        pending_intent = pending.intent if pending else None
        picked = command.position(text) if pending is not None and pending.candidates else None
        if picked is not None and isinstance(pending_intent, UpdateIntent | CancelIntent | CompleteIntent):
            intents: list[Intent] = [pending_intent.model_copy(update={"choice": picked, "needs_clarification": []})]
        else:
            intents = parse_all(text, now=ctx.now, tz=ctx.tz, pending=pending_intent,
                                meeting_offset_minutes=self._offset, focus=ctx.focus.hint(ctx.now_ms, ctx.tz))
        if repeat_checked and intents and all(isinstance(i, CreateIntent) and not i.needs_clarification
                                              for i in intents):
            repeated = await _repeat(ctx, text, intents)
            if repeated is not None:
                return [repeated], False
        outcomes = [await STEPS[type(intent)](intent, ctx) for intent in intents if not isinstance(intent, NoneIntent)]
        return outcomes, not outcomes

    def _links_now(self, outcomes: list[o.Outcome], uid: int) -> list[o.Outcome]:
        """A listing's page link made at once when that needs no database (signing keys loaded), so the answer
        is final inside the message's transaction; otherwise `_links_for` makes it afterwards."""
        links = self._links
        if links is None:
            return outcomes
        return [replace(x, page_url=links.itinerary_url_now(uid, start_ms=x.start_ms, end_ms=x.end_ms, tz=x.tz))
                if isinstance(x, o.Listed) and x.page_wanted and x.page_url is None else x for x in outcomes]

    async def _links_for(self, turn: o.Turn, user: User) -> o.Turn:
        """Page, share and feed links, made once the message's transaction is over (they write on their
        own, and on SQLite a second writer inside the first would wait for it forever)."""
        if not _wants_links(turn):
            return turn
        outcomes = [await self._link(x, user.id) for x in turn.outcomes]
        return replace(turn, outcomes=tuple(outcomes))

    async def _link(self, x: o.Outcome, uid: int) -> o.Outcome:
        links = self._links
        try:
            if isinstance(x, o.Listed) and x.page_wanted and x.page_url is None and links is not None:
                return replace(x, page_url=await links.itinerary_url(uid, start_ms=x.start_ms, end_ms=x.end_ms,
                                                                     tz=x.tz))
            if not isinstance(x, o.Linked) or x.done:
                return x
            if links is None:
                return o.Linked(x.what, None, done=False)
            if x.what == "share":
                return o.Linked("share", await links.share_url(uid))
            if x.what == "unshare":
                return o.Linked("unshare", done=await links.revoke_share(uid))
            if x.what == "reset":
                return o.Linked("reset", done=await links.reset_links(uid))
            if x.what == "unfeed":
                return o.Linked("unfeed", done=await links.revoke_feed(uid))
            return o.Linked("feed", await links.feed_url(uid))
        except Exception as exc:  # the list still answers; a link request says it failed
            log.warning("page link failed: %s", type(exc).__name__)
            return x if isinstance(x, o.Listed) else o.Linked(x.what if isinstance(x, o.Linked) else "page", None,
                                                              done=False)


async def subscribe_hint(ctx: Context, outcomes: list[o.Outcome], template_id: str) -> list[o.Outcome]:
    """A reminder set beyond the 48-hour window gets, once per user, how to make sure it arrives."""
    remind_ats = [r.remind_at for x in outcomes if isinstance(x, o.Created) for r in x.item.reminders
                  if r.status == "pending"]
    if not remind_ats:
        return outcomes
    async with ctx.service.orm_session() as session:
        if await hint_once(session, ctx.user.id, remind_ats, template_id, now_ms=ctx.now_ms):
            return [*outcomes, o.Said(SUBSCRIBE_HINT)]
    return outcomes


async def _conversation(ctx: Context, focus: focusing.Focus) -> Conversation:
    """What the agent gets to see of the chat: the recent turns and the items in focus."""
    return Conversation(turns=focus.turns, focus=tuple(await ctx.active_items(focus.live_ids(ctx.now_ms))))


async def _withdraw(ctx: Context, ids: tuple[int, ...]) -> o.Outcome:
    """The items the last create stored, deleted again (reminders with them); those already gone are left out."""
    gone = await ctx.active_items(ids)
    for item in gone:
        await ctx.service.delete_item(ctx.user.id, item.id)
    return o.Withdrawn(tuple(gone))


async def _repeat(ctx: Context, text: str, intents: list[Intent]) -> o.Outcome | None:
    """The same request twice: within minutes, while what it stored is still there and would be stored the
    same again (明天 said after midnight is another day), is not stored again."""
    sent = ctx.focus.repeat_of(text, ctx.now_ms)
    if sent is None or len(sent.ids) != len(intents):
        return None
    items = await ctx.active_items(sent.ids)
    if len(items) != len(sent.ids):
        return None  # one of them was closed or deleted since: the request is new again
    for intent, item in zip(intents, items, strict=True):
        assert isinstance(intent, CreateIntent)
        anchor = intent.start_at if intent.kind == "event" else intent.due_at
        if item.recurrence is None and (to_ms(anchor) if anchor is not None else None) != item.anchor_at:
            return None
    ctx.again = text
    return o.Repeated(tuple(items))


def _wants_links(turn: o.Turn) -> bool:
    return any(isinstance(x, o.Linked) or (isinstance(x, o.Listed) and x.page_wanted and x.page_url is None)
               for x in turn.outcomes)

