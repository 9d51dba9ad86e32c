"""The suite-wide secret check: every log record of the test session (every logger at DEBUG and up, the
libraries at the levels every process holds them at) is formatted by the production handler
(`bot.logging_setup.log_handler`, its SecretFilter included) and searched for a token; so is the failure
text each test database keeps. The conftest fails the test during which one showed up, or the session.

The shapes are written here on their own, not borrowed from the filter, so a gap in the filter is caught.
"""

from __future__ import annotations

import asyncio
import copy
import io
import logging
import re

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from bot.logging_setup import log_handler, quiet_libraries
from fakes.wechat import TICKET_PREFIX, TOKEN_PREFIX

TOKEN = re.compile(
    rf"{TOKEN_PREFIX}|{TICKET_PREFIX}"  # what FakeWeChatAPI issues, wherever it appears
    r"|(?:access_token|ticket)=(?!…)[^&\s\"'<>]"  # a credential in a URL, whoever issued it
    r"|[\"'](?:access_token|ticket)[\"']\s*:\s*[\"'](?!…)[^\"']"  # … or in a JSON body
    r"|(?<![A-Za-z0-9_.-])[psc]\.[0-9a-f]{1,16}\.[0-9a-f]{1,16}\.[A-Za-z0-9_-]{0,32}\.[A-Za-z0-9_-]{32}"  # link
    r"|(?<![A-Za-z0-9_-])sb_[A-Za-z0-9_-]{43}")  # an API (bearer) token

# Failure text the database keeps, where a transport error's text (once with the request URL) ends up.
FAILURE_TEXT = text("SELECT error_message FROM schedule_delivery_logs WHERE error_message IS NOT NULL "
                    "UNION ALL SELECT last_error FROM schedule_reminders WHERE last_error IS NOT NULL "
                    "UNION ALL SELECT last_error FROM scheduled_requests WHERE last_error IS NOT NULL")


def leaks(line: str) -> list[str]:
    """Each token-shaped piece of `line`, with a little context."""
    return [line[max(0, m.start() - 40):m.end() + 20] for m in TOKEN.finditer(line)]


class SecretWatch(logging.Handler):
    """A root handler that passes a copy of each record through the production handler's filters and
    formatter, and keeps the lines that still hold a token."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._production = log_handler(io.StringIO())
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        shown = copy.copy(record)  # the filters rewrite the record; the test's own caplog sees it untouched
        if not self._production.filter(shown):
            return
        line = self._production.format(shown)
        if TOKEN.search(line):
            self.found.append(f"{record.name}: {line[:300]}")

    def install(self) -> None:
        """On the root logger at DEBUG (again, should a test have replaced the root's handlers), the libraries
        held at the levels every process holds them at."""
        quiet_libraries()
        root = logging.getLogger()
        if self not in root.handlers:
            root.addHandler(self)
        if root.level > logging.DEBUG or root.level == logging.NOTSET:
            root.setLevel(logging.DEBUG)


async def stored_leaks(engine: AsyncEngine) -> list[str]:
    """Tokens in the database's failure text (delivery log, reminders, scheduled requests). Read through the
    engine's pool; when a test left it checked out (one connection on SQLite), on a connection of its own."""
    try:
        texts = await _failure_texts(engine, wait_s=2)
    except TimeoutError:
        reader = create_async_engine(engine.url, poolclass=NullPool)
        try:
            texts = await _failure_texts(reader, wait_s=10)
        except TimeoutError:  # the database is locked: nothing to read
            return []
        finally:
            await reader.dispose()
    return [leak for value in texts for leak in leaks(value)]


async def _failure_texts(engine: AsyncEngine, *, wait_s: float) -> list[str]:
    try:
        async with asyncio.timeout(wait_s), engine.connect() as conn:
            return list((await conn.execute(FAILURE_TEXT)).scalars().all())
    except SQLAlchemyError:  # the test dropped the tables or made the database unreachable: nothing to read
        return []
