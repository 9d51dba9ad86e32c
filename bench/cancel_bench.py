"""CPU of one cancel by text among a user's 2,000 items (the item quota), through the conversation handler on
SQLite: the listing, the target matching and the write. Also the matching alone (`intent.target.rank`).

    .venv/bin/python bench/cancel_bench.py [--items 2000] [--cancels 31]

Each cancel names a different item by its title ("取消{title}") and must be answered 已取消. Matching takes
the user's titles as data, so the figure does not depend on how many other users' titles a process has seen.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import speed_line  # noqa: E402
from bot.agent.builtin import BuiltinResponder  # noqa: E402
from bot.conversation import ConversationHandler  # noqa: E402
from bot.heap import settle  # noqa: E402
from bot.wechat.messages import InboundMessage  # noqa: E402
from intent import target  # noqa: E402
from schedule.db import create_engine, session_factory  # noqa: E402
from schedule.domain import NewItem  # noqa: E402
from schedule.model import Base  # noqa: E402
from schedule.service import ScheduleService  # noqa: E402
from schedule.testing import FrozenClock  # noqa: E402

FIRST = ["客户", "材料", "报告", "合同", "房租", "快递", "体检", "周报", "车险", "护照"]
SECOND = ["整理", "寄出", "复印", "核对", "签字", "归档", "续费", "提交", "翻译", "装订",
          "扫描", "确认", "打印", "更新", "审核", "备份", "上传", "领取", "退回", "预约"]
THIRD = ["甲方", "乙方", "总部", "分部", "财务", "行政", "法务", "人事", "前台", "仓库"]


def titles(n: int) -> list[str]:
    """n distinct titles that the parser reads as a whole target (no time words, no numbers)."""
    return [f"{THIRD[i // 200 % 10]}{FIRST[i % 10]}{SECOND[i // 10 % 20]}" for i in range(n)]


async def run(n_items: int, n_cancels: int) -> None:
    clock = FrozenClock(datetime(2026, 6, 18, 2, 0, tzinfo=UTC))
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite+aiosqlite:///{tmp}/bench.db")
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        service = ScheduleService(session_factory(engine), clock)
        handler = ConversationHandler(service, clock, agent=BuiltinResponder())
        user = await service.get_or_create_user("o-bench")
        names = titles(n_items)
        for name in names:
            await service.create_item(user.id, NewItem(kind="task", title=name, timezone="Asia/Shanghai"))
        settle()  # as `serve` does at start: jieba loaded, the start-up heap out of the collector's sight
        cpu: list[float] = []
        for serial, name in enumerate(names[::max(1, n_items // n_cancels)][:n_cancels]):
            message = InboundMessage(kind="text", msg_type="text", openid="o-bench", to_user="schedbot",
                                     create_time=1_781_748_000 + serial, msg_id=f"bench-{serial}",
                                     content=f"取消{name}", user_id=user.id)
            start = time.process_time()
            answer = await handler(message)
            cpu.append(time.process_time() - start)
            if answer is None or not answer.startswith("已取消") or name not in answer:
                raise SystemExit(f"cancel of {name} answered {answer!r}")
        await engine.dispose()
    candidates = [target.Candidate(i, name) for i, name in enumerate(names)]
    ranked: list[float] = []
    for name in names[:: max(1, n_items // n_cancels)][:n_cancels]:
        start = time.process_time()
        found = target.rank(name, candidates)
        ranked.append(time.process_time() - start)
        assert [c.title for c in found] == [name], (name, found)
    first, cpu = cpu[0] * 1000, cpu[1:]  # the first cancel also warms up lazy imports and caches
    ms = sorted(x * 1000 for x in cpu)
    rk = sorted(x * 1000 for x in ranked)
    print(speed_line())
    print(f"cancel among {n_items} items, CPU ms: p50 {statistics.median(ms):.1f}  max {ms[-1]:.1f}  "
          f"(n={len(ms)}, all answered 已取消 for the item named); the process's first: {first:.1f}")
    print(f"matching alone (rank over {n_items} titles), CPU ms: p50 {statistics.median(rk):.1f}  max {rk[-1]:.1f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--cancels", type=int, default=31)
    args = ap.parse_args()
    asyncio.run(run(args.items, args.cancels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
