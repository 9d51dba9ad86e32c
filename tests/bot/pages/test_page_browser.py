"""A real browser (headless Chromium through Playwright) on the page served over loopback.

At 375×812 with three overdue tasks and two undelivered notices, today's first entry is inside the first
screen and every button, summary and standalone link is at least 44 px tall (links inside a title's text
are the inline exception); nothing overflows at 375, 768, 1024 or 1280 px; tapping 完成 on a task marks it
done and the page says so with 撤销 (POST/redirect/GET, no JavaScript needed). Screenshots (light and dark)
land in tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import uvicorn
from page_world import extras, ms, seed

from bot.settings import load_settings
from bot.web.app import create_app
from schedule.domain import NewItem, NewReminder, Recurrence
from schedule.testing import FrozenClock

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

if not CHROMIUM.exists():
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is required in CI (.ci/run installs it)", pytrace=False)
    pytest.skip("chromium is not installed (apt-get install -y chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.async_api")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def served(tmp_path: Path, clock: FrozenClock) -> AsyncIterator[tuple[str, str]]:
    """The app on a loopback port; yields (base URL, the seeded user's private page URL)."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    settings = load_settings(DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/browser.db", PUBLIC_BASE_URL=base,
                             H5_WECHAT_MP_ENABLED=False)
    app = create_app(settings, clock=clock, run_worker=False)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start"
    user, _items = await seed(app.state.service)
    await extras(app.state.service, app.state.sessions, user.id)
    await app.state.service.create_item(user.id, NewItem(  # a daily series: a card on every day of the week
        kind="task", title="吃药", timezone="Asia/Shanghai", due_at=ms(2026, 6, 18, 22, 0),
        recurrence=Recurrence(rrule="FREQ=DAILY"), reminders=(NewReminder(remind_at=ms(2026, 6, 18, 22, 0)),)))
    for day, title in ((16, "交电费"), (17, "回复王姐的邮件")):  # three overdue tasks with 报销单
        await app.state.service.create_item(user.id, NewItem(kind="task", title=title, timezone="Asia/Shanghai",
                                                             due_at=ms(2026, 6, day, 18, 0)))
    try:
        yield base, await app.state.page_links.itinerary_url(user.id)
    finally:
        server.should_exit = True
        await task


SMALL = """() => [...document.querySelectorAll('button, summary, a')]
  .filter(el => !el.closest('.title'))
  .map(el => [el.textContent.trim().slice(0, 20), el.getBoundingClientRect()])
  .filter(([, r]) => r.width > 0 && r.height < 44)
  .map(([t, r]) => `${t}: ${Math.round(r.height)}px`)"""


async def test_page_in_a_real_browser(served: tuple[str, str]) -> None:
    _base, url = served
    ARTIFACTS.mkdir(exist_ok=True)
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = await browser.new_page(viewport={"width": 375, "height": 812})
            await page.goto(url)
            assert await page.locator(".overdue > summary").inner_text() == "已过期 3 项\n展开"
            assert await page.locator(".notices > summary").inner_text() == "你有 2 条未送达的提醒"
            assert await page.locator("li.entry", has_text="吃药").count() == 7  # the daily series on each day
            first = await page.locator("section.day.today li.entry").first.bounding_box()
            assert first is not None and first["y"] + first["height"] <= 812, f"today's first entry at {first}"
            await page.screenshot(path=str(ARTIFACTS / "page-375-first-open.png"))
            await page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            small = await page.evaluate(SMALL)
            assert small == [], f"tap targets under 44 px: {small}"
            await page.screenshot(path=str(ARTIFACTS / "page-375-all-open.png"), full_page=True)
            await page.close()

            for width, height, scheme in ((375, 812, "light"), (768, 1024, "light"), (1024, 768, "light"),
                                          (1280, 800, "light"), (375, 812, "dark"), (1280, 800, "dark")):
                page = await browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
                await page.goto(url)
                assert await page.title() == "我的行程 · 6月18日–6月24日"
                overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 0, f"{width}px: the page is {overflow}px wider than the screen"
                box = await page.locator("section.day.today li.entry").first.bounding_box()
                assert box is not None and box["y"] + box["height"] <= height, f"{width}px: today is below the fold"
                await page.screenshot(path=str(ARTIFACTS / f"page-{width}-{scheme}.png"), full_page=width != 375)
                if width == 375:
                    await page.screenshot(path=str(ARTIFACTS / f"page-{width}-{scheme}-full.png"), full_page=True)
                await page.close()

            page = await browser.new_page(viewport={"width": 375, "height": 812})
            await page.goto(url)
            task = page.locator("li.entry", has_text="交周报")
            await task.get_by_role("button", name="完成：交周报").click()
            await page.wait_for_load_state()
            done = page.locator("li.entry", has_text="交周报")
            assert "tone-done" in (await done.get_attribute("class") or "")
            assert await done.locator(".meta em").first.inner_text() == "已完成"
            assert await done.get_by_role("button", name="完成：交周报").count() == 0
            assert await page.locator(".flash").inner_text() == "已完成“交周报”。\n撤销"
            await page.screenshot(path=str(ARTIFACTS / "page-375-after-tap.png"))
            await page.locator(".flash").get_by_role("button", name="撤销").click()
            await page.wait_for_load_state()
            assert await page.locator("li.entry", has_text="交周报").get_by_role("button", name="完成：交周报").count() == 1
            await page.close()
        finally:
            await browser.close()
