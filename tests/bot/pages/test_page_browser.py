"""A real browser (headless Chromium through Playwright) on the page served over loopback.

Checks at 375×812 and 1280×800: nothing overflows horizontally, today's section is on the first
screen, and tapping 完成 on a task marks it done (POST/redirect/GET, no JavaScript needed).
Screenshots land in tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import uvicorn
from page_world import extras, seed

from bot.app import create_app
from bot.settings import load_settings
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
    try:
        yield base, await app.state.page_links.itinerary_url(user.id)
    finally:
        server.should_exit = True
        await task


async def test_page_in_a_real_browser(served: tuple[str, str]) -> None:
    _base, url = served
    ARTIFACTS.mkdir(exist_ok=True)
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            for width, height, name in ((375, 812, "page-375.png"), (1280, 800, "page-1280.png")):
                page = await browser.new_page(viewport={"width": width, "height": height})
                await page.goto(url)
                assert await page.title() == "我的行程 · 6月18日–6月24日"
                overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 0, f"{width}px: the page is {overflow}px wider than the screen"
                box = await page.locator("section.day.today").bounding_box()
                assert box is not None and box["y"] < height, f"{width}px: today starts below the first screen"
                await page.screenshot(path=str(ARTIFACTS / name), full_page=True)
                await page.close()

            page = await browser.new_page(viewport={"width": 375, "height": 812})
            await page.goto(url)
            task = page.locator("li.entry", has_text="交周报")
            await task.get_by_role("button", name="完成").click()
            await page.wait_for_load_state()
            done = page.locator("li.entry", has_text="交周报")
            assert "tone-done" in (await done.get_attribute("class") or "")
            assert await done.locator(".meta em").first.inner_text() == "已完成"
            assert await done.get_by_role("button", name="完成").count() == 0
            await page.close()
        finally:
            await browser.close()
