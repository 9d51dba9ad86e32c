"""Implementations of the database-backed `schedbot` subcommands (serve, migrate, user token)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from bot.settings import ConfigError, Settings, load_settings


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"schedbot: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        return _serve(settings, args.host, args.port)
    if args.command == "migrate":
        from schedule.migrate import upgrade_url

        upgrade_url(settings.DATABASE_URL)
        print(f"database is at the latest revision ({_safe_url(settings.DATABASE_URL)})")
        return 0
    if args.command == "user" and args.user_command == "token":
        return asyncio.run(_issue_token(settings, args.name))
    if args.command == "worker":
        return asyncio.run(_worker(settings))
    if args.command == "chat":
        return asyncio.run(_chat(settings, args.user))
    print(f"schedbot: unknown command {args.command!r}", file=sys.stderr)
    return 2


async def _worker(settings: Settings) -> int:
    """Delivery worker only (scale-out): due reminders, digests and the outbox, until SIGINT/SIGTERM."""
    import signal

    from bot.runtime import delivery_worker, wechat_client
    from schedule.clock import SystemClock
    from schedule.db import create_engine, session_factory
    from schedule.migrate import upgrade

    engine = create_engine(settings.DATABASE_URL)
    clock = SystemClock()
    sessions = session_factory(engine)
    client = wechat_client(settings, sessions, clock, None)
    worker = delivery_worker(settings, sessions, clock, client)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, worker.stop)
    try:
        if settings.DATABASE_AUTO_MIGRATE:
            await upgrade(engine)
        if client is None:
            logging.getLogger("schedbot").info("WeChat is not configured: pushes wait in the in-app queue")
        logging.getLogger("schedbot").info("delivery worker running (%s)", _safe_url(settings.DATABASE_URL))
        await worker.run()
    finally:
        if client is not None:
            await client.aclose()
        await engine.dispose()
    return 0


async def _chat(settings: Settings, name: str) -> int:
    """A terminal conversation through the same message handler WeChat messages reach."""
    from bot.handler import IntentEchoHandler
    from bot.wechat.messages import InboundMessage
    from schedule.clock import SystemClock

    clock = SystemClock()
    handler = IntentEchoHandler(clock, tz=settings.H5_DEFAULT_TIMEZONE)
    print("schedbot chat — 输入消息，回车发送；Ctrl-D 退出。")
    for serial, line in enumerate(iter(sys.stdin.readline, ""), 1):
        text = line.strip()
        if not text:
            continue
        message = InboundMessage(kind="text", msg_type="text", openid=name, to_user="schedbot",
                                 create_time=int(clock.now().timestamp()), msg_id=f"chat-{serial}", content=text)
        reply = await handler(message)
        print(reply or "（没有回复）", flush=True)
    return 0


def _serve(settings: Settings, host: str, port: int) -> int:
    import uvicorn

    from bot.app import create_app

    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")
    return 0


async def _issue_token(settings: Settings, name: str) -> int:
    from schedule.clock import SystemClock
    from schedule.db import create_engine, session_factory
    from schedule.migrate import upgrade
    from schedule.service import ScheduleService

    name = name.strip()
    if not name or len(name) > 128:
        print("schedbot: NAME must be 1–128 characters", file=sys.stderr)
        return 2
    engine = create_engine(settings.DATABASE_URL)
    try:
        if settings.DATABASE_AUTO_MIGRATE:
            await upgrade(engine)
        service = ScheduleService(session_factory(engine), SystemClock(), default_timezone=settings.H5_DEFAULT_TIMEZONE)
        user, token = await service.issue_api_token(name)
    finally:
        await engine.dispose()
    print(f"user {user.id} ({user.wechat_openid}); use: Authorization: Bearer <token>")
    print(token)
    return 0


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
