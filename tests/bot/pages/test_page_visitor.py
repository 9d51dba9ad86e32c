"""Who opens a private page: WeChat's silent web OAuth against the fake WeChat API over loopback HTTP.

The owner (the openid WeChat names is the page user's) acts; someone the link was forwarded to reads only,
with a line saying how to get their own; outside WeChat's browser the page is read-only with a hint. A POST
and /calendar without the owner's session are refused. Without WeChat configured the link is its holder's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from page_world import BASE, ms, path_of, seed

from bot.pages.visitor import Session, seal, unseal
from bot.settings import load_settings
from bot.web.app import create_app
from fakes.wechat import FakeWeChatAPI
from schedule import outbox
from schedule.testing import FrozenClock

WECHAT_UA = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
             "Mobile/15E148 MicroMessenger/8.0.49(0x18003129) NetType/WIFI Language/zh_CN")
PLAIN_UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Safari/605.1.15"
SHARE_PARAMS = ("from=singlemessage&isappinstalled=0", "from=timeline", "from=groupmessage&isappinstalled=0")


@pytest.fixture
async def wechat() -> AsyncIterator[FakeWeChatAPI]:
    async with FakeWeChatAPI() as api:
        yield api


@pytest.fixture
async def app(database_url: str, clock: FrozenClock, wechat: FakeWeChatAPI) -> AsyncIterator[FastAPI]:
    settings = load_settings(DATABASE_URL=database_url, PUBLIC_BASE_URL=BASE, H5_WECHAT_MP_ENABLED=False,
                             WECHAT_APP_ID=wechat.app_id, WECHAT_APP_SECRET=wechat.app_secret,
                             WECHAT_API_BASE=wechat.base_url, WECHAT_OAUTH_BASE=wechat.base_url)
    application = create_app(settings, clock=clock, run_worker=False)
    async with LifespanManager(application):
        yield application


def browser(app: FastAPI, ua: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, headers={"user-agent": ua})


async def sign_in(client: httpx.AsyncClient, path: str) -> httpx.Response:
    """Open `path` the way WeChat's browser does: our redirect to WeChat, WeChat's (real HTTP) back to us, the
    page. Returns the page."""
    first = await client.get(path)
    assert first.status_code == 302, first.text
    authorize = first.headers["location"]
    assert authorize.endswith("#wechat_redirect")
    async with httpx.AsyncClient() as weixin:  # WeChat's own server, over loopback
        back = await weixin.get(authorize.split("#")[0])
    assert back.status_code == 302
    landed = await client.get(path_of(back.headers["location"]))
    assert landed.status_code == 303
    return await client.get(landed.headers["location"])


def csrf_of(html: str) -> str:
    return html.split('name="csrf" value="')[1].split('"')[0]


async def test_the_owner_in_wechat_signs_in_silently_and_acts(app: FastAPI, wechat: FakeWeChatAPI) -> None:
    user, items = await seed(app.state.service)
    url = path_of(await app.state.page_links.itinerary_url(user.id))
    async with browser(app, WECHAT_UA) as phone:
        first = await phone.get(url)
        query = parse_qs(urlsplit(first.headers["location"].split("#")[0]).query)
        assert {k: v[0] for k, v in query.items() if k != "state" and k != "redirect_uri"} == {
            "appid": wechat.app_id, "response_type": "code", "scope": "snsapi_base"}
        assert query["redirect_uri"][0].startswith(f"{BASE}/p/")
        assert "HttpOnly" in first.headers["set-cookie"] and "samesite=lax" in first.headers["set-cookie"].lower()
        page = await sign_in(phone, url)
        assert page.status_code == 200 and 'name="do"' in page.text and "订阅到手机日历" in page.text
        assert "只能查看" not in page.text
        exchange = wechat.calls_to("sns/oauth2/access_token")[-1]
        assert exchange.body["grant_type"] == "authorization_code" and exchange.body["appid"] == wechat.app_id
        again = await phone.get(url)  # the session cookie: no second trip through WeChat
        assert again.status_code == 200 and 'name="do"' in again.text
        report = items["report"]
        done = await phone.post(url, data={"do": f"complete:{report.id}", "csrf": csrf_of(again.text)})
        assert done.status_code == 303
        assert (await app.state.service.get_item(user.id, report.id)).status == "completed"
        calendar = await phone.get(url + "/calendar")
        assert calendar.status_code == 303 and calendar.headers["location"].startswith("webcal://")


async def test_a_forwarded_link_is_read_only_for_anyone_else(app: FastAPI, wechat: FakeWeChatAPI) -> None:
    user, items = await seed(app.state.service)
    url = path_of(await app.state.page_links.itinerary_url(user.id))
    async with app.state.sessions.begin() as session:
        await outbox.enqueue(session, user_id=user.id, idempotency_key="t:n", kind="notice", channel="inapp",
                             now_ms=ms(2026, 6, 18, 9, 0), payload={"text": "⏰ 提醒：给妈妈打电话"})
    async with browser(app, WECHAT_UA) as owner:
        csrf = csrf_of((await sign_in(owner, url)).text)
    wechat.web_user = "bob"  # alice forwarded the link to bob
    async with browser(app, WECHAT_UA) as bob:
        page = await sign_in(bob, url)
        assert page.status_code == 200 and "项目会议" in page.text
        assert "这是别人的行程" in page.text and "生成行程页" in page.text
        for hidden in ('name="do"', "订阅到手机日历", "/calendar", "给妈妈打电话", "未送达", 'name="csrf"', "已过期"):
            assert hidden not in page.text, hidden
        report = items["report"]
        for do in (f"complete:{report.id}", f"cancel:{report.id}", "seen:0"):
            refused = await bob.post(url, data={"do": do, "csrf": csrf})  # even with the owner's form token
            assert refused.status_code == 403 and "只有这个行程页的主人" in refused.text
        assert (await bob.get(url + "/calendar")).status_code == 403
        assert (await bob.get(url + f"/edit?item={report.id}")).status_code == 403
        assert (await app.state.service.get_item(user.id, report.id)).status == "active"


async def test_outside_wechat_the_page_is_read_only_with_a_hint(app: FastAPI, wechat: FakeWeChatAPI) -> None:
    user, items = await seed(app.state.service)
    url = path_of(await app.state.page_links.itinerary_url(user.id))
    async with browser(app, WECHAT_UA) as phone:
        csrf = csrf_of((await sign_in(phone, url)).text)
    async with browser(app, PLAIN_UA) as desktop:
        page = await desktop.get(url)
        assert page.status_code == 200 and "在微信里打开这个链接，才能完成、取消或修改" in page.text
        assert 'name="do"' not in page.text and "/calendar" not in page.text
        refused = await desktop.post(url, data={"do": f"complete:{items['report'].id}", "csrf": csrf})
        assert refused.status_code == 403
        assert (await desktop.get(url + "/calendar")).status_code == 403
    assert wechat.calls_to("connect/oauth2/authorize")[-1:] and len(wechat.calls_to("connect/oauth2/authorize")) == 1


async def test_a_code_used_twice_or_a_snapshot_user_is_nobody(app: FastAPI, wechat: FakeWeChatAPI) -> None:
    user, _ = await seed(app.state.service)
    url = path_of(await app.state.page_links.itinerary_url(user.id))
    async with browser(app, WECHAT_UA) as phone:
        first = await phone.get(url)
        async with httpx.AsyncClient() as weixin:
            back = path_of((await weixin.get(first.headers["location"].split("#")[0])).headers["location"])
        await phone.get(back)
    async with browser(app, WECHAT_UA) as replay:  # the same code again (a reload of WeChat's redirect)
        await replay.get(url)  # its own state cookie
        state = replay.cookies.get("sb_state")
        replayed = back.replace(parse_qs(urlsplit(back).query)["state"][0], state or "")
        landed = await replay.get(replayed)
        assert landed.status_code == 303
        page = await replay.get(landed.headers["location"])
        assert page.status_code == 200 and 'name="do"' not in page.text  # read only, and no loop through WeChat
        assert wechat.calls_to("sns/oauth2/access_token")[-1].answer["errcode"] == 40163
    wechat.snapshot = True
    async with browser(app, WECHAT_UA) as snapshot:
        page = await sign_in(snapshot, url)
        assert 'name="do"' not in page.text and "这是别人的行程" in page.text


async def test_a_forged_state_is_not_exchanged(app: FastAPI, wechat: FakeWeChatAPI) -> None:
    user, _ = await seed(app.state.service)
    url = path_of(await app.state.page_links.itinerary_url(user.id))
    async with browser(app, WECHAT_UA) as phone:
        await phone.get(url)
        landed = await phone.get(url + "/login?code=FAKE_CODE_1&state=not-the-cookie-state-at-all")
        assert landed.status_code == 303 and wechat.calls_to("sns/oauth2/access_token") == []
        assert 'name="do"' not in (await phone.get(url)).text


@pytest.mark.parametrize("params", SHARE_PARAMS)
async def test_share_parameters_are_accepted_and_kept_through_sign_in(app: FastAPI, params: str) -> None:
    user, _ = await seed(app.state.service)
    url = path_of(await app.state.page_links.itinerary_url(user.id))
    async with browser(app, WECHAT_UA) as phone:
        first = await phone.get(f"{url}?{params}")
        assert first.status_code == 302
        page = await sign_in(phone, f"{url}?{params}")
        assert page.status_code == 200 and "6月18日–6月24日" in page.text and 'name="do"' in page.text
        assert str(page.url).endswith(f"?{params}")  # back on the address WeChat gave
    async with browser(app, PLAIN_UA) as desktop:
        assert (await desktop.get(f"{url}?{params}")).status_code == 200
        share = path_of(await app.state.page_links.share_url(user.id))
        assert (await desktop.get(f"{share}?{params}")).status_code == 200
        ranged = await desktop.get(f"{url}?from=2026-06-20&to=2026-06-21&isappinstalled=0&utm_source=x")
        assert ranged.status_code == 200 and "6月20日–6月21日" in ranged.text
        assert (await desktop.get(f"{url}?from=2026-13-01")).status_code == 400  # a date still has to be one


def test_the_session_cookie_cannot_be_forged_or_outlive_itself() -> None:
    key, other = b"k" * 32, b"o" * 32
    value = seal(key, "o-alice", now_s=1_000, ttl_s=60)
    assert unseal(key, value, now_s=1_059) == Session("o-alice", 1_060)
    assert unseal(key, value, now_s=1_060) is None  # expired
    assert unseal(other, value, now_s=1_000) is None  # another site's key
    who, expiry, mac = value.split(".")
    bob = seal(key, "o-bob", now_s=1_000, ttl_s=60).split(".")[0]
    assert unseal(key, f"{bob}.{expiry}.{mac}", now_s=1_000) is None  # someone else's openid under alice's MAC
    assert unseal(key, f"{who}.{int(expiry, 16) + 10**6:x}.{mac}", now_s=1_000) is None  # a longer life
    assert unseal(key, "", now_s=1_000) is None and unseal(key, "a.b", now_s=1_000) is None
    assert unseal(key, "x" * 500, now_s=1_000) is None
