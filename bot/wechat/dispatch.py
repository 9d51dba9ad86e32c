"""What happens to one inbound message: replay and dedupe claim, user, window, handler under a reply budget.

The budget runs from the request's arrival (WeChat gives up after 5 s whatever we spent on the
database). A handler that answers within it gets a passive reply; a slower one is acknowledged
with `success` and its answer is queued in the outbox in the same transaction that marks the
inbound row done, so a crash after the acknowledgement loses nothing. If that finishing
transaction fails, a smaller one (queued text and the inbound row only) keeps the answer.

User text is one unit of work that the dispatcher opens (or adopts from the claim's trip) and hands to the
handler (`bot.wechat.handler`): when the handler's turn is final, the finishing writes go into that same
transaction, and the answer goes out only once it has committed: the usual chat message commits twice
(claim, unit), not three times.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.wechat import template_job
from bot.wechat.client import WeChatClient
from bot.wechat.commit import DirectCommit, committer_for
from bot.wechat.handler import APOLOGY, CAPABILITIES, Handler, Opening, Reply, Turn
from bot.wechat.messages import InboundMessage
from bot.wechat.subscribe import GRANT_EVENTS, record_grants
from bot.wechat.xml import MAX_TEXT_BYTES, split_utf8, strip_illegal, text_reply
from schedule import inbound, outbox, users, window
from schedule.clock import Clock, now_ms
from schedule.db import unit_of_work
from schedule.errors import DatabaseUnavailable
from schedule.fastsql import Executor, Tx, orm
from schedule.handoff import Handoff
from schedule.retry import retry_contention

log = logging.getLogger(__name__)

GREETING = "你好，我是你的日程助手。" + CAPABILITIES
TEXT_ONLY = "我目前只能看懂文字（或带识别文字的语音）。试试发：明天上午九点提醒我带材料"
VOICE_UNRECOGNISED = "没听清这段语音，可以发文字给我吗？"
UNKNOWN_MENU = "这个菜单暂时没有内容。" + CAPABILITIES
SCANNED = "已收到扫码结果。" + CAPABILITIES
SUCCESS = "success"
# The rest of a long answer waits for its passive head this long at most (released as soon as the head went;
# merged into the head's row when the head could not go passively): the user never reads the tail first.
TAIL_HOLD_MS = 15_000
CLAIM_BUDGET_S = 2.5  # the database must claim a message within this, or the webhook spools it (docs/delivery.md#spool)
ClaimUnit = Callable[..., Awaitable[inbound.Claim]]  # the claim on a transaction, with statements after it
# Events that open WeChat's 3-messages-per-minute window (a click, follow or scan).
CLICK_WINDOW_EVENTS = {"subscribe", "scan", "click", "scancode_push", "scancode_waitmsg"}
# The fixed answer to an event that opens a conversation without text; other events get none.
EVENT_REPLIES: dict[str, str] = {"subscribe": GREETING, "scan": GREETING, "click": UNKNOWN_MENU,
                                 "scancode_push": SCANNED, "scancode_waitmsg": SCANNED}
MEDIA_TYPES = {"image", "video", "shortvideo", "location", "link", "file"}  # answered with a hint


class Replayed(Exception):
    """The request's (timestamp, nonce) already carried another message: a leaked signature reused."""


class UserDirectory(Protocol):
    async def get_or_create_user(self, openid: str) -> Any: ...
    async def forget_user(self, user_id: int) -> None: ...


