"""Implementations of the database-backed `schedbot` subcommands (serve, worker, migrate, user token, wechat,
doctor). Database failures end as one line naming DATABASE_URL and exit status 2 (bot/cli/preflight.py)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Coroutine
from typing import Any

from bot.cli.preflight import DatabaseProblem, check_claiming, check_database
from bot.logging_setup import configure_logging
from bot.settings import ConfigError, Settings, load_settings


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"schedbot: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.LOG_FORMAT)
    try:
        return _dispatch(args, settings)
    except DatabaseProblem as exc:
        print(f"schedbot: {exc}", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        return _serve(settings, args)
    if args.command == "migrate":
        revision = asyncio.run(_prepare(settings, migrate=True))
        print(f"database is at the latest revision {revision} ({_safe_url(settings.DATABASE_URL)})")
        return 0
    if args.command == "user":
        return asyncio.run(_tokens(settings, args))
    if args.command == "worker":
        return _run_fast(_worker(settings, metrics_at=(args.metrics_host, args.metrics_port)
                                 if args.metrics_port is not None else None))
    if args.command == "wechat":
        from bot.wechat import admin as wechat_admin

        return asyncio.run(wechat_admin.run(settings, args, sys.stdout))
    if args.command == "doctor":
        from bot.cli import doctor

        return asyncio.run(doctor.run(settings, sys.stdout))
    if args.command == "chat":
        return _chat(settings, args)
    if args.command == "holidays":
        return asyncio.run(_holidays(settings, args))
    print(f"schedbot: unknown command {args.command!r}", file=sys.stderr)
    return 2


def _run_fast(main: Coroutine[Any, Any, int]) -> int:
    """Run a long-lived coroutine on uvloop where it is installed (a cheaper event loop per send)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop does not build everywhere (Windows)
        return asyncio.run(main)
    return uvloop.run(main)


async def _prepare(settings: Settings, *, migrate: bool | None = None, claims: bool = False) -> str | None:
    """Reach the database and bring or check its schema (DatabaseProblem on failure); with `claims`, also
    insist that its FOR UPDATE SKIP LOCKED is real (several workers claim from it)."""
    from schedule.db import create_engine

    engine = create_engine(settings.DATABASE_URL)
    try:
        revision = await check_database(engine, settings.DATABASE_URL,
                                        migrate=settings.DATABASE_AUTO_MIGRATE if migrate is None else migrate)
        if claims:
            await check_claiming(engine, settings.DATABASE_URL)
        return revision
    finally:
        await engine.dispose()


async def _worker(settings: Settings, *, metrics_at: tuple[str, int] | None = None) -> int:
    """Delivery worker only (scale-out): due reminders, digests and the outbox, until SIGINT/SIGTERM."""
    import signal

    from bot import wiring
    from bot.web.metrics import WorkerMetrics

    await _prepare(settings, claims=True)
    # requests run later (the agent answers free-form ones); their answers go out through this worker
    wired = wiring.worker(settings)
    ports, worker = wired.ports, wired.worker
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, worker.stop)
    log = logging.getLogger("schedbot")
    metrics = WorkerMetrics(ports.sessions, ports.clock) if metrics_at is not None else None
    try:
        if metrics is not None and metrics_at is not None:
            try:
                metrics.serve(*metrics_at)
            except OSError as exc:
                print(f"schedbot: cannot serve metrics on {metrics_at[0]}:{metrics_at[1]} ({exc.strerror or exc})",
                      file=sys.stderr)
                return 2
        if ports.client is None:
            log.info("WeChat is not configured: pushes wait in the in-app queue")
        log.info("delivery worker running (%s)", _safe_url(settings.DATABASE_URL))
        wired.requests.start()
        await worker.run()
        log.info("delivery worker stopped")
    finally:
        if metrics is not None:
            await metrics.aclose()  # before the engine goes: a refresh in flight reads the database
        await ports.aclose()
    return 0


def _chat(settings: Settings, args: argparse.Namespace) -> int:
    """A terminal conversation through the same message handler WeChat messages reach (bot/cli/chat.py)."""
    from bot.cli.chat import parse_now, run_chat

    try:
        now = parse_now(args.now) if args.now else None
    except ValueError as exc:
        print(f"schedbot: {exc}", file=sys.stderr)
        return 2
    asyncio.run(_prepare(settings))  # a database problem is one line and exit 2, like every command
    return asyncio.run(run_chat(settings, args.user, now=now))


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    from bot.cli import serve

    options = serve.ServeOptions(host=args.host, port=args.port, workers=args.workers,
                                 proxy_headers=args.proxy_headers, forwarded_allow_ips=args.forwarded_allow_ips)
    problem = serve.refusal(settings, options)
    if problem:
        print(f"schedbot: {problem}", file=sys.stderr)
        return 2
    asyncio.run(_prepare(settings, claims=True))  # its built-in worker claims reminders like `schedbot worker`
    return serve.run(settings, options)


