"""`schedbot serve`: one process, or N web processes under uvicorn's process manager (MariaDB only).

Worker processes build their app through the factory `bot.cli.serve:app_from_env`, which reads the same
environment the parent validated; the parent migrates once and the children do not migrate again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fastapi import FastAPI

from bot.logging_setup import configure_logging
from bot.settings import Settings, load_settings
from schedule.db import is_sqlite

GRACEFUL_SHUTDOWN_S = 30  # in-flight requests finish; WeChat gives up on a callback after 5 s anyway


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    proxy_headers: bool = False
    forwarded_allow_ips: str | None = None


def refusal(settings: Settings, options: ServeOptions) -> str | None:
    """Why these options cannot run on this configuration, or None."""
    if options.workers < 1:
        return "--workers must be at least 1"
    if options.workers > 1 and is_sqlite(settings.DATABASE_URL):
        return (f"--workers {options.workers} needs MariaDB/MySQL: SQLite allows one writing process. "
                "Set DATABASE_URL=mysql+aiomysql://user:pass@host/db, or serve with --workers 1")
    return None


def app_from_env() -> FastAPI:
    """Factory for worker processes: settings from the environment, logging as configured."""
    from bot.web.app import create_app

    settings = load_settings()
    configure_logging(settings.LOG_FORMAT)
    return create_app(settings)


def run(settings: Settings, options: ServeOptions) -> int:
    """Run uvicorn in the foreground until SIGINT/SIGTERM; returns the exit status."""
    import uvicorn

    common = {
        "host": options.host, "port": options.port, "log_config": None, "log_level": "info",
        "proxy_headers": options.proxy_headers, "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_S,
        "server_header": False,
    }
    if options.forwarded_allow_ips is not None:
        common["forwarded_allow_ips"] = options.forwarded_allow_ips
    if options.workers == 1:
        from bot.web.app import create_app

        uvicorn.run(create_app(settings), **common)  # type: ignore[arg-type]
        return 0
    os.environ["DATABASE_AUTO_MIGRATE"] = "0"  # the parent migrated; N children racing to migrate gains nothing
    uvicorn.run("bot.cli.serve:app_from_env", factory=True, workers=options.workers, **common)  # type: ignore[arg-type]
    return 0
