"""How fast this machine runs plain Python right now, printed in every bench's header.

Bench figures (messages/s, CPU ms per message) move with the machine: one session's machine of the
same kind ran the same code 2–4× slower than another's, and even drifted within an hour. A fixed
workload that uses nothing of the project (dict, str and int work, like a request's glue code) gives
a yardstick to read the figures against: compare two bench runs only when this number is close.
"""

from __future__ import annotations

import time


def _workload() -> int:
    total = 0
    for i in range(200_000):
        row = {"id": i, "title": f"item {i}", "tags": ("a", "b")}
        total += len(row["title"]) + row["id"] % 7
    return total


def reference_ms(rounds: int = 5) -> float:
    """Best of `rounds` CPU times of the fixed workload, in ms (lower is faster)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        _workload()
        best = min(best, time.process_time() - start)
    return best * 1000


def speed_line() -> str:
    return (f"machine: reference Python workload {reference_ms():.0f} ms (best of 5, lower is faster); "
            "compare runs only at similar values")
