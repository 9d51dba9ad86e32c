"""Intent parser benchmark: latency p50/p99, throughput, import time, cold start and peak memory.

Run: .venv/bin/python bench/intent_bench.py [--n 10000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
DEV = Path("/work/shared/eval/dev_zh.jsonl")


def _texts() -> list[str]:
    texts: list[str] = []
    if DEV.exists():
        texts += [json.loads(line)["text"] for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    sys.path.insert(0, str(ROOT / "tests" / "intent"))
    from intent_corpus import CORPUS, NEGATIVE

    texts += [t for group in CORPUS.values() for t in group] + list(NEGATIVE)
    return texts


def _fresh(code: str) -> float:
    """Seconds that `code` takes in a fresh interpreter (measured inside it, start-up excluded)."""
    wrapped = f"import time\nt=time.perf_counter()\n{code}\nprint(time.perf_counter()-t)"
    out = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, cwd=ROOT, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    n = ap.parse_args().n
    texts = _texts()
    from intent import parse

    tz = ZoneInfo("Asia/Shanghai")
    now = datetime(2026, 6, 18, 10, 0, tzinfo=tz)
    for t in texts:  # warm up lazy imports and regex caches
        parse(t, now=now, tz=tz)
    runs: list[tuple[float, float, float, float]] = []  # p50, p99, max, seconds — per run
    for _ in range(3):  # three runs, medians reported: a shared machine adds scheduling noise
        lat: list[float] = []
        total_start = time.perf_counter()
        for i in range(n):
            text = texts[i % len(texts)]
            t0 = time.perf_counter()
            parse(text, now=now, tz=tz)
            lat.append(time.perf_counter() - t0)
        total = time.perf_counter() - total_start
        lat.sort()
        runs.append((lat[len(lat) // 2], lat[int(len(lat) * 0.99)], lat[-1], total))
    p50, p99, worst, total = (statistics.median(r[k] for r in runs) for k in range(4))
    long_text = "明天下午三点提醒我开会" * 1000
    t0 = time.perf_counter()
    parse(long_text, now=now, tz=tz)
    long_ms = (time.perf_counter() - t0) * 1000
    tracemalloc.start()
    for text in texts:
        parse(text, now=now, tz=tz)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    import_s = statistics.median(_fresh("import intent") for _ in range(3))
    cold_s = statistics.median(_fresh(
        "from datetime import datetime\nfrom zoneinfo import ZoneInfo\nimport intent\n"
        "tz=ZoneInfo('Asia/Shanghai')\nintent.parse('明天下午三点开会', now=datetime(2026,6,18,10,tzinfo=tz), tz=tz)"
    ) for _ in range(3))
    import resource

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = [
        ("utterances (distinct)", f"{len(texts)}"),
        ("parses", f"3 runs × {n}"),
        ("latency p50 (median of runs)", f"{p50 * 1000:.3f} ms"),
        ("latency p99 (median of runs)", f"{p99 * 1000:.3f} ms"),
        ("latency max (median of runs)", f"{worst * 1000:.3f} ms"),
        ("throughput", f"{n / total:,.0f} parses/s"),
        ("10,000-char input", f"{long_ms:.2f} ms"),
        ("import intent (fresh process)", f"{import_s * 1000:.0f} ms"),
        ("cold start: import + first parse", f"{cold_s * 1000:.0f} ms"),
        ("peak traced memory (one pass)", f"{peak / 1024:.0f} KiB"),
        ("max RSS (this process)", f"{rss_mb:.1f} MiB"),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"{'metric':<{width}} | value")
    print(f"{'-' * width}-|-{'-' * 20}")
    for k, v in rows:
        print(f"{k:<{width}} | {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