class Dispatcher:
    def __init__(self, *, sessions: async_sessionmaker[AsyncSession], clock: Clock, handler: Handler,
                 users: UserDirectory, client: WeChatClient | None = None, reply_budget_s: float = 4.0,
                 monotonic: Callable[[], float] | None = None) -> None:
        self._clock = clock
        self._sessions = sessions
        # Seconds on a monotonic clock for the reply budget (the event loop's, unless a test injects one).
        self.monotonic = monotonic or (lambda: asyncio.get_running_loop().time())
        self._handler = handler
        self._users = users
        self._client = client
        self.reply_budget_s = reply_budget_s
        self._background: set[asyncio.Task[Any]] = set()
        # SQLite: group commit (one writer, no busy-handler spinning); MariaDB: one short txn each.
        self._writes = committer_for(sessions)
        # MariaDB: the handler's first read goes with the claim (`_claim_and_open`) when it names one.
        bind = sessions.kw.get("bind")
        direct = isinstance(self._writes, DirectCommit) and isinstance(bind, AsyncEngine)
        self._engine: AsyncEngine | None = bind if direct else None
        self._user_ids: dict[str, int] = {}  # openid → users.id; ids never change (forgetting keeps the row)
        # Events that only write (and are acknowledged with `success`), by lowercased event name.
        self._events: dict[str, Callable[[InboundMessage, int], Awaitable[None]]] = {
            "unsubscribe": self._unsubscribed,
            "templatesendjobfinish": self._template_job_finished,
            **dict.fromkeys(GRANT_EVENTS, self._granted),
        }

    async def drain(self) -> None:
        """Wait for slow handlers and typing calls still running (tests, shutdown)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def handle(self, message: InboundMessage, *, arrived: float | None = None,
                     replay_key: str | None = None, received_ms: int | None = None, spooled: bool = False) -> str:
        """The plaintext response body: a passive reply XML or `success`.

        `arrived` is `self.monotonic()` when the request came in; `replay_key` names the request's
        signed (timestamp, nonce) pair, accepted for this message only (raises `Replayed` otherwise);
        `received_ms`: when it arrived, if not now. `spooled`: a replay from the spool (`received_ms` is then
        the spooled request's), which takes over a claim that request made but saw too late (below).
        The claim must answer within CLAIM_BUDGET_S: a database that does not raises TimeoutError, and the
        webhook spools the message. The claim is not cancelled then (a cancelled SQLite call still runs on
        aiosqlite's thread, and its clean-up would wait as long): it may still commit, and the replay of the
        spooled message, finding that claim (`processing`, its own arrival time), handles the message.
        """
        arrived = self.monotonic() if arrived is None else arrived
        received = now_ms(self._clock) if received_ms is None else received_ms
        known_user = self._user_ids.get(message.openid)  # recorded with the claim so recovery can notify
        owner = hashlib.sha1(message.dedupe_key.encode("utf-8")).hexdigest()

        async def claim_unit(tx: Tx, then: Sequence[Opening] = ()) -> inbound.Claim:
            if replay_key is None:
                return await inbound.claim_in(tx, message.dedupe_key, now_ms=received, user_id=known_user)
            claim = await inbound.claim_signed_in(tx, message.dedupe_key, nonce_key=replay_key, owner=owner,
                                                  now_ms=received, user_id=known_user, then=then)
            if claim is None:
                raise Replayed(replay_key)  # nothing was claimed: the claim needs the nonce to be ours
            return claim

        opening = self._opening_of(message, known_user) if replay_key is not None else None
        handoff = None
        if opening is not None:
            claim, handoff = await _within_budget(self._claim_and_open(message, claim_unit, opening), self._spawn)
        else:
            claim, handoff = await _within_budget(self._claimed_alone(claim_unit), self._spawn)
        try:
            if spooled and not claim.fresh and claim.status == "processing" and claim.received_at == received:
                log.info("spooled %s was claimed after its request gave up: handled now", message.dedupe_key)
            elif not claim.fresh:
                log.info("wechat retry of %s (%s)", message.dedupe_key, claim.status)
                return claim.reply if claim.status == "done" and claim.reply else SUCCESS
            try:
                return await self._process(message, received, arrived, handoff)
            except Exception:
                log.exception("wechat message %s failed", message.dedupe_key)
                try:
                    await self._writes.run_fast(partial(inbound.finish, dedupe_key=message.dedupe_key, reply=None,
                                                        user_id=message.user_id))
                except Exception:
                    log.exception("could not close inbound row %s", message.dedupe_key)
                return SUCCESS
        finally:
            if handoff is not None and not handoff.handed_on:
                await handoff.release()  # not given to a handler: end it (and its lock on the user's row)

    async def _claimed_alone(self, claim_unit: ClaimUnit) -> tuple[inbound.Claim, Handoff | None]:
        return await self._writes.run_fast(claim_unit), None

    def _opening_of(self, message: InboundMessage, user_id: int | None) -> Opening | None:
        """The handler's first statement, to send with the claim: a text the handler will read, from a user
        known already, on MariaDB (SQLite's claims are committed in groups, with no trip of their own)."""
        if self._engine is None or user_id is None:
            return None
        if not (message.content or "").strip() or message.event_lower in ("unsubscribe", "templatesendjobfinish"):
            return None
        return self._handler.opening(user_id)

    async def _claim_and_open(self, message: InboundMessage, claim_unit: ClaimUnit, opening: Opening
                              ) -> tuple[inbound.Claim, Handoff | None]:
        """The claim and, after its COMMIT in the same trip, the handler's first read in a new transaction
        (the user's row locked), handed to the handler's unit of work: one round trip fewer per message.
        A replay, a deadlock victim or any other failure ends that transaction; a victim is claimed the
        usual way."""
        assert self._engine is not None
        handoff = Handoff(self._engine)
        try:
            claim = await handoff.begin_with(lambda tx: claim_unit(tx, [opening]))
        except DatabaseUnavailable as exc:
            if exc.contention:
                return await self._writes.run_fast(claim_unit), None
            raise
        if not handoff.read_ahead:  # the read failed after the claim committed: the handler reads for itself
            log.warning("the opening read sent with the claim of %s failed", message.dedupe_key)
            await handoff.release()
            return claim, None
        return claim, handoff

    async def _process(self, message: InboundMessage, received: int, arrived: float,
                       handoff: Handoff | None = None) -> str:
        event = message.event_lower if message.kind == "event" else ""
        user_id = await self._user_id(message.openid)
        message = message.model_copy(update={"user_id": user_id})
        recorded = self._events.get(event)
        if recorded is not None:  # an event that only writes: acknowledged with `success`
            await recorded(message, received)
            return SUCCESS
        window_kind = "click" if event in CLICK_WINDOW_EVENTS else ("message" if not event else None)
        if message.content is not None and message.content.strip():
            return await self._answer(message, received, window_kind, arrived, handoff)
        fixed = self._fixed_reply(message, event)
        return await self._finish(message, received, fixed, window_kind=window_kind, passive=not self.spent(arrived))

    async def _unsubscribed(self, message: InboundMessage, received: int) -> None:
        """The user left: forgotten (their data and stored replies), the event's row done."""
        assert message.user_id is not None
        await self._writes.exclusive(partial(self._users.forget_user, message.user_id))
        await self._writes.run(partial(inbound.forget_replies, user_id=message.user_id))
        await self._finish(message, received, None, window_kind=None)

    async def _granted(self, message: InboundMessage, received: int) -> None:
        """Subscription-message consent given, changed, or a send refused."""
        await self._writes.run(partial(record_grants, message=message, now_ms=received))
        await self._finish(message, received, None, window_kind=None)

    async def _template_job_finished(self, message: InboundMessage, received: int) -> None:
        """A template message's delivery report, recorded on its delivery row."""
        await self._finish(message, received, None, window_kind=None, template_status=message.status or "")

    async def _user_id(self, openid: str) -> int:
        cached = self._user_ids.get(openid)
        if cached is not None:
            return cached
        user = await self._writes.exclusive(partial(self._users.get_or_create_user, openid))
        if len(self._user_ids) >= 100_000:
            self._user_ids.clear()
        self._user_ids[openid] = int(user.id)
        return int(user.id)

    @staticmethod
    def _fixed_reply(message: InboundMessage, event: str) -> Reply:
        if event:  # VIEW, location reports and the like are acknowledged only
            return EVENT_REPLIES.get(event)
        if message.kind == "voice":
            return VOICE_UNRECOGNISED
        if message.msg_type.lower() in MEDIA_TYPES:
            return TEXT_ONLY
        return None  # a message type WeChat adds later: acknowledge, never refuse

    def spent(self, arrived: float) -> bool:
        """True when WeChat has (nearly) stopped waiting for this request's passive reply."""
        return self.monotonic() - arrived >= self.reply_budget_s

    async def _answer(self, message: InboundMessage, received: int, window_kind: str | None,
                      arrived: float, handoff: Handoff | None = None) -> str:
        task = asyncio.ensure_future(self._answered(message, received, window_kind, arrived, handoff))
        if handoff is not None:
            handoff.handed_on = True  # the task adopts or releases it
        try:
            left = self.reply_budget_s - (self.monotonic() - arrived)
            if left <= 0:
                raise TimeoutError  # the claim and user lookup spent the budget: straight to the outbox
            answered = await asyncio.wait_for(asyncio.shield(task), left)
        except TimeoutError:
            log.info("wechat %s: answer not ready %.1fs after arrival, answering through the outbox",
                     message.dedupe_key, self.reply_budget_s)
            assert message.user_id is not None
            self._spawn(self._late(task, message, received))  # first: the answer is never orphaned
            if self._client is not None:
                self._spawn(self._typing(message.openid))
            try:
                await self._writes.run(partial(self._note_sender, message=message, received=received,
                                               window_kind=window_kind))
            except Exception:  # only recovery's notice needs it; the late answer carries the user itself
                log.exception("could not record the sender of %s", message.dedupe_key)
            return SUCCESS
        except Exception:
            log.exception("handler failed on %s", message.dedupe_key)
            answered = _Answered(APOLOGY)
        if answered.body is not None:  # stored and marked done with the handler's own writes
            return await self._in_time(message, answered.reply, answered.body, arrived)
        body = await self._finish(message, received, answered.reply, window_kind=window_kind,
                                  passive=not self.spent(arrived))
        return await self._in_time(message, answered.reply, body, arrived)

    async def _answered(self, message: InboundMessage, received: int, window_kind: str | None, arrived: float,
                        handoff: Handoff | None) -> _Answered:
        """The message's unit of work, then its answer: the turn's own when final (with `body`, the response
        stored in the unit, when that committed while WeChat still waited), else the handler's `finish`. A unit
        the database aborts as a deadlock victim is run again; one that fails is answered as a failed turn."""
        try:
            try:
                turn, body = await retry_contention(partial(self._unit, message, received, window_kind, arrived,
                                                            handoff))
            except Exception:
                log.exception("the unit of work of %s failed", message.dedupe_key)
                turn, body = Turn.failure(message), None
        finally:
            if handoff is not None:
                await handoff.release()  # a no-op once adopted
        if turn.final:
            return _Answered(turn.reply, body)
        return _Answered(await self._handler.finish(turn))

    async def _unit(self, message: InboundMessage, received: int, window_kind: str | None, arrived: float,
                    handoff: Handoff | None) -> tuple[Turn, str | None]:
        """One run of the unit: in the transaction begun with the claim (the first run) or a new one, the
        handler's turn and, when it is final and WeChat still waits, the finishing writes (`record`). The body
        is returned only once the commit of all of it has succeeded."""
        begin = handoff.adopt() if handoff is not None and not handoff.taken else unit_of_work(self._sessions)
        body: str | None = None
        async with begin as unit:
            turn = await self._handler.turn(message, unit)
            if turn.final and not self.spent(arrived):
                body, queued = self.compose(message, turn.reply, passive=True)
                await self.record(unit, message, received, body, queued, window_kind=window_kind)
        return turn, body

    async def _in_time(self, message: InboundMessage, reply: Reply, body: str, arrived: float) -> str:
        """The passive reply, if the finishing write left WeChat still waiting for it; else (the write
        stalled past the budget) its text goes to the outbox and WeChat gets `success` (late answers: the
        budget covers the finishing write; an answer is never dropped)."""
        if body == SUCCESS:
            return body
        if not self.spent(arrived):  # the head goes passively now: the rest of a long answer may follow it
            if len((reply or "").encode("utf-8")) > MAX_TEXT_BYTES:  # (the worker's next poll sends the rest:
                await self._release_tail(message)  # the passive reply is long on its way by then)
            return body
        log.warning("wechat %s: finishing ended %.1fs after arrival; its answer goes through the outbox",
                    message.dedupe_key, self.monotonic() - arrived)
        return await self._requeue(message, reply, body)

    async def _requeue(self, message: InboundMessage, reply: Reply, body: str) -> str:
        """A passive reply stored but never sent (WeChat stopped waiting): its head goes to the outbox before
        the rest, and the inbound row answers WeChat's retries with `success` from now on."""
        assert message.user_id is not None
        parts = split_utf8(strip_illegal(reply or "").strip())

        async def requeue(target: Executor) -> None:
            # the head goes first: into the held rest of the answer as its first part, else a row of its own
            stamp = now_ms(self._clock)
            if not await outbox.prepend(await orm(target), f"reply:{message.dedupe_key}", parts[0], now_ms=stamp):
                await outbox.enqueue(await orm(target), user_id=message.user_id or 0,
                                     idempotency_key=f"passive:{message.dedupe_key}"[:191], kind="agent_reply",
                                     payload={"text": parts[0], "openid": message.openid}, now_ms=stamp)
            # WeChat's next retry must not get the passive copy too
            await inbound.finish(target, message.dedupe_key, reply=SUCCESS, user_id=message.user_id)

        try:
            await self._writes.run(requeue)
        except Exception:
            log.exception("could not queue the late passive answer to %s; replying anyway", message.dedupe_key)
            return body
        return SUCCESS

    async def _release_tail(self, message: InboundMessage) -> None:
        key, stamp = f"reply:{message.dedupe_key}", now_ms(self._clock)
        try:
            await self._writes.run(lambda target: _release(target, key, stamp))
        except Exception as exc:  # the rest still goes out when its hold ends
            log.warning("could not release the rest of the answer to %s (%s)", message.dedupe_key, type(exc).__name__)

    async def _note_sender(self, target: Executor, message: InboundMessage, received: int,
                           window_kind: str | None) -> None:
        """A slow answer: its sender, window and reachability are recorded now, when WeChat stops waiting,
        not after the handler (recovery's notice and the answer's own push find the window open)."""
        assert message.user_id is not None
        await inbound.assign_user(await orm(target), message.dedupe_key, user_id=message.user_id)
        await self._record_window(target, message.user_id, received, window_kind)

    async def _late(self, task: asyncio.Future[_Answered], message: InboundMessage, received: int) -> None:
        try:
            answered = await task
        except Exception:
            log.exception("slow handler failed on %s", message.dedupe_key)
            answered = _Answered(APOLOGY)
        try:
            if answered.body is not None:  # its unit committed the passive reply just after WeChat stopped waiting
                await self._requeue(message, answered.reply, answered.body)
                return
            await self._finish(message, received, answered.reply, window_kind=None, passive=False, late=True)
        except Exception:
            log.exception("late answer to %s could not be queued", message.dedupe_key)

    async def _typing(self, openid: str) -> None:
        assert self._client is not None
        try:
            await self._client.typing(openid)
        except Exception as exc:  # best effort: the answer still arrives through the outbox
            log.warning("typing indicator failed: %s", exc)

    def compose(self, message: InboundMessage, reply: Reply, *, passive: bool) -> tuple[str, str]:
        """The response body (a passive reply of the answer's first part, or `success`) and the text
        left to queue in the outbox (the overflow, or the whole answer when it cannot go passively)."""
        text = strip_illegal(reply or "").strip()
        parts = split_utf8(text) if text else []
        if parts and passive:
            body = text_reply(to_user=message.openid, from_user=message.to_user, content=parts[0],
                              create_time=now_ms(self._clock) // 1000)
            return body, "".join(parts[1:])
        return SUCCESS, text

    async def record(self, target: Executor, message: InboundMessage, received: int, body: str, queued: str,
                     *, window_kind: str | None, template_status: str | None = None, late: bool = False) -> None:
        """The finishing writes: window and reachability, queued text, inbound row done with its body.
        `late`: an answer after WeChat stopped waiting, whose window was recorded then; if the user has
        unsubscribed meanwhile, the unsubscribe wins: nothing is queued and nothing of theirs comes back."""
        user_id = message.user_id
        assert user_id is not None
        stamp = now_ms(self._clock)
        if late and not await users.is_subscribed(await orm(target), user_id):  # unsubscribed, or unreachable
            log.info("wechat %s: the user left while the answer was on its way; not queued", message.dedupe_key)
            if await inbound.received_since(await orm(target), user_id, since_ms=received,
                                            key_like=f"evt:{message.openid}:%:unsubscribe:%"):
                await users.forget(await orm(target), user_id, now_ms=stamp)  # what the slow handler wrote, too
            await inbound.finish(target, message.dedupe_key, reply=None, user_id=user_id)
            return
        await self._record_window(target, user_id, received, window_kind)
        if template_status is not None:
            await template_job.record(await orm(target), message, now_ms=stamp)
        await self._keep(target, message, body, queued, stamp)

    @staticmethod
    async def _record_window(target: Executor, user_id: int, received: int, window_kind: str | None) -> None:
        if window_kind == "message":  # the window, and reachable again, in one UPDATE
            await window.record_message(target, user_id, received)
        elif window_kind == "click":  # clicked, followed or scanned: reachable again too
            await window.record_interaction(await orm(target), user_id, "click", received)
            await users.mark_reachable(target, user_id)

    @staticmethod
    async def _keep(target: Executor, message: InboundMessage, body: str, queued: str, stamp: int) -> None:
        assert message.user_id is not None
        if queued:  # after a passive head, the rest waits until the head surely went (released, or merged)
            await outbox.enqueue(await orm(target), user_id=message.user_id,
                                 idempotency_key=f"reply:{message.dedupe_key}", kind="agent_reply",
                                 payload={"text": queued, "openid": message.openid}, now_ms=stamp,
                                 deliver_at_ms=stamp + TAIL_HOLD_MS if body != SUCCESS else None)
        await inbound.finish(target, message.dedupe_key, reply=body, user_id=message.user_id)

    async def _finish(self, message: InboundMessage, received: int, reply: Reply, *, window_kind: str | None,
                      passive: bool = True, template_status: str | None = None, late: bool = False) -> str:
        """One transaction: `record`'s writes for the answer.

        Should it fail, the answer is kept by a second, smaller transaction (queued text and the
        inbound row); a passive reply is returned even if that fails too (the user still sees it).
        """
        user_id = message.user_id
        assert user_id is not None
        body, queued = self.compose(message, reply, passive=passive)

        async def done(tx: Tx) -> None:  # the usual case with nothing queued: `Fast` statements only
            if window_kind == "message":
                await window.record_message(tx, user_id, received)
            await inbound.finish(tx, message.dedupe_key, reply=body, user_id=user_id)

        usual = not queued and not late and template_status is None and window_kind in ("message", None)
        try:
            if usual:
                await self._writes.run_fast(done)
            else:
                await self._writes.run(partial(self.record, message=message, received=received, body=body,
                                               queued=queued, window_kind=window_kind,
                                               template_status=template_status, late=late))
        except Exception:
            if body == SUCCESS and not queued:
                raise
            log.exception("finishing %s failed; keeping its answer", message.dedupe_key)
            try:
                await self._writes.run(partial(self._keep, message=message, body=body, queued=queued,
                                               stamp=now_ms(self._clock)))
            except Exception:
                if body == SUCCESS:
                    raise
                log.exception("could not store the reply to %s; answering passively anyway", message.dedupe_key)
        return body


async def _release(target: Executor, key: str, stamp: int) -> None:
    await outbox.release(await orm(target), key, now_ms=stamp)


async def _within_budget(claiming: Awaitable[tuple[inbound.Claim, Handoff | None]],
                         spawn: Callable[[Awaitable[Any]], None]) -> tuple[inbound.Claim, Handoff | None]:
    """The claim's outcome if it comes within CLAIM_BUDGET_S, else TimeoutError with the claim left to end
    on its own (see `Dispatcher.handle`); a handoff it opens late is released, never handed to a handler."""
    task = asyncio.ensure_future(claiming)
    done, _pending = await asyncio.wait({task}, timeout=CLAIM_BUDGET_S)
    if task in done:
        return task.result()

    async def finish_late() -> None:
        try:
            _claim, handoff = await task
        except Exception as exc:
            log.warning("a claim that missed its budget failed: %s", type(exc).__name__)
            return
        if handoff is not None:
            await handoff.release()

    spawn(finish_late())
    raise TimeoutError(f"the database did not claim the message within {CLAIM_BUDGET_S} s")


@dataclass(frozen=True, slots=True)
class _Answered:
    """A message's answer; `body`: the response already stored with the unit's writes (None: still to store)."""

    reply: Reply
    body: str | None = None
