"""Configuration from the environment and `.env` (README.md#configuration), validated at start-up."""

from __future__ import annotations

import ipaddress
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from schedule.db import DEFAULT_DATABASE_URL

MIN_SECRET_BYTES = 32
# A SECRET_KEY with fewer distinct characters, or one that repeats a shorter run ("abc" * 11, "schedbot" * 4),
# is guessable whatever its length; 32 random hex characters (openssl rand -hex 16) hold fewer than 8 distinct
# ones less than once in a million.
MIN_SECRET_DISTINCT = 8
MAKE_SECRET = "python -c 'import secrets;print(secrets.token_urlsafe(48))'"


class ConfigError(Exception):
    """A bad configuration value; the message names the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore",
                                      case_sensitive=True)

    DATABASE_URL: str = DEFAULT_DATABASE_URL
    DATABASE_AUTO_MIGRATE: bool = True
    H5_SCHEDULE_ENABLED: bool = True
    H5_WECHAT_MP_ENABLED: bool = True
    H5_REMINDER_WORKER_ENABLED: bool = True
    H5_REMINDER_SCAN_INTERVAL_MS: int = Field(1000, ge=50, le=600_000)
    H5_REMINDER_DEFAULT_MEETING_OFFSET_MINUTES: int = Field(60, ge=0, le=10_080)
    H5_REMINDER_MAX_ATTEMPTS: int = Field(5, ge=1, le=100)
    H5_REMINDER_CATCHUP_HOURS: int = Field(12, ge=0, le=24 * 30)
    H5_DEFAULT_TIMEZONE: str = "Asia/Shanghai"
    H5_DIALOG_TTL_MINUTES: int = Field(30, ge=1, le=24 * 60)
    # Active items (open tasks and events, a series counting once) a user may have: a create or a reopen
    # (撤销) past it is refused with a message saying so.
    H5_MAX_ACTIVE_ITEMS: int = Field(2000, ge=1, le=100_000)
    WECHAT_APP_ID: str = ""
    WECHAT_APP_SECRET: str = ""
    WECHAT_TOKEN: str = ""
    WECHAT_ENCODING_AES_KEY: str = ""
    WECHAT_PREVIOUS_ENCODING_AES_KEY: str = ""
    WECHAT_TEMPLATE_ID_REMINDER: str = ""
    WECHAT_SUBSCRIBE_TEMPLATE_ID: str = ""  # a subscription-message (订阅通知) template for pushes
    WECHAT_SUBSCRIBE_LONG_TERM: bool = False  # the template is long-term (a grant is not spent by a send)
    WECHAT_TIMESTAMP_TOLERANCE_S: int = Field(300, ge=0)
    WECHAT_ACCEPT_PLAINTEXT: bool = False  # 1: plaintext posts still accepted while an AES key is set (mode switch)
    WECHAT_API_BASE: str = "https://api.weixin.qq.com"
    WECHAT_OAUTH_BASE: str = "https://open.weixin.qq.com"  # where WeChat's browser signs a page visitor in (tests)
    # seconds WeChat gets to answer one API call; a send with no answer by then may still have reached the user
    WECHAT_API_TIMEOUT_S: float = Field(5.0, gt=0, le=60)
    AGENT_BASE_URL: str = ""
    AGENT_API_KEY: str = ""
    AGENT_MODEL: str = ""
    AGENT_TIMEOUT_S: float = Field(20.0, gt=0, le=300)  # per request; the SDK retries within AGENT_MAX_RETRIES
    AGENT_MAX_RETRIES: int = Field(2, ge=0, le=10)
    AGENT_HISTORY_MESSAGES: int = Field(10, ge=0, le=100)
    AGENT_MAX_TOOL_ROUNDS: int = Field(4, ge=1, le=10)
    # requests the bot runs later (每天早上8点告诉我天气): how many a user may keep active, and how many runs go
    # to the LLM at once in one process (one per user at a time, users taken in turn). Keep the latter below
    # what the LLM server serves in parallel: the rest of its capacity is left to chat answers.
    SCHEDULED_REQUESTS_PER_USER: int = Field(20, ge=1, le=1000)
    SCHEDULED_REQUEST_CONCURRENCY: int = Field(2, ge=1, le=64)
    # pushes: a user's reminders per day (Beijing day, as WeChat counts) beyond which they wait in the in-app
    # queue, and the shortest gap between two pushes of one series (a closer occurrence waits there too)
    PUSH_DAILY_BUDGET_PER_USER: int = Field(100, ge=1, le=100_000)
    PUSH_SERIES_MIN_INTERVAL_MINUTES: int = Field(30, ge=0, le=1440)
    # template messages the whole account sends per day: keep it below the quota WeChat grants the account
    # (100,000 a day for most service accounts); digests stop at TEMPLATE_DIGEST_SHARE_PERCENT of it so that
    # reminders keep the rest. Past the budget, pushes go to the in-app queue.
    TEMPLATE_DAILY_BUDGET: int = Field(90_000, ge=0, le=10_000_000)
    TEMPLATE_DIGEST_SHARE_PERCENT: int = Field(70, ge=0, le=100)
    PUBLIC_BASE_URL: str = "http://127.0.0.1:8000"
    SECRET_KEY: str = ""
    LOG_FORMAT: Literal["text", "json"] = "text"
    # who may read /metrics on `schedbot serve`: addresses or networks, comma-separated (behind the local
    # nginx, the client address nginx forwards); the monitoring network only, never the public
    METRICS_ALLOW: str = "127.0.0.1/32,::1/128"
    # where the webhook keeps messages that arrive while the database is down (docs/delivery.md#spool), until replayed
    SPOOL_DIR: str = "./schedbot-spool"

    @field_validator("METRICS_ALLOW")
    @classmethod
    def _networks(cls, value: str) -> str:
        for part in value.split(","):
            if part.strip():
                try:
                    ipaddress.ip_network(part.strip(), strict=False)
                except ValueError as exc:
                    raise ValueError(f"{part.strip()!r} is not an IP address or network (e.g. 10.0.0.0/8)") from exc
        return value

    @property
    def metrics_networks(self) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
        return [ipaddress.ip_network(p.strip(), strict=False) for p in self.METRICS_ALLOW.split(",") if p.strip()]

    @field_validator("H5_DEFAULT_TIMEZONE")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown IANA timezone {value!r}") from exc
        return value

    @field_validator("SECRET_KEY")
    @classmethod
    def _strong_secret(cls, value: str) -> str:
        # It signs every page and feed link: a short one is found by a plain loop over one's own link.
        if value and len(value.encode("utf-8")) < MIN_SECRET_BYTES:
            raise ValueError(f"must be at least {MIN_SECRET_BYTES} bytes (got {len(value.encode('utf-8'))}); make "
                             f"one with {MAKE_SECRET}, or leave it unset to have one generated and kept in the "
                             "database")
        weakness = secret_weakness(value) if value else None
        if weakness:
            raise ValueError(f"is guessable ({weakness}); make a random one with {MAKE_SECRET}, or leave it unset "
                             "to have one generated and kept in the database")
        return value

    @field_validator("WECHAT_ENCODING_AES_KEY", "WECHAT_PREVIOUS_ENCODING_AES_KEY")
    @classmethod
    def _aes_key_shape(cls, value: str) -> str:
        if value and len(value) != 43:
            raise ValueError("EncodingAESKey must be 43 characters (base64 without the trailing '=')")
        return value

    @field_validator("AGENT_BASE_URL")
    @classmethod
    def _agent_url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("use the service's OpenAI-compatible base URL, e.g. https://api.deepseek.com/v1")
        return value

    @field_validator("DATABASE_URL")
    @classmethod
    def _supported_url(cls, value: str) -> str:
        if not value.startswith(("sqlite+aiosqlite://", "mysql+aiomysql://", "mariadb+aiomysql://")):
            raise ValueError("use sqlite+aiosqlite:///path.db or mysql+aiomysql://user:pass@host/db")
        return value

    @property
    def wechat_configured(self) -> bool:
        return bool(self.WECHAT_TOKEN and self.WECHAT_APP_ID)

    @property
    def missing_wechat_variables(self) -> list[str]:
        names = ("WECHAT_APP_ID", "WECHAT_APP_SECRET", "WECHAT_TOKEN")
        return [name for name in names if not getattr(self, name)]


def secret_weakness(value: str) -> str | None:
    """Why a long enough secret is still guessable, or None: too few distinct characters, or a repeated run."""
    distinct = len(set(value))
    if distinct < MIN_SECRET_DISTINCT:
        return f"only {distinct} distinct characters"
    period = next((p for p in range(1, len(value) // 2 + 1) if value[p:] == value[:-p]), None)
    if period is not None:
        return f"repeats a run of {period} characters"
    return None


def load_settings(**overrides: object) -> Settings:
    """Read settings; a bad value raises ConfigError naming the variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = ".".join(str(part) for part in error["loc"]) or "configuration"
            problems.append(f"{name}: {error['msg']}")
        raise ConfigError("bad configuration — " + "; ".join(problems)) from None
