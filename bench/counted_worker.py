"""`schedbot worker` with its statements counted: what the delivery bench runs under BENCH_COUNT=1.

    python bench/counted_worker.py   (environment as for `schedbot worker`; BENCH_COUNTS_FILE names the output)

At exit it writes JSON: statements and commits in all, and per statement shape (its first words) how many ran
and the rows they returned or touched, so two versions of the worker can be compared statement by statement
(deterministic, unlike CPU time on a shared machine).
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import event  # noqa: E402
from sqlalchemy.engine import Engine  # noqa: E402

from bench.statements import StatementCounter  # noqa: E402


def _shape(sql: str) -> str:
    return " ".join(sql.split())[:70]


def main() -> int:
    counter = StatementCounter()
    counter.install()
    shapes: Counter[str] = Counter()
    rows: Counter[str] = Counter()

    def executed(_conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        shapes[_shape(statement)] += 1
        rows[_shape(statement)] += max(0, int(getattr(cursor, "rowcount", 0) or 0))

    event.listen(Engine, "after_cursor_execute", executed)

    def write() -> None:
        out = {"statements": counter.statements, "commits": counter.commits,
               "shapes": {k: [n, rows[k]] for k, n in shapes.most_common()}}
        Path(os.environ.get("BENCH_COUNTS_FILE", "worker_counts.json")).write_text(json.dumps(out, indent=1))

    atexit.register(write)
    try:
        from bot.cli.main import main as schedbot
    except ImportError:  # a version from before the commands moved into bot/cli/
        from bot.cli import main as schedbot  # type: ignore[attr-defined,no-redef]

    return int(schedbot(["worker"]) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