async def _tokens(settings: Settings, args: argparse.Namespace) -> int:
    """schedbot user token NAME [--label L | --revoke L], user tokens NAME and user forget NAME."""
    from schedule.clock import SystemClock
    from schedule.db import create_engine, session_factory
    from schedule.errors import InvalidChange
    from schedule.service import ScheduleService

    name = args.name.strip()
    if not name or len(name) > 128:
        print("schedbot: NAME must be 1–128 characters", file=sys.stderr)
        return 2
    await _prepare(settings)
    engine = create_engine(settings.DATABASE_URL)
    try:
        service = ScheduleService(session_factory(engine), SystemClock(), default_timezone=settings.H5_DEFAULT_TIMEZONE)
        if args.user_command == "forget":
            person = await service.find_user(name)
            if person is None:
                print(f"schedbot: no user {name!r}", file=sys.stderr)
                return 1
            await service.forget_user(person.id)
            print(f"user {person.id} ({name}) forgotten: schedule, dialogue, agent history, links, tokens and "
                  "delivery logs deleted; queued pushes cancelled and stored texts blanked")
            return 0
        if args.user_command == "tokens":
            found = await service.api_tokens(name)
            for info in found:
                used = _when(info.last_used_at) if info.last_used_at else "never used"
                print(f"{info.label}\tcreated {_when(info.created_at)}\t{used}")
            if not found:
                print(f"{name} has no API tokens", file=sys.stderr)
            return 0
        if args.revoke is not None:
            done = await service.revoke_api_token(name, args.revoke)
            label = args.revoke
            said = f"token {label!r} of {name} revoked" if done else f"{name} has no token labelled {label!r}"
            print(said, file=sys.stdout if done else sys.stderr)
            return 0 if done else 1
        try:
            user, token, replaced = await service.issue_api_token(name, label=args.label)
        except InvalidChange as exc:
            print(f"schedbot: --label: {exc}", file=sys.stderr)
            return 2
    finally:
        await engine.dispose()
    print(f"user {user.id} ({user.wechat_openid}), token {args.label!r}; use: Authorization: Bearer <token>")
    if replaced:
        print(f"the previous token labelled {args.label!r} stops working now; other labels are untouched",
              file=sys.stderr)
    print(token)
    return 0


async def _holidays(settings: Settings, args: argparse.Namespace) -> int:
    """schedbot holidays load FILE (a year's official schedule, checked, then stored for every process) and
    schedbot holidays list."""
    from pathlib import Path

    from schedule import holiday_store, holidays
    from schedule.clock import SystemClock, now_ms
    from schedule.db import create_engine, session_factory

    schedules: list[holidays.YearSchedule] = []
    source = None
    if args.holidays_command == "load":
        try:
            schedules, source = holiday_store.read_file(Path(args.file))
        except holidays.HolidayFileError as exc:
            print(f"schedbot: {args.file}: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"schedbot: cannot read {args.file} ({exc.strerror or exc})", file=sys.stderr)
            return 2
    await _prepare(settings)
    engine = create_engine(settings.DATABASE_URL)
    try:
        sessions = session_factory(engine)
        if schedules:
            async with sessions.begin() as session:
                await holiday_store.store(session, schedules, source=source, now_ms=now_ms(SystemClock()))
        await holiday_store.refresh(sessions)
    finally:
        await engine.dispose()
    for schedule in schedules:
        print(f"{schedule.year}: {len(schedule.holidays)} days off, {len(schedule.workdays)} 调休 working days "
              "loaded; every web and worker process uses them within 10 minutes")
    if args.holidays_command == "list":
        this_year = SystemClock().now().year
        for year in range(this_year - 1, this_year + 4):
            said = ("loaded" if year in holidays.loaded() else "built in") if holidays.published(year) \
                else "not published: statutory holidays only, weekends off"
            print(f"{year}: {said}")
    return 0


def _when(ms: int) -> str:
    from schedule.clock import from_ms

    return from_ms(ms).strftime("%Y-%m-%d %H:%M UTC")


def _safe_url(url: str) -> str:
    from bot.cli.preflight import masked

    return masked(url)
