"""Rule-check bench: how long refusing (or accepting) a nasty recurrence takes, worst case, with every cache
cold. Budget: 20 ms for any rule and start.

The sweep: BYWEEKNO, BYYEARDAY, BYSETPOS, nth weekdays, 31 Feb, 29 Feb on a weekday, INTERVAL gaps, at every
frequency from yearly to minutely, each started on several days of 2090–2099 (a window that crosses 2100, a
common year) and of today's decade; lunar and working-day rules too. Times are the checking thread's CPU time
(the machine is shared: wall time is printed beside it).

Run: /work/main/.venv/bin/python bench/rule_check_bench.py [--top 15]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import speed_line  # noqa: E402
from schedule import recurrence, rrule, scan  # noqa: E402
from schedule.domain import Lunar, Recurrence  # noqa: E402

TZ = "Asia/Shanghai"
BUDGET_MS = 20.0
FILTERS = ["BYWEEKNO=53", "BYWEEKNO=53;BYMONTH=1", "BYWEEKNO=53;BYMONTH=6", "BYWEEKNO=-53;BYDAY=MO",
           "BYWEEKNO=53;BYYEARDAY=366", "BYWEEKNO=1;BYMONTH=6", "BYWEEKNO=53;BYDAY=TH;BYSETPOS=2",
           "BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYSETPOS=1", "BYYEARDAY=366;BYDAY=MO",
           "BYYEARDAY=60;BYMONTH=3;BYMONTHDAY=1;BYDAY=MO", "BYMONTHDAY=31;BYMONTH=2", "BYDAY=MO;BYSETPOS=5;BYMONTH=2",
           "BYMONTHDAY=-29;BYMONTH=2;BYDAY=SU", "BYWEEKNO=53;BYMONTHDAY=31;BYMONTH=12;BYDAY=MO", "BYDAY=5MO;BYMONTH=2",
           "BYDAY=53MO", "BYMONTH=2;BYMONTHDAY=29;BYDAY=-1MO"]
TIMES = {"HOURLY": ";BYHOUR=9", "MINUTELY": ";BYHOUR=9;BYMINUTE=0"}


def cases() -> list[tuple[str, Recurrence]]:
    found = []
    for freq, flt, step in itertools.product(("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY"), FILTERS,
                                             (1, 2, 3, 7)):
        body = f"FREQ={freq};INTERVAL={step};{flt}{TIMES.get(freq, '')}"
        found.append((body, Recurrence(rrule=body)))
    found += [("lunar 闰十二月三十", Recurrence(lunar=Lunar(month=12, day=30, leap=True))),
              ("lunar 二月三十", Recurrence(lunar=Lunar(month=2, day=30, leap=False))),
              ("workdays on Sundays", Recurrence(rrule="FREQ=WEEKLY;BYDAY=SU", workdays="cn")),
              ("workdays 29 Feb Sat", Recurrence(rrule="FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=SA", workdays="cn")),
              ("workdays week 53 Sat/Sun", Recurrence(rrule="FREQ=YEARLY;BYWEEKNO=53;BYDAY=SA,SU", workdays="cn"))]
    return found


def starts() -> list[datetime]:
    zone = ZoneInfo(TZ)
    days = [datetime(year, month, day, 9, tzinfo=zone) for year in range(2090, 2100)
            for month, day in ((1, 1), (3, 1), (12, 31))]
    return [*days, datetime(2026, 12, 5, 9, tzinfo=zone), datetime(2027, 2, 28, 23, tzinfo=zone)]


def cold() -> None:
    for module in (rrule, scan, recurrence):
        for value in vars(module).values():
            if hasattr(value, "cache_clear"):
                value.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=15, help="the slowest rules to list")
    args = parser.parse_args()
    print(speed_line(), flush=True)
    rows, refused, checks = [], 0, 0
    for name, rule in cases():
        worst = (0.0, 0.0, "", "")
        for start in starts():
            cold()
            wall, cpu = time.perf_counter(), time.thread_time()
            reason = recurrence.refused_recurrence(rule, anchor_ms=int(start.timestamp() * 1000), tz=TZ)
            cpu_ms, wall_ms = (time.thread_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000
            checks += 1
            refused += reason is not None
            if cpu_ms > worst[0]:
                worst = (cpu_ms, wall_ms, start.date().isoformat(), "refused" if reason else "accepted")
        rows.append((*worst, name))
    rows.sort(reverse=True)
    print(f"{checks} checks of {len(rows)} rules ({refused} refused), caches cold; slowest {args.top} rules:")
    print(f"{'CPU ms':>7} {'wall ms':>8}  {'start':10}  {'answer':8}  rule")
    for cpu_ms, wall_ms, day, answer, name in rows[:args.top]:
        print(f"{cpu_ms:7.1f} {wall_ms:8.1f}  {day:10}  {answer:8}  {name}")
    worst_ms = rows[0][0]
    verdict = "ok" if worst_ms <= BUDGET_MS else "OVER BUDGET"
    print(f"worst {worst_ms:.1f} ms CPU (budget {BUDGET_MS:.0f} ms): {verdict}")
    sys.exit(0 if worst_ms <= BUDGET_MS else 1)


if __name__ == "__main__":
    main()
