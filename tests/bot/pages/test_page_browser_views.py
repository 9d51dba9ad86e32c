"""The page in a real browser (Debian Chromium through Playwright), on both backends, with WeChat configured
against the fake WeChat API: WeChat's browser (its user agent) goes through the silent web OAuth for real.

- the owner inside WeChat acts; the forwarded visitor inside WeChat and anyone outside WeChat read only;
- WeChat's share parameters open the page;
- after each kind of tap the message with 撤销 is inside the screen, wherever the card that was tapped is;
- an edit from the page;
- axe-core finds no violation, light and dark, on the owner's page, the read-only view and the share page
  (the end-series confirmation open: its contrast in dark mode).
Screenshots at 375 and 1280 px, light and dark, land in tests/artifacts/ (or $SCHEDBOT_SHOTS).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from page_world import extras, ms, seed
from sqlalchemy import update

from bot.settings import load_settings
from bot.web.app import create_app
from fakes.wechat import FakeWeChatAPI
from schedule.domain import NewItem, NewReminder, Recurrence
from schedule.model import ReminderRow
from schedule.testing import FrozenClock

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(os.environ.get("SCHEDBOT_SHOTS") or Path(__file__).resolve().parents[2] / "artifacts")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
WECHAT_UA = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
             "Mobile/15E148 MicroMessenger/8.0.49(0x18003129) NetType/WIFI Language/zh_CN")
PLAIN_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36"

if not CHROMIUM.exists():
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is required in CI (.ci/run installs it)", pytrace=False)
    pytest.skip("chromium is not installed (apt-get install -y chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.timeout(600)  # dozens of page loads each: on a busy machine more than the usual 120 s
AXE = resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Site:
    url: str  # the owner's private page
    share: str
    wechat: FakeWeChatAPI
    ids: dict[str, int]


@pytest.fixture
async def site(database_url: str, clock: FrozenClock) -> AsyncIterator[Site]:
    async with FakeWeChatAPI() as wechat:
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        settings = load_settings(DATABASE_URL=database_url, PUBLIC_BASE_URL=base, H5_WECHAT_MP_ENABLED=False,
                                 WECHAT_APP_ID=wechat.app_id, WECHAT_APP_SECRET=wechat.app_secret,
                                 WECHAT_API_BASE=wechat.base_url, WECHAT_OAUTH_BASE=wechat.base_url)
        app = create_app(settings, clock=clock, run_worker=False)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                                               timeout_graceful_shutdown=2))
        task = asyncio.create_task(server.serve())
        for _ in range(1000):
            if server.started:
                break
            await asyncio.sleep(0.01)
        assert server.started, "uvicorn did not start"
        service = app.state.service
        user, items = await seed(service)
        await extras(service, app.state.sessions, user.id)
        tz = "Asia/Shanghai"
        pills = await service.create_item(user.id, NewItem(
            kind="task", title="吃药", timezone=tz, due_at=ms(2026, 6, 18, 22, 0), recurrence=Recurrence(rrule="FREQ=DAILY"),
            reminders=(NewReminder(remind_at=ms(2026, 6, 18, 22, 0)),)))
        for day, title in ((16, "交电费"), (17, "回复王姐的邮件")):
            await service.create_item(user.id, NewItem(kind="task", title=title, timezone=tz,
                                                       due_at=ms(2026, 6, day, 18, 0)))
        call = await service.create_item(user.id, NewItem(
            kind="event", title="客户电话会", timezone=tz, start_at=ms(2026, 6, 24, 20, 0), end_at=ms(2026, 6, 24, 21, 0),
            location="国贸三期 A 座", description="入会链接 https://meeting.example/j/123456\n密码 6789",
            reminders=(NewReminder(remind_at=ms(2026, 6, 24, 19, 0), offset_minutes=60),)))
        last = await service.create_item(user.id, NewItem(kind="task", title="订周末机票", timezone=tz,
                                                          due_at=ms(2026, 6, 24, 21, 0)))
        async with app.state.sessions.begin() as session:  # the meeting's reminder went out: snooze is offered
            await session.execute(update(ReminderRow).where(ReminderRow.item_id == items["meeting"].id)
                                  .values(status="sent", sent_at=ms(2026, 6, 18, 9, 0)))
        ids = {"pills": pills.id, "call": call.id, "last": last.id, "meeting": items["meeting"].id,
               "report": items["report"].id, "standup_rem": 0}
        try:
            yield Site(url=await app.state.page_links.itinerary_url(user.id),
                       share=await app.state.page_links.share_url(user.id), wechat=wechat, ids=ids)
        finally:
            server.should_exit = True
            await task


@pytest.fixture(autouse=True)
def shots_folder() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


@pytest.fixture
async def chromium() -> AsyncIterator[Any]:
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(browser: Any, url: str, *, ua: str = WECHAT_UA, width: int = 375, height: int = 812,
                    scheme: str = "light", web_user: str = "alice", site: Site | None = None) -> Any:
    if site is not None:
        site.wechat.web_user = web_user
    context = await browser.new_context(user_agent=ua, viewport={"width": width, "height": height},
                                        color_scheme=scheme, bypass_csp=True)  # bypass: axe is injected
    page = await context.new_page()
    response = await page.goto(url)
    assert response is not None and response.status == 200, f"{url}: {response and response.status}"
    return page


async def axe_violations(page: Any) -> list[str]:
    await page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    await page.add_script_tag(content=AXE)
    result = await page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map(v => `${v.id} (${v.impact}): ` + v.nodes.slice(0, 3).map(n => n.target.join(' ')
            + ' ' + (n.any[0] && n.any[0].message || '')).join(' | '));
    }""")
    return list(result)


