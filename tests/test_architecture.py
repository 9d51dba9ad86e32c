"""Architecture kept honest: import contracts, and only schedule/clock.py reads the wall clock."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "intent", "schedule", "render")
CLOCK_READS = re.compile(r"datetime\.(now|utcnow|today)\(|\btime\.time\(|date\.today\(|time\.monotonic\(")
ALLOWED = {ROOT / "schedule" / "clock.py"}


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path(sys.executable).parent / name)


def test_import_contracts() -> None:
    lint = _tool("lint-imports")
    result = subprocess.run([lint, str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_only_the_clock_module_reads_the_wall_clock() -> None:
    offenders = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if path in ALLOWED:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if CLOCK_READS.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_ruff_clean() -> None:
    result = subprocess.run([_tool("ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_on_the_packages() -> None:
    result = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_bot_top_level_stays_small() -> None:
    """What speaks WeChat lives in bot/wechat/, the web surface in bot/web/, the commands in bot/cli/: the top level
    keeps only what every part shares (settings, logging, the wiring), so a newcomer finds each edge in one folder."""
    modules = sorted(p.name for p in (ROOT / "bot").glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= 6, modules
    for edge in ("wechat", "web", "cli"):
        assert (ROOT / "bot" / edge / "__init__.py").is_file()


def test_no_context_variable_carries_a_transaction() -> None:
    """A message's unit of work is a parameter (`Handler.turn(message, unit)`, `ScheduleService.within(unit)`),
    never ambient state: the only context variable left is the request id the log lines carry."""
    found = [str(path.relative_to(ROOT)) for package in PACKAGES for path in (ROOT / package).rglob("*.py")
             if "ContextVar(" in path.read_text(encoding="utf-8")]
    assert found == ["bot/logging_setup.py"], found
