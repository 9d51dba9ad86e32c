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


def test_the_bot_package_keeps_its_top_level_small() -> None:
    """What the bot does lives in its sub-packages; at its top only the wiring and a few process-wide pieces
    (settings, logging, the heap) stay."""
    modules = sorted(path.name for path in (ROOT / "bot").glob("*.py") if path.name != "__init__.py")
    assert len(modules) <= 6, modules