# Every button, summary and standalone link is at least 44 px tall; links inside a title's or a note's text are
# the inline exception.
SMALL = """() => [...document.querySelectorAll('button, summary, a, input')]
  .filter(el => !el.closest('.title') && !el.closest('.note'))
  .map(el => [(el.textContent || el.name).trim().slice(0, 20), el.getBoundingClientRect()])
  .filter(([, r]) => r.width > 0 && r.height < 44)
  .map(([t, r]) => `${t}: ${Math.round(r.height)}px`)"""


async def flash_on_screen(page: Any) -> str:
    flash = page.locator(".flash")
    box = await flash.bounding_box()
    viewport = page.viewport_size
    assert box is not None, "no message after the tap"
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], f"the message is off screen: {box}"
    return str(await flash.inner_text())


async def test_owner_visitor_and_outside_views(site: Site, chromium: Any) -> None:
    owner = await open_page(chromium, site.url, site=site)
    assert await owner.get_by_role("button", name="完成：交周报").count() == 1
    assert await owner.locator(".notices > summary").inner_text() == "你有 2 条未送达的提醒"
    assert await owner.get_by_role("link", name="订阅到手机日历").count() == 1
    assert await owner.locator(".viewer").count() == 0
    await owner.context.close()

    visitor = await open_page(chromium, site.url, site=site, web_user="bob")  # the link forwarded to bob
    assert "这是别人的行程" in await visitor.locator(".viewer").inner_text()
    assert await visitor.locator("button[name=do]").count() == 0 and await visitor.locator(".notices").count() == 0
    assert await visitor.get_by_role("link", name="订阅到手机日历").count() == 0
    assert await visitor.locator("li.entry", has_text="项目会议").count() == 1
    await visitor.context.close()

    outside = await open_page(chromium, site.url, ua=PLAIN_UA, site=site)
    assert "在微信里打开这个链接" in await outside.locator(".viewer").inner_text()
    assert await outside.locator("button[name=do]").count() == 0
    await outside.context.close()
    assert len(site.wechat.calls_to("connect/oauth2/authorize")) == 2  # WeChat's browser only, once each

    for params in ("from=singlemessage&isappinstalled=0", "from=timeline", "from=groupmessage"):
        for url in (site.url, site.share):
            shared = await open_page(chromium, f"{url}?{params}", site=site)
            assert await shared.locator("li.entry").count() > 0
            await shared.context.close()


async def test_axe_and_screenshots_light_and_dark(site: Site, chromium: Any) -> None:
    views = (("owner", site.url, WECHAT_UA, "alice"), ("readonly", site.url, WECHAT_UA, "bob"),
             ("share", site.share, PLAIN_UA, "alice"))
    for name, url, ua, who in views:
        for width, height in ((375, 812), (1280, 800)):
            for scheme in ("light", "dark"):
                page = await open_page(chromium, url, ua=ua, width=width, height=height, scheme=scheme,
                                       web_user=who, site=site)
                overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 0, f"{name} {width}px {scheme}: {overflow}px too wide"
                await page.screenshot(path=str(SHOTS / f"{name}-{width}-{scheme}.png"), full_page=width == 1280)
                if width == 375:
                    await page.screenshot(path=str(SHOTS / f"{name}-{width}-{scheme}-full.png"), full_page=True)
                    violations = await axe_violations(page)
                    assert violations == [], f"{name} {scheme}: {violations}"
                    small = await page.evaluate(SMALL)
                    assert small == [], f"{name}: tap targets under 44 px: {small}"
                    if name == "owner":  # the message after a tap, and a done card, in this scheme
                        await page.get_by_role("button", name="完成：订周末机票").click()
                        await page.wait_for_load_state()
                        await flash_on_screen(page)
                        violations = await axe_violations(page)
                        assert violations == [], f"{name} {scheme} after a tap: {violations}"
                        await page.screenshot(path=str(SHOTS / f"{name}-{width}-{scheme}-after-tap.png"))
                        await page.locator(".flash").get_by_role("button", name="撤销").click()
                        await page.wait_for_load_state()
                await page.context.close()


