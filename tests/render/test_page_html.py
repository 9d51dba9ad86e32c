"""HTML rendering without a browser: escaping, empty state, Open Graph, read-only share, golden snapshots.

Golden files hold the page body (the inline CSS is left out so a style tweak does not churn them);
regenerate with SCHEDBOT_UPDATE_GOLDEN=1 after checking the change in a browser.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

import pytest
from page_samples import SH, at, event, reminder, task

from render.html import PageActions, PageRenderer
from render.itinerary import Notice, build_itinerary

GOLDEN = Path(__file__).parent / "golden"
ACTIONS = PageActions(base="/p/TOKEN", csrf="CSRF", range_from="2026-12-01", range_to="2026-12-07",
                      prev_href="/p/TOKEN?from=2026-11-24&to=2026-11-30",
                      next_href="/p/TOKEN?from=2026-12-08&to=2026-12-14", feed_href="https://x/ics/T.ics")
NOW = at(2026, 12, 1, 10, 0)


@pytest.fixture(scope="module")
def renderer() -> PageRenderer:
    return PageRenderer()


def week(items: list, **extra: object):  # type: ignore[no-untyped-def]
    return build_itinerary(items, now_ms=NOW, tz=SH, start_on=date(2026, 12, 1), end_on=date(2026, 12, 8),
                           **extra)  # type: ignore[arg-type]


def sample_week(**extra: object):  # type: ignore[no-untyped-def]
    return week([
        event(1, "项目会议", at(2026, 12, 1, 15, 0), at(2026, 12, 1, 16, 0),
              reminders=(reminder(11, 1, at(2026, 12, 1, 14, 0), offset=60),)),
        task(2, "带材料", at(2026, 12, 2, 9, 0), reminders=(reminder(12, 2, at(2026, 12, 2, 9, 0)),)),
        task(3, "交周报", at(2026, 12, 1, 9, 0)),
        event(4, "周会", at(2026, 12, 7, 9, 30), reminders=(reminder(13, 4, at(2026, 12, 7, 9, 0), status="sent"),)),
    ], overdue=[task(5, "报销单", at(2026, 11, 28, 18, 0))], undated=[task(6, "看书", None)],
        notices=[Notice("⏰ 提醒：11月30日（周一） 20:00 给妈妈打电话", expired=True)], **extra)


def body(html: str) -> str:
    return html.split("</head>", 1)[1]


def check_golden(name: str, html: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SCHEDBOT_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(body(html), encoding="utf-8")
    assert body(html) == path.read_text(encoding="utf-8"), f"{name} changed (SCHEDBOT_UPDATE_GOLDEN=1 to accept)"


def test_golden_private_page(renderer: PageRenderer) -> None:
    check_golden("itinerary_private.html", renderer.itinerary(sample_week(), url="https://x/p/TOKEN", actions=ACTIONS))


def test_golden_share_page_is_read_only(renderer: PageRenderer) -> None:
    html = renderer.itinerary(sample_week(shared=True), url="https://x/p/SHARE")
    check_golden("itinerary_share.html", html)
    assert "<form" not in html and "csrf" not in html and "订阅" not in html
    assert "我的行程" not in html and 'class="bell' not in html  # a visitor sees the plan, not the owner's reminders


def test_title_and_open_graph_for_the_link_preview(renderer: PageRenderer) -> None:
    html = renderer.itinerary(sample_week(), url="https://x/p/TOKEN", actions=ACTIONS)
    assert "<title>我的行程 · 12月1日–12月7日</title>" in html
    assert '<meta property="og:title" content="我的行程 · 12月1日–12月7日">' in html
    assert '<meta property="og:url" content="https://x/p/TOKEN">' in html
    description = re.search(r'<meta property="og:description" content="([^"]*)">', html)
    assert description is not None and description.group(1).startswith("12月1日–12月7日，共 4 项")


def test_titles_are_text_never_markup(renderer: PageRenderer) -> None:
    evil = "<script>alert(1)</script>"
    view = week([event(1, evil, at(2026, 12, 1, 15, 0)), task(2, '"><img src=x onerror=alert(2)>', None)],
                notices=[Notice(f"⏰ 提醒：{evil}")])
    html = renderer.itinerary(view, url="https://x/p/T?a=1&b=<2>", actions=ACTIONS)
    assert "<script" not in html and "<img" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 2
    assert "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in html
    assert 'content="https://x/p/T?a=1&amp;b=&lt;2&gt;"' in html


def test_empty_state(renderer: PageRenderer) -> None:
    html = renderer.itinerary(week([]), url="https://x/p/T", actions=ACTIONS)
    assert "这段时间没有安排" in html and 'class="entry' not in html
    assert "<title>我的行程 · 12月1日–12月7日</title>" in html


def test_long_titles_are_kept_whole_and_wrap(renderer: PageRenderer) -> None:
    long_title = "和供应商确认合同细节" * 10 + "https://example.com/" + "a" * 150
    html = renderer.itinerary(week([event(1, long_title, at(2026, 12, 2, 10, 0))]), url="https://x/p/T")
    url = "https://example.com/" + "a" * 150
    assert "和供应商确认合同细节" * 10 in html  # kept whole; the URL in it is a link
    assert f'<a href="{url}" rel="noopener noreferrer nofollow" target="_blank">example.com/aaaaaaaaaaaaaaa…</a>' in html
    assert "overflow-wrap: anywhere" in html  # the inline stylesheet lets unbroken text wrap at 375 px


def test_error_page(renderer: PageRenderer) -> None:
    html = renderer.error(status=410, title="链接已失效", message="这个链接已过期或已被取消分享。")
    assert "<title>链接已失效</title>" in html and "410" in html and "生成行程页" in html


def test_overdue_tasks_fold_into_one_group_with_their_full_count(renderer: PageRenderer) -> None:
    overdue = [task(100 + n, f"旧任务{n}", at(2026, 11, 20 + n, 18, 0)) for n in range(5)]
    html = renderer.itinerary(week([event(1, "会议", at(2026, 12, 1, 15, 0))], overdue=overdue, overdue_count=1000),
                              url="u", actions=ACTIONS)
    group = html.split('<details class="overdue"><summary>已过期 1000 项')[1].split("</aside>")[0]
    assert all(f"旧任务{n}" in group for n in range(5)) and "只列出最近的 5 项" in group
    assert '<button class="wide" name="do" value="postpone:0">全部顺延到今天</button>' in group


def test_a_series_card_acts_on_its_own_day_and_hides_the_whole_series_behind_more(renderer: PageRenderer) -> None:
    from schedule.domain import Recurrence

    pills = [task(7, "吃药", at(2026, 12, d, 22, 0), recurrence=Recurrence(rrule="FREQ=DAILY")) for d in (1, 2)]
    html = renderer.itinerary(week(pills), url="u", actions=ACTIONS)
    assert 'value="complete:7:2026-12-01" aria-label="完成：吃药 2026-12-01"' in html
    assert 'value="complete:7:2026-12-02"' in html and 'value="cancel:7:2026-12-02">取消这一次' in html
    assert 'value="complete:7"' not in html and 'value="cancel:7"' not in html
    more = html.split('id="item-7-2026-12-01"')[1].split('<details class="more">')[1]
    assert '<details class="confirm"><summary>结束整个系列…</summary><button class="danger" name="do" value="end:7">' in more
