"""`schedbot holidays load FILE` and `schedbot holidays list` end to end (a real process, this checkout's code,
a fresh database on both backends, migrated by the command): a good JSON or TOML file is stored for every
process, a bad one is refused with one clear line and exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from schedule import holiday_store, holidays
from schedule.db import create_engine, session_factory

ROOT = Path(__file__).resolve().parents[2]
YEAR_2027 = {"year": 2027, "source": "测试用安排",
             "holidays": ["2027-01-01..2027-01-03", "2027-02-05..2027-02-12", "2027-04-03..2027-04-05",
                          "2027-05-01..2027-05-05", "2027-06-09", "2027-09-15", "2027-10-01..2027-10-07"],
             "workdays": ["2027-02-20", "2027-04-25", "2027-09-26", "2027-10-09"]}
TOML_2028 = """
[[years]]
year = 2028
holidays = ["2028-01-01", "2028-01-25..2028-01-31", "2028-04-04", "2028-05-01..2028-05-03", "2028-05-28",
            "2028-10-01..2028-10-07"]
workdays = ["2028-01-23", "2028-10-08"]
"""


def schedbot(args: list[str], cwd: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    """The command line of this checkout (not whatever `schedbot` is installed)."""
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", "import sys; from bot.cli.main import main; sys.exit(main())", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(autouse=True)
def nothing_loaded() -> object:
    holidays.install([])
    yield
    holidays.install([])


async def test_load_stores_the_official_schedule_for_every_process(tmp_path: Path, database_url: str) -> None:
    (tmp_path / "2027.json").write_text(json.dumps(YEAR_2027, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "2028.toml").write_text(TOML_2028, encoding="utf-8")
    loaded = schedbot(["holidays", "load", "2027.json"], tmp_path, database_url)
    assert loaded.returncode == 0, loaded.stderr
    assert "2027: 28 days off, 4 调休 working days loaded" in loaded.stdout
    assert schedbot(["holidays", "load", "2028.toml"], tmp_path, database_url).returncode == 0
    listed = schedbot(["holidays", "list"], tmp_path, database_url)
    assert listed.returncode == 0 and "2027: loaded" in listed.stdout and "2028: loaded" in listed.stdout
    engine = create_engine(database_url)
    try:
        assert await holiday_store.refresh(session_factory(engine))  # what a web or worker process does
    finally:
        await engine.dispose()
    assert holidays.is_cn_workday(date(2027, 2, 20)) and not holidays.is_cn_workday(date(2027, 2, 10))
    assert holidays.is_cn_workday(date(2028, 1, 23)) and not holidays.is_cn_workday(date(2028, 1, 31))


@pytest.mark.parametrize(("name", "text", "said"), [
    ("bad.json", "{not json", "bad.json is not valid JSON"),
    ("bad.toml", "year = ", "bad.toml is not valid TOML"),
    ("wrong.json", json.dumps({**YEAR_2027, "workdays": ["2027-02-22"]}), "2027-02-22 is a weekday"),
    ("missing.json", None, "cannot read missing.json"),
])
def test_a_bad_file_is_one_clear_line_and_nothing_is_stored(tmp_path: Path, database_url: str, name: str,
                                                            text: str | None, said: str) -> None:
    if text is not None:
        (tmp_path / name).write_text(text, encoding="utf-8")
    refused = schedbot(["holidays", "load", name], tmp_path, database_url)
    assert refused.returncode == 2 and said in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    listed = schedbot(["holidays", "list"], tmp_path, database_url)
    assert "loaded" not in listed.stdout