async def test_undo_is_on_screen_after_every_kind_of_tap(site: Site, chromium: Any) -> None:
    url = site.url + "?from=2026-06-18&to=2026-07-01"  # a long page: the tapped card is far down
    page = await open_page(chromium, url, site=site)

    async def tap(locator: Any, says: str, *, undo: bool = True) -> None:
        await locator.click()
        await page.wait_for_load_state()
        text = await flash_on_screen(page)
        assert says in text, text
        assert await page.locator(".flash").get_by_role("button", name="撤销").count() == (1 if undo else 0), text

    last = page.locator("li.entry", has_text="订周末机票")
    await tap(last.get_by_role("button", name="完成：订周末机票"), "已完成“订周末机票”")
    await page.screenshot(path=str(SHOTS / "after-tap-375.png"))
    await tap(page.locator(".flash").get_by_role("button", name="撤销"), "又回到待办", undo=False)
    await tap(page.get_by_role("button", name="完成：吃药 2026-06-30"), "的“吃药”，以后的照常")
    await tap(page.get_by_role("button", name="重新打开：吃药 2026-06-30"), "又回到待办", undo=False)
    call = page.locator("li.entry", has_text="客户电话会")
    await call.locator("summary", has_text="更多").click()
    await tap(call.get_by_role("button", name="取消这一项"), "已取消“客户电话会”")
    await tap(page.locator(".flash").get_by_role("button", name="撤销"), "恢复了", undo=False)
    weekly = page.locator("li.entry", has_text="周会").last
    await weekly.locator("summary", has_text="更多").click()
    await tap(weekly.get_by_role("button", name="取消这一次"), "这一次，以后的照常")
    weekly = page.locator("li.entry", has_text="周会").last
    await weekly.locator("summary", has_text="更多").click()
    await weekly.locator("summary", has_text="结束整个系列").click()
    await tap(weekly.locator("button.danger"), "已结束整个系列“周会”")
    await tap(page.locator(".flash").get_by_role("button", name="撤销"), "系列“周会”恢复了", undo=False)
    meeting = page.locator("li.entry", has_text="项目会议")
    await tap(meeting.get_by_role("button", name="10 分钟后"), "再提醒你：项目会议")
    await tap(page.locator(".flash").get_by_role("button", name="撤销"), "不再额外提醒", undo=False)
    papers = page.locator("li.entry", has_text="带材料")
    await papers.locator("summary", has_text="更多").click()
    await tap(papers.get_by_role("button", name="不用提醒"), "不再提醒“带材料”")
    await tap(page.locator(".flash").get_by_role("button", name="撤销"), "照常提醒“带材料”", undo=False)
    await page.evaluate("document.querySelector('.overdue').open = true")
    await tap(page.get_by_role("button", name="全部顺延到今天"), "顺延到今天", undo=False)
    await page.evaluate("document.querySelector('.notices').open = true")
    await tap(page.get_by_role("button", name="知道了"), "已标为已读", undo=False)
    assert await page.locator(".notices").count() == 0
    await page.context.close()


async def test_an_edit_from_the_page(site: Site, chromium: Any) -> None:
    page = await open_page(chromium, site.url, site=site)
    meeting = page.locator("li.entry", has_text="项目会议")
    await meeting.locator("summary", has_text="更多").click()
    await meeting.get_by_role("link", name="修改").click()
    await page.wait_for_load_state()
    assert await page.get_by_label("时间").input_value() == "15:00"
    await page.get_by_label("标题").fill("项目评审会")
    await page.get_by_label("时间").fill("16:30")
    await page.get_by_label("地点").fill("3号会议室")
    await page.get_by_label("备注").fill("材料 https://docs.example/review")
    violations = await axe_violations(page)
    assert violations == [], violations
    await page.get_by_role("button", name="保存").click()
    await page.wait_for_load_state()
    assert "已修改“项目评审会”" in await flash_on_screen(page)
    card = page.locator("li.entry", has_text="项目评审会")
    assert (await card.locator("time").inner_text()).startswith("16:30")
    assert await card.get_by_role("link", name="docs.example/review").get_attribute("href") == \
        "https://docs.example/review"
    assert (await card.get_by_role("link", name="在地图上查看：3号会议室").get_attribute("href") or "").startswith(
        "https://uri.amap.com/search?keyword=")
    await page.context.close()
