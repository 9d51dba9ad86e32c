"""The pending question per user (`dialog_states`), saved with an expiry and read back while fresh, and beside
it the item in focus (`bot.conversation.focus`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, delete, exists, outerjoin, select
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from bot.conversation.context import Ask
from bot.conversation.focus import Focus
from intent.model import Intent
from schedule.domain import User
from schedule.errors import NotFound
from schedule.fastsql import Executor, Fast
from schedule.model import DialogStateRow, OutboundMessageRow, UserRow


@dataclass(frozen=True)
class Pending:
    intent: Intent
    candidates: tuple[int, ...]


_D = DialogStateRow
# Read on every message and written on every question: prebuilt Core statements, no ORM objects.
_CLEAR = Fast(delete(_D).where(_D.user_id == bindparam("p_uid")))
_ROW = {"user_id": bindparam("p_uid"), "pending_intent": bindparam("p_intent", type_=_D.pending_intent.type),
        "expires_at": bindparam("p_exp"), "focus": bindparam("p_focus", type_=_D.focus.type)}
_mysql_save = mysql_insert(_D).values(**_ROW)
_sqlite_save = sqlite_insert(_D).values(**_ROW)
# An upsert: two messages of one user in flight at once both find no row, or one deletes what the
# other updates; either way the last question asked is the one kept, and neither message fails.
_SAVE = Fast({
    "mysql": _mysql_save.on_duplicate_key_update(pending_intent=_mysql_save.inserted.pending_intent,
                                                 expires_at=_mysql_save.inserted.expires_at,
                                                 focus=_mysql_save.inserted.focus),
    "sqlite": _sqlite_save.on_conflict_do_update(
        index_elements=[_D.user_id], set_={"pending_intent": _sqlite_save.excluded.pending_intent,
                                           "expires_at": _sqlite_save.excluded.expires_at,
                                           "focus": _sqlite_save.excluded.focus}),
})


@dataclass(frozen=True)
class Opening:
    """What every chat message reads first, in one statement: the user, their stored question (not yet
    checked for expiry: that needs `now` in the user's timezone) and whether in-app notices wait."""

    user: User
    stored_intent: Any  # the question as saved; None (and expires_at None) when there is none
    expires_at: int | None
    has_notices: bool
    focus: Focus = field(default_factory=Focus)

    def pending(self, now_ms: int) -> Pending | None:
        """The open question while fresh, or None when there is none, it expired or it no longer parses."""
        if self.expires_at is None or self.expires_at <= now_ms:
            return None
        data: dict[str, Any] = self.stored_intent or {}
        try:
            intent = Intent.model_validate(data.get("intent") or {})
        except ValueError:  # written by an older version: drop it rather than fail the message
            return None
        return Pending(intent, tuple(int(i) for i in data.get("candidates") or ()))


_U, _O = UserRow, OutboundMessageRow
# FOR UPDATE: a user's messages take their turns one at a time. The unit's inserts point at the user (on
# InnoDB a shared lock on that row for the foreign key) and its last write updates the row (the window);
# two units of one user holding the shared lock both wanted the exclusive one, and InnoDB rolled one back
# (11 deadlocks in 12 concurrent pairs). Taken first, the lock makes the second message wait and then read
# what the first committed, its question included. SQLite's BEGIN IMMEDIATE serialises units already.
_OPEN = Fast(
    select(_U.id, _U.wechat_openid, _U.timezone, _U.subscribed, _D.pending_intent, _D.expires_at, _D.focus,
           exists().where(_O.user_id == _U.id, _O.channel == "inapp", _O.status == "pending").label("has_notices"))
    .select_from(outerjoin(_U, _D, _D.user_id == _U.id)).where(_U.id == bindparam("p_uid")).with_for_update())


def opening(user_id: int) -> tuple[Fast, dict[str, Any]]:
    """`open_turn`'s statement, for a caller that sends it ahead (the webhook, with its claim)."""
    return _OPEN, {"p_uid": user_id}


async def open_turn(session: Executor, user_id: int) -> Opening:
    """The user (NotFound when missing), their question and the notices flag: one round trip, not three."""
    row = (await _OPEN.run(session, {"p_uid": user_id})).first()
    if row is None:
        raise NotFound(f"user {user_id}")
    user = User(id=row.id, wechat_openid=row.wechat_openid, timezone=row.timezone, subscribed=bool(row.subscribed))
    return Opening(user, row.pending_intent, row.expires_at, bool(row.has_notices), Focus.from_json(row.focus))


async def save(session: Executor, user_id: int, ask: Ask | None, *, expires_at_ms: int,
               focus: Focus | None = None) -> None:
    """The open question (None: no question open) and the focus, in one upsert sent with the next trip."""
    payload = {"intent": ask.intent.model_dump(mode="json"), "candidates": list(ask.candidates)} if ask else {}
    await _SAVE.defer(session, {"p_uid": user_id, "p_intent": payload, "p_exp": expires_at_ms if ask else 0,
                                "p_focus": focus.to_json() if focus is not None else None})


async def keep_question(session: Executor, user_id: int, opening: Opening, *, focus: Focus) -> None:
    """A new focus, the stored question (open or expired) written back as it was."""
    await _SAVE.defer(session, {"p_uid": user_id, "p_intent": opening.stored_intent or {},
                                "p_exp": opening.expires_at or 0, "p_focus": focus.to_json()})


async def clear(session: Executor, user_id: int) -> None:
    await _CLEAR.defer(session, {"p_uid": user_id})
