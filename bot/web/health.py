"""`GET /healthz`: ok, or degraded (503 while the database does not answer), and nothing more.

Public on purpose: load balancers and uptime checks read it. What is wrong with WeChat (a bad AppID or
secret, the server's IP missing from the whitelist, an incident any worker met) is for the operator:
the ERROR line in the log and `schedbot doctor`, never this answer.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.wechat import incident
from bot.wechat.client import WeChatClient
from schedule.clock import Clock, now_ms

log = logging.getLogger("schedbot")


def health_router(engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                  client: WeChatClient | None) -> APIRouter:
    router = APIRouter(tags=["ops"])

    @router.get("/healthz")
    async def healthz() -> JSONResponse:
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception:
            log.warning("health check: database unreachable")
            return JSONResponse({"status": "degraded", "database": "unreachable"}, status_code=503)
        degraded = client is not None and client.misconfigured is not None
        degraded = degraded or bool(await incident.standing(sessions, now_ms(clock)))
        return JSONResponse({"status": "degraded" if degraded else "ok", "database": "ok"})

    return router
