"""Itinerary page and calendar feed benchmark: render time p50/p99 and HTML size.

A 7-day page with 100 entries (view model + Jinja, private page with its forms) and the ICS feed
of 1,000 items (a tenth recurring, most with a reminder). Targets: page ≤ 10 ms, feed ≤ 50 ms,
HTML ≤ 60 KB. The feed caches each item's serialised component per version, so a poll of an
unchanged calendar is the warm figure; the cold one (first request after a start) is printed too.

Run: .venv/bin/python bench/page_bench.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date, datetime
from zoneinfo import ZoneInfo

from render.html import PageActions, PageRenderer
from render.ics import _component_ical, calendar_feed
from render.itinerary import build_itinerary
from schedule.clock import to_ms
from schedule.domain import Item, Recurrence, Reminder

TZ = "Asia/Shanghai"
NOW = to_ms(datetime(2026, 12, 1, 10, 0, tzinfo=ZoneInfo(TZ)))
TITLES = ["项目评审会", "给妈妈打电话", "交季度报告", "带材料", "体检", "和供应商确认合同细节", "取快递", "健身"]


def items(n: int, *, days: int) -> list[Item]:
    made = []
    for i in range(n):
        start = NOW + (i * days * 86_400_000) // n - 3_600_000
        reminders = (Reminder(id=i, item_id=i, remind_at=start - 3_600_000, offset_minutes=60, channel="wechat",
                              status="sent" if start < NOW else "pending"),) if i % 3 else ()
        kind = "event" if i % 2 else "task"
        made.append(Item(
            id=i + 1, user_id=1, kind=kind, title=f"{TITLES[i % len(TITLES)]} #{i}", status="active", timezone=TZ,
            start_at=start if kind == "event" else None, end_at=start + 3_600_000 if kind == "event" else None,
            due_at=start if kind == "task" else None, reminders=reminders, created_at=NOW, updated_at=NOW,
            recurrence=Recurrence(rrule="FREQ=WEEKLY;BYDAY=MO", skipped=("2026-12-14",)) if i % 10 == 0 else None))
    return made


def timed(fn: object, rounds: int) -> tuple[float, float]:
    samples = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    renderer = PageRenderer()
    week = items(100, days=7)
    feed = items(1000, days=365)
    actions = PageActions(base="/p/" + "t" * 60, csrf="c" * 40, range_from="2026-12-01", range_to="2026-12-07",
                          prev_href="/p/t?from=2026-11-24&to=2026-11-30",
                          next_href="/p/t?from=2026-12-08&to=2026-12-14", feed_href="https://example.com/ics/t.ics")

    def page() -> str:
        view = build_itinerary(week, now_ms=NOW, tz=TZ, start_on=date(2026, 12, 1), end_on=date(2026, 12, 8))
        return renderer.itinerary(view, url="https://example.com/p/t", actions=actions)

    def ics() -> bytes:
        return calendar_feed(feed, uid_domain="example.com", tz=TZ)

    html = page()
    p50, p99 = timed(page, args.rounds)
    c50, c99 = timed(lambda: (_component_ical.cache_clear(), ics()), 5)
    ics()
    f50, f99 = timed(ics, max(20, args.rounds // 10))
    print(f"page  (7 days, 100 entries): p50 {p50:.2f} ms  p99 {p99:.2f} ms  (target ≤ 10 ms)")
    print(f"html size: {len(html.encode('utf-8')) / 1024:.1f} KB  (target ≤ 60 KB)")
    print(f"feed  (1,000 items): p50 {f50:.2f} ms  p99 {f99:.2f} ms  size {len(ics()) / 1024:.0f} KB  (target ≤ 50 ms)")
    print(f"feed, cold (every item serialised afresh): p50 {c50:.0f} ms  max {c99:.0f} ms")


if __name__ == "__main__":
    main()
