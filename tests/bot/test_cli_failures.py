"""Clear failures: a database problem ends every DB command with one line naming DATABASE_URL (password
masked) and what to do, exit status 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.test_cli import run
from tests.conftest import MARIADB_SERVER_URL

UNREACHABLE = "mysql+aiomysql://sbuser:hunter2secret@127.0.0.1:1/schedbot"


def one_clear_line(result_stderr: str) -> str:
    lines = [line for line in result_stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result_stderr
    assert "Traceback" not in result_stderr and "hunter2secret" not in result_stderr
    return lines[0]


@pytest.mark.parametrize("command", [["migrate"], ["worker"], ["serve", "--port", "1"], ["user", "token", "bob"],
                                     ["doctor"]])
def test_unreachable_database_is_one_line_naming_the_masked_url(tmp_path: Path, command: list[str]) -> None:
    result = run(command, tmp_path, DATABASE_URL=UNREACHABLE)
    if command == ["doctor"]:  # doctor reports it among its checks instead
        assert result.returncode == 1
        assert "✘ database: DATABASE_URL=mysql+aiomysql://sbuser:***@127.0.0.1:1/schedbot: cannot connect" \
            in result.stdout
        return
    assert result.returncode == 2
    line = one_clear_line(result.stderr)
    assert line.startswith("schedbot: DATABASE_URL=mysql+aiomysql://sbuser:***@127.0.0.1:1/schedbot: cannot connect")
    assert "database server running" in line


def test_missing_sqlite_directory_says_so(tmp_path: Path) -> None:
    result = run(["migrate"], tmp_path, DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/no/such/dir/x.db")
    assert result.returncode == 2
    line = one_clear_line(result.stderr)
    assert "cannot open the SQLite file: the directory" in line and "no/such/dir does not exist" in line


@pytest.mark.mariadb
@pytest.mark.parametrize("database_url", ["mariadb"], indirect=True)
def test_wrong_password_and_unknown_database_name_the_fix(tmp_path: Path, database_url: str) -> None:
    host = MARIADB_SERVER_URL.split("@", 1)[1]
    wrong = run(["migrate"], tmp_path, DATABASE_URL=f"mysql+aiomysql://root:hunter2secret@{host}/x")
    assert wrong.returncode == 2
    line = one_clear_line(wrong.stderr)
    assert f"DATABASE_URL=mysql+aiomysql://root:***@{host}/x" in line and "check the user name and password" in line
    missing = run(["migrate"], tmp_path, DATABASE_URL=f"{MARIADB_SERVER_URL}/schedbot_no_such_db")
    assert missing.returncode == 2 and "CREATE DATABASE" in one_clear_line(missing.stderr)


def test_unmigrated_schema_asks_for_migrate_then_works(tmp_path: Path, database_url: str) -> None:
    env = {"DATABASE_URL": database_url, "DATABASE_AUTO_MIGRATE": "0"}
    refused = run(["user", "token", "bob"], tmp_path, **env)
    assert refused.returncode == 2
    line = one_clear_line(refused.stderr)
    assert "the schema is empty" in line and "run `schedbot migrate`" in line
    migrated = run(["migrate"], tmp_path, **env)
    assert migrated.returncode == 0, migrated.stderr
    issued = run(["user", "token", "bob"], tmp_path, **env)
    assert issued.returncode == 0 and issued.stdout.strip().splitlines()[-1].startswith("sb_")


def test_a_database_from_a_newer_schedbot_asks_for_an_upgrade(tmp_path: Path) -> None:
    import sqlite3

    assert run(["migrate"], tmp_path).returncode == 0
    with sqlite3.connect(tmp_path / "schedbot.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '9999'")
    result = run(["worker"], tmp_path)
    assert result.returncode == 2
    line = one_clear_line(result.stderr)
    assert "revision 9999, unknown to this schedbot" in line and "upgrade schedbot" in line
