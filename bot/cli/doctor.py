"""`schedbot doctor`: one line per check (✔ pass, ✘ fail, – skipped) and a non-zero exit on any failure.

Checks configuration, the database (reachable, credentials, revision, a FOR UPDATE SKIP LOCKED that
really skips so several workers can share it), configuration incidents that
pause deliveries now (IP not whitelisted, bad template …), WeChat credentials (a token;
the IP to whitelist on 40164), the agent endpoint (one tiny completion), PUBLIC_BASE_URL from this
host, and the clock against the WeChat API's Date header (signatures expire with skew).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

import httpx

from bot.cli.preflight import DatabaseProblem, check_claiming, check_database, masked
from bot.settings import Settings
from bot.wechat import incident
from bot.wechat.admin import account_client, describe
from bot.wechat.errors import WeChatError
from schedule.clock import Clock, SystemClock, now_ms

PASS, FAIL, SKIP = "✔", "✘", "–"
MAX_SKEW_S = 30


@dataclass(frozen=True)
class Check:
    mark: str
    name: str
    detail: str

    def line(self) -> str:
        return f"{self.mark} {self.name}: {self.detail}"


async def run(settings: Settings, out: TextIO, *, clock: Clock | None = None) -> int:
    clock = clock or SystemClock()
    checks = [Check(PASS, "configuration", f"DATABASE_URL={masked(settings.DATABASE_URL)}, "
                                           f"H5_DEFAULT_TIMEZONE={settings.H5_DEFAULT_TIMEZONE}, {_secret(settings)}")]
    for check in (*await _database(settings, clock), *await _wechat(settings, clock), await _agent(settings),
                  await _public_url(settings)):
        checks.append(check)
    for check in checks:
        out.write(check.line() + "\n")
    failed = [c for c in checks if c.mark == FAIL]
    out.write(f"{len(failed)} problem(s)\n" if failed else "all checks passed\n")
    return 1 if failed else 0


def _secret(settings: Settings) -> str:
    """How links are signed (a SECRET_KEY shorter than 32 bytes never gets this far: start-up refuses it)."""
    if settings.SECRET_KEY:
        return f"SECRET_KEY set ({len(settings.SECRET_KEY.encode('utf-8'))} bytes)"
    return "SECRET_KEY unset (one is generated and kept in the database, table app_secrets)"


async def _database(settings: Settings, clock: Clock) -> list[Check]:
    from schedule.db import create_engine, is_sqlite, session_factory

    engine = create_engine(settings.DATABASE_URL)
    try:
        revision = await check_database(engine, settings.DATABASE_URL, migrate=False)
    except DatabaseProblem as exc:
        await engine.dispose()
        return [Check(FAIL, "database", str(exc))]
    try:
        await check_claiming(engine, settings.DATABASE_URL)
        claiming = Check(PASS, "claiming", "SQLite: one worker process, claims serialised by BEGIN IMMEDIATE"
                         if is_sqlite(settings.DATABASE_URL)
                         else "FOR UPDATE SKIP LOCKED skips locked rows: several workers may share this database")
    except DatabaseProblem as exc:
        claiming = Check(FAIL, "claiming", str(exc))
    try:
        standing = await incident.standing(session_factory(engine), now_ms(clock))
    except Exception as exc:  # an older schema without the pauses table: the revision check says so
        standing = [f"pauses unreadable ({type(exc).__name__})"]
    finally:
        await engine.dispose()
    return [Check(PASS, "database", f"{masked(settings.DATABASE_URL)} reachable, schema at revision {revision}"),
            claiming,
            Check(FAIL, "deliveries", "; ".join(standing)) if standing
            else Check(PASS, "deliveries", "no configuration incident pauses the WeChat API")]


async def _wechat(settings: Settings, clock: Clock) -> list[Check]:
    if not settings.H5_WECHAT_MP_ENABLED:
        return [Check(SKIP, "wechat", "H5_WECHAT_MP_ENABLED=0")]
    missing = settings.missing_wechat_variables
    if missing:
        return [Check(SKIP, "wechat", f"not configured (set {', '.join(missing)}); /wechat answers 503")]
    mode = "safe mode (AES)" if settings.WECHAT_ENCODING_AES_KEY else "plaintext mode"
    api = account_client(settings)  # the bot's own WeChat client, without the database
    try:
        await api.access_token()
    except WeChatError as exc:
        return [Check(FAIL, "wechat", describe(exc, api_base=settings.WECHAT_API_BASE)),
                await clock_check(settings, clock)]
    finally:
        await api.aclose()
    template = (f", template fallback {settings.WECHAT_TEMPLATE_ID_REMINDER} (check: schedbot wechat template)"
                if settings.WECHAT_TEMPLATE_ID_REMINDER else ", no template fallback")
    return [Check(PASS, "wechat", f"access token for {settings.WECHAT_APP_ID} issued; {mode}{template}"),
            await clock_check(settings, clock)]


async def clock_check(settings: Settings, clock: Clock) -> Check:
    """Compare our clock with the Date header of the WeChat API (its own clock), read by the bot's own client."""
    api = account_client(settings, timeout=5)
    try:
        date = await api.server_time()
    except WeChatError as exc:
        return Check(SKIP, "clock", f"could not read the WeChat API's Date header ({type(exc).__name__})")
    finally:
        await api.aclose()
    if date is None:
        return Check(SKIP, "clock", "the WeChat API's answer carried no Date header")
    skew = (clock.now() - date).total_seconds()
    detail = f"{skew:+.0f} s from {settings.WECHAT_API_BASE}"
    if abs(skew) > MAX_SKEW_S:
        return Check(FAIL, "clock", f"{detail} — run NTP (timedatectl set-ntp true); WeChat signatures "
                                    f"older than {settings.WECHAT_TIMESTAMP_TOLERANCE_S} s are refused")
    return Check(PASS, "clock", detail)


