"""`schedbot chat`: a terminal conversation through the same handler and database as WeChat (the
caller has checked and migrated the database).

Without WeChat, pushes that come due while you chat land in the in-app queue and are shown at the
top of the next reply, as they would be for a WeChat user whose window is closed. `--now` pins the
clock (demos, tests); then a line `/wait 90m` (or `2h`, `1d`) moves it forward.
"""

from __future__ import annotations

import logging
import re
import sys
from datetime import datetime, timedelta
from typing import TextIO
from zoneinfo import ZoneInfo

from bot.settings import Settings

PROMPT, ANSWER = "你：", "助手："
_WAIT = re.compile(r"^/wait\s+((?:\d+\s*[dhm]\s*)+)$")
_WAIT_PART = re.compile(r"(\d+)\s*([dhm])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


def parse_now(value: str) -> datetime:
    """An ISO 8601 instant with its UTC offset (a naive time is refused: which timezone would it be?)."""
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("--now needs a UTC offset, e.g. 2026-12-01T10:00:00+08:00")
    return moment


async def run_chat(settings: Settings, name: str, *, now: datetime | None = None, stdin: TextIO = sys.stdin,
                   stdout: TextIO = sys.stdout) -> int:
    from bot import wiring
    from bot.wechat.messages import InboundMessage
    from intent import target
    from schedule import holiday_store
    from schedule.clock import Clock, PinnedClock, SystemClock

    target.warm_up()  # the same text gets the same answer from the first message on
    interactive = stdin.isatty()
    logging.getLogger().setLevel(logging.WARNING)  # the transcript is the output; routine INFO lines are noise
    if interactive:
        import readline  # noqa: F401 - line editing and history for input()
    pinned = PinnedClock(now) if now is not None else None
    clock: Clock = pinned or SystemClock()
    wired = wiring.chat(settings, clock)  # page links point where `serve` serves the pages
    handler, worker, service = wired.handler, wired.worker, wired.ports.service
    try:
        await holiday_store.refresh(wired.ports.sessions)  # the official holiday schedules an operator loaded
        user = await service.get_or_create_user(name)
        print("schedbot chat — 输入消息回车发送，Ctrl-D 退出。", file=stdout, flush=True)
        serial = 0
        while True:
            text = _read(stdin, interactive)
            if text is None:
                break
            text = text.strip()
            if not text:
                continue
            if not interactive:
                print(f"{PROMPT}{text}", file=stdout)
            if text.startswith("/wait"):
                wait = _WAIT.match(text)
                if pinned is None:
                    print("（/wait 只在用 --now 固定时钟时可用）", file=stdout)
                elif wait is None:
                    print("（用法：/wait 90m、/wait 2h、/wait 1d 或 /wait 8h5m）", file=stdout)
                else:
                    for amount, unit in _WAIT_PART.findall(wait.group(1)):
                        pinned.advance(timedelta(**{_UNITS[unit]: int(amount)}))
                    shown = pinned.now().astimezone(ZoneInfo(settings.H5_DEFAULT_TIMEZONE))
                    print(f"（时间前进到 {shown.isoformat(timespec='minutes')}）", file=stdout)
                continue
            await worker.run_once()  # reminders and digests now due go to the in-app queue
            serial += 1
            stamp = int(clock.now().timestamp())
            message = InboundMessage(kind="text", msg_type="text", openid=name, to_user="schedbot",
                                     create_time=stamp, msg_id=f"chat-{stamp}-{serial}", content=text,
                                     user_id=user.id)
            answer = await handler(message)
            print(f"{ANSWER}{answer or '（没有回复）'}\n", file=stdout, flush=True)
    finally:
        await wired.ports.aclose()
    return 0


def _read(stdin: TextIO, interactive: bool) -> str | None:
    if interactive:
        try:
            return input(PROMPT)
        except EOFError:
            return None
    line = stdin.readline()
    return line if line else None
