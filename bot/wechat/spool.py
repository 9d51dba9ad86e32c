"""The durable inbound spool (database down): a message that arrives while the database does not answer is appended
to a local file, fsync'd, before the user gets a short passive reply; once the database answers again the
spool is replayed in order through the dispatcher (dedupe applies) and the answers go out by custom message.

Each process appends to a file of its own, held under an exclusive flock; a file whose owner died (its lock
is free) is adopted by the next process that replays. A record holds the message's fields, so users' words
are on disk (0600) only until their replay. A record that cannot be read (a torn write, a file that is not
ours) is skipped, and its file moved aside as `*.bad` for the operator once the rest of it is replayed: it
never stops the replay of the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
Record = dict[str, Any]
QUARANTINED = ".bad"  # a spool file with unreadable records, once the rest of it is replayed


class BadRecord(ValueError):
    """A spooled record that cannot be replayed (torn, or not one of ours): skipped, its file kept aside."""


def _is_spool(name: str) -> bool:
    return name.startswith("spool-") and not name.endswith(QUARANTINED)


class Spool:
    def __init__(self, directory: Path | str) -> None:
        self._dir = Path(directory)
        self._name = f"spool-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._fd: int | None = None  # the file appends go to, opened (and locked) at the first append
        self._held: dict[Path, int] = {}  # files being replayed, ours or adopted, locked by us
        self._stuck: set[Path] = set()  # bad files that could not be moved aside (said once, then left)
        self._serial = 0
        self._appending = asyncio.Lock()
        self._replaying = asyncio.Lock()

    # ---------------------------------------------------------------- appending (the webhook, DB down)
    async def append(self, record: Record) -> None:
        """Durable once this returns: written and fsync'd."""
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        async with self._appending:
            await asyncio.to_thread(self._write, data)

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._fd = _locked(self._dir / f"{self._name}.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            assert self._fd is not None  # a fresh name: nobody else holds it
        os.write(self._fd, data)
        os.fsync(self._fd)

    # ---------------------------------------------------------------- replaying (the database is back)
    def pending(self) -> bool:
        """Cheap: is anything spooled here, by this process or one that died?"""
        if self._fd is not None or self._held:
            return True
        with contextlib.suppress(FileNotFoundError), os.scandir(self._dir) as entries:
            return any(_is_spool(entry.name) and Path(entry.path) not in self._stuck for entry in entries)
        return False

    async def replay(self, handle: Callable[[Record], Awaitable[None]]) -> int:
        """Hand every spooled record to `handle`, file by file (oldest first) and in order; a file goes once
        all its records were handled. Stops at the first failure (the database is down again): the file
        stays and the next replay starts it over (records already handled are then duplicates that dedupe
        drops). A record that is not JSON, or that `handle` refuses with BadRecord, is skipped and its file
        moved aside (`*.bad`) instead of deleted. Returns the records handled."""
        async with self._replaying:
            async with self._appending:  # new appends go to a fresh file while this one is replayed
                if self._fd is not None:
                    self._serial += 1
                    path = self._dir / f"{self._name}.jsonl"
                    replaying = path.with_name(f"{self._name}.{self._serial}.replay")
                    path.rename(replaying)  # the lock goes with the open file
                    self._held[replaying], self._fd = self._fd, None
            self._adopt()
            handled = 0
            for path in sorted(self._held, key=_age):
                handled += await self._replay_file(path, handle)
            return handled

    async def _replay_file(self, path: Path, handle: Callable[[Record], Awaitable[None]]) -> int:
        handled, bad = 0, 0
        try:
            lines = (await asyncio.to_thread(path.read_bytes)).splitlines()
        except OSError:  # not a file we can read (a directory, a dangling link): nothing in it is ours
            lines, bad = [], 1
        for line in lines:
            if not line.strip():
                continue
            try:
                await handle(_record(line))
            except BadRecord:
                bad += 1
                continue
            handled += 1
        if bad:
            self._quarantine(path, bad, handled)
        else:
            await asyncio.to_thread(path.unlink, missing_ok=True)
        os.close(self._held.pop(path))
        return handled

    def _quarantine(self, path: Path, bad: int, handled: int) -> None:
        """Move the file aside for the operator, with one ERROR line (names and counts, never its text)."""
        aside = path.with_name(path.name + QUARANTINED)
        try:
            path.rename(aside)
        except OSError as exc:
            log.error("inbound spool file %s has %d unreadable record(s) and could not be moved aside (%s); "
                      "remove it by hand", path.name, bad, type(exc).__name__)
            self._stuck.add(path)
            return
        log.error("inbound spool file %s had %d unreadable record(s): moved aside as %s after replaying the %d "
                  "other(s); inspect it, then delete it", path.name, bad, aside.name, handled)

    def _adopt(self) -> None:
        """Take the files of processes that died (their lock is free)."""
        with contextlib.suppress(FileNotFoundError), os.scandir(self._dir) as entries:
            for entry in entries:
                path = Path(entry.path)
                if not _is_spool(entry.name) or path in self._held or path in self._stuck \
                        or entry.name.startswith(self._name):
                    continue
                if entry.is_symlink():  # never one of ours: whatever it points at is not read
                    self._quarantine(path, 1, 0)
                    continue
                fd = _locked(path, os.O_RDONLY)
                if fd is not None:
                    log.warning("adopting the inbound spool %s of a process that stopped", entry.name)
                    self._held[path] = fd

    def close(self) -> None:
        for fd in [*self._held.values(), *([self._fd] if self._fd is not None else [])]:
            os.close(fd)  # closing drops the lock: another process may adopt what is left
        self._held, self._fd = {}, None


def _record(line: bytes) -> Record:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as exc:  # torn (a crash mid-write), not UTF-8, or not JSON at all
        raise BadRecord(type(exc).__name__) from None
    if not isinstance(record, dict):
        raise BadRecord(type(record).__name__)
    return record


def _age(path: Path) -> tuple[float, str]:
    try:
        return path.stat().st_mtime, path.name
    except OSError:
        return 0.0, path.name


def _locked(path: Path, flags: int) -> int | None:
    """The file opened under an exclusive lock, or None when a live process holds it."""
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


class SpoolReplayer:
    """Runs `replay` (a coroutine replaying the spool) every `interval_s` while something is spooled; a
    failure means the database is still down and is retried at the next tick."""

    def __init__(self, spool: Spool, replay: Callable[[], Awaitable[int]], *, interval_s: float = 1.0) -> None:
        self.spool, self._replay, self._interval_s = spool, replay, interval_s
        self._task: asyncio.Task[None] | None = None
        self._failing = False

    async def run_once(self) -> int:
        if not self.spool.pending():
            return 0
        try:
            handled = await self._replay()
        except Exception as exc:
            if not self._failing:  # one line per outage, not one a second
                log.warning("inbound spool not replayed yet (%s); retrying every %.0f s", type(exc).__name__,
                            self._interval_s)
            self._failing = True
            return 0
        if handled or self._failing:
            log.info("inbound spool replayed: %d message(s)", handled)
        self._failing = False
        return handled

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="schedbot-spool-replay")

    async def _run(self) -> None:
        while True:
            await self.run_once()
            await asyncio.sleep(self._interval_s)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.spool.close()
