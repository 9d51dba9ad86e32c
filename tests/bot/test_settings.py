"""Configuration: defaults work on a fresh machine; a bad value names its variable."""

from __future__ import annotations

import pytest

from bot.settings import ConfigError, Settings, load_settings


def test_defaults_give_a_working_embedded_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    settings = load_settings()
    assert settings.DATABASE_URL == "sqlite+aiosqlite:///./schedbot.db"
    assert settings.H5_SCHEDULE_ENABLED and settings.H5_WECHAT_MP_ENABLED and settings.H5_REMINDER_WORKER_ENABLED
    assert settings.H5_REMINDER_DEFAULT_MEETING_OFFSET_MINUTES == 60
    assert settings.WECHAT_TIMESTAMP_TOLERANCE_S == 300
    assert not settings.wechat_configured
    assert settings.missing_wechat_variables == ["WECHAT_APP_ID", "WECHAT_APP_SECRET", "WECHAT_TOKEN"]


@pytest.mark.parametrize(("name", "value"), [
    ("H5_REMINDER_MAX_ATTEMPTS", "lots"),
    ("H5_REMINDER_MAX_ATTEMPTS", "0"),
    ("H5_DEFAULT_TIMEZONE", "Mars/Base"),
    ("WECHAT_ENCODING_AES_KEY", "short"),
    ("DATABASE_URL", "postgresql://x/y"),
    ("H5_REMINDER_WORKER_ENABLED", "perhaps"),
    ("METRICS_ALLOW", "127.0.0.1,the-monitoring-box"),
])
def test_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=name):
        load_settings()


def test_env_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]
    (tmp_path / ".env").write_text("H5_REMINDER_CATCHUP_HOURS=3\nH5_WECHAT_MP_ENABLED=0\n")  # type: ignore[operator]
    settings = Settings()
    assert settings.H5_REMINDER_CATCHUP_HOURS == 3 and settings.H5_WECHAT_MP_ENABLED is False
