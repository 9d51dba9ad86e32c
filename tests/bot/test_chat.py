"""`schedbot chat` driven through stdin: the transcript reads naturally and the rows are stored."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

SCHEDBOT = str(Path(sys.executable).parent / "schedbot")
SCRIPT = """我明天要去开会，帮我记录增加一个提醒
下午三点，提前半小时
明天上午十点半提醒我给妈妈打电话
明天9点提醒我交房租，下午3点提醒我取快递
看看明天行程
/wait 1d
10分钟后再提醒我
交房租那个已经完成了
明天会下雨吗
"""


def _chat(tmp_path: Path, script: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WECHAT_", "AGENT_", "DATABASE_"))}
    env["DATABASE_URL"] = f"sqlite+aiosqlite:///{tmp_path}/chat.db"
    return subprocess.run([SCHEDBOT, "chat", "--user", "alice", *extra], cwd=tmp_path, input=script, env=env,
                          capture_output=True, text=True, timeout=120)


def test_chat_transcript_and_rows(tmp_path: Path) -> None:
    result = _chat(tmp_path, SCRIPT, "--now", "2026-06-18T10:00:00+08:00")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Traceback" not in out + result.stderr
    assert "你：我明天要去开会，帮我记录增加一个提醒\n助手：可以。我先记下“明天开会”。" in out
    assert "助手：已记录：6月19日（周五）15:00 开会。我会提前 30 分钟，也就是 14:30 提醒你。" in out
    assert "助手：1. 已记录：6月19日（周五）09:00 交房租" in out and "2. 已记录：6月19日（周五）15:00 取快递" in out
    assert "6月19日（周五）的安排（4 项）" in out
    # a day later the reminders that came due wait in the in-app queue and are shown first
    assert "你：10分钟后再提醒我\n助手：你有 1 条未送达的提醒：\n· ⏰ 提醒：6月19日（周五）09:00 交房租。\n" in out
    assert "好的，6月19日（周五）10:10 再提醒你：交房租。" in out
    assert "我能帮你记待办、日程和提醒" in out  # no LLM configured: the built-in responder says what the bot can do

    db = sqlite3.connect(tmp_path / "chat.db")
    items = dict(db.execute("SELECT title, status FROM schedule_items").fetchall())
    assert items == {"开会": "active", "给妈妈打电话": "active", "交房租": "completed", "取快递": "active"}
    reminders = db.execute("SELECT remind_at, status FROM schedule_reminders ORDER BY remind_at").fetchall()
    statuses = [status for _at, status in reminders]
    assert statuses.count("sent") == 1 and statuses.count("cancelled") == 1  # shown in-app; 交房租 completed


def test_chat_refuses_a_naive_now(tmp_path: Path) -> None:
    result = _chat(tmp_path, "你好\n", "--now", "2026-06-18T10:00:00")
    assert result.returncode == 2
    assert "UTC offset" in result.stderr and "Traceback" not in result.stderr


def test_chat_on_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WECHAT_", "AGENT_", "DATABASE_"))}
    env["DATABASE_URL"] = "mysql+aiomysql://nobody:secret@127.0.0.1:9/none"
    result = subprocess.run([SCHEDBOT, "chat", "--user", "alice"], cwd=tmp_path, input="你好\n", env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "DATABASE_URL" in result.stderr and "secret" not in result.stderr and "Traceback" not in result.stderr


def test_chat_gives_the_page_and_share_links(tmp_path: Path) -> None:
    result = _chat(tmp_path, "明天上午九点提醒我带材料\n生成行程页\n分享行程页\n看看这周\n", "--now",
                   "2026-06-18T10:00:00+08:00")
    assert result.returncode == 0, result.stderr
    assert "查看行程页：http://127.0.0.1:8000/p/" in result.stdout
    assert "公开分享链接（只读）：http://127.0.0.1:8000/p/" in result.stdout
    assert "6月15日（周一）到6月21日（周日）的安排（1 项）" in result.stdout


def test_wait_takes_combined_units_and_never_reaches_the_bot(tmp_path: Path) -> None:
    result = _chat(tmp_path, "/wait 8h5m\n/wait soon\n", "--now", "2026-06-18T10:00:00+08:00")
    assert result.returncode == 0, result.stderr
    assert "（时间前进到 2026-06-18T18:05+08:00）" in result.stdout
    assert "（用法：/wait 90m、/wait 2h、/wait 1d 或 /wait 8h5m）" in result.stdout
    assert "助手：" not in result.stdout
    unpinned = _chat(tmp_path, "/wait 1h\n")
    assert "（/wait 只在用 --now 固定时钟时可用）" in unpinned.stdout and "助手：" not in unpinned.stdout