async def _agent(settings: Settings) -> Check:
    if not settings.AGENT_BASE_URL:
        return Check(SKIP, "agent", "AGENT_BASE_URL not set; the built-in responder answers what rules do not")
    url = settings.AGENT_BASE_URL.rstrip("/") + "/chat/completions"
    body = {"model": settings.AGENT_MODEL, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}
    try:
        async with httpx.AsyncClient(timeout=15) as http:
            response = await http.post(url, json=body, headers={"Authorization": f"Bearer {settings.AGENT_API_KEY}"})
    except httpx.HTTPError as exc:
        return Check(FAIL, "agent", f"{url}: {type(exc).__name__} — check AGENT_BASE_URL")
    if response.status_code in (401, 403):
        return Check(FAIL, "agent", f"{url}: HTTP {response.status_code} — check AGENT_API_KEY")
    if response.status_code >= 400:
        return Check(FAIL, "agent", f"{url}: HTTP {response.status_code} — check AGENT_MODEL={settings.AGENT_MODEL!r}")
    try:
        ok = bool(response.json()["choices"])
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        return Check(FAIL, "agent", f"{url}: the answer is not a chat completion — is this an OpenAI-compatible API?")
    return Check(PASS, "agent", f"{settings.AGENT_MODEL} at {settings.AGENT_BASE_URL} answered")


async def _public_url(settings: Settings) -> Check:
    url = settings.PUBLIC_BASE_URL.rstrip("/") + "/healthz"
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            response = await http.get(url)
    except httpx.HTTPError as exc:
        return Check(FAIL, "public URL", f"{url}: {type(exc).__name__} — is schedbot serve running behind "
                                         "PUBLIC_BASE_URL (nginx, DNS, firewall)?")
    if response.status_code != 200:
        return Check(FAIL, "public URL", f"{url}: HTTP {response.status_code}")
    note = "" if url.startswith("https://") else " (http: WeChat pages and links want https)"
    return Check(PASS, "public URL", f"{url} answered{note}")
