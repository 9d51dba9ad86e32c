"""Revocable links: the per-user link epoch is checked on every resolve, and bumped by
`user forget` (and unfollowing) and by 重置链接; revoked and forgotten links answer 410."""

from __future__ import annotations

from urllib.parse import urlsplit

from page_world import World, app_fixture, path_of, world_fixture  # noqa: F401 (pytest fixtures `app`, `world`)

from bot.pages import tokens
from bot.pages.tokens import Claims
from schedule.domain import NewItem


def feed_path(url: str) -> str:
    return urlsplit(url).path


async def links_of(world: World) -> dict[str, str]:
    uid = world.user.id
    return {"page": path_of(await world.links.itinerary_url(uid)), "feed": feed_path(await world.links.feed_url(uid)),
            "share": path_of(await world.links.share_url(uid))}


async def test_forgotten_users_links_answer_410_even_after_a_refollow(world: World) -> None:
    old = await links_of(world)
    assert {name: (await world.client.get(path)).status_code for name, path in old.items()} == \
        {"page": 200, "feed": 200, "share": 200}
    await world.service.forget_user(world.user.id)
    for name, path in old.items():
        response = await world.client.get(path)
        assert response.status_code == 410, name
        assert "项目会议" not in response.text and "BEGIN:VEVENT" not in response.text
    again = await world.service.get_or_create_user("alice")  # follows again: the same row, new items
    assert again.id == world.user.id
    await world.service.create_item(again.id, NewItem(kind="task", title="新的秘密", timezone="Asia/Shanghai"))
    assert (await world.client.get(old["feed"])).status_code == 410
    fresh = await world.client.get(feed_path(await world.links.feed_url(again.id)))
    assert fresh.status_code == 200 and "新的秘密" in fresh.text


async def test_reset_links_revokes_every_link_and_the_next_ones_work(world: World) -> None:
    old = await links_of(world)
    page = await world.client.get(old["page"])
    csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
    assert await world.links.reset_links(world.user.id) is True
    for name, path in old.items():
        assert (await world.client.get(path)).status_code == 410, name
    item = world.items["meeting"]
    tap = await world.client.post(old["page"], data={"csrf": csrf, "do": f"complete:{item.id}"})
    assert tap.status_code == 410 and (await world.service.get_item(world.user.id, item.id)).status == "active"
    new = await links_of(world)
    assert all(new[name] != old[name] for name in old)
    assert {name: (await world.client.get(path)).status_code for name, path in new.items()} == \
        {"page": 200, "feed": 200, "share": 200}
    assert await world.links.reset_links(10**9) is False


async def test_a_link_made_without_the_database_carries_the_current_epoch(world: World) -> None:
    uid = world.user.id
    await world.links.itinerary_url(uid)  # reads (and remembers) the epoch
    before = world.links.itinerary_url_now(uid, start_ms=None, end_ms=None, tz="Asia/Shanghai")
    assert before is not None and (await world.client.get(path_of(before))).status_code == 200
    await world.links.reset_links(uid)
    assert world.links.itinerary_url_now(uid, start_ms=None, end_ms=None, tz="Asia/Shanghai") is None
    after = await world.links.itinerary_url(uid)
    assert (await world.client.get(path_of(before))).status_code == 410
    assert (await world.client.get(path_of(after))).status_code == 200


async def test_links_issued_before_epochs_keep_working_until_the_first_reset(world: World) -> None:
    """Tokens signed before this change carry the nonce "0": the same as epoch 0."""
    key, _ = await world.links._load_keys()
    legacy = tokens.sign(key, Claims("p", world.user.id, world.links._expiry(86_400_000)))
    assert (await world.client.get(f"/p/{legacy}")).status_code == 200
    await world.links.reset_links(world.user.id)
    assert (await world.client.get(f"/p/{legacy}")).status_code == 410
