"""Page links and the link commands: the page link when asked or when the list is long, share/unshare, the feed."""

from __future__ import annotations

from conftest import Bot

from fakes.wechat import event_message


async def test_page_request_answers_with_summary_and_a_working_link(bot: Bot) -> None:
    chat = bot.chat()
    await chat.say("明天上午九点提醒我带材料")
    reply = await chat.say("生成一个好看的本周行程页面")
    summary, link_line = reply.rsplit("\n", 1)
    assert summary.startswith("6月15日（周一）到6月21日（周日）共 1 项安排。")
    assert "最近一项：6月19日（周五）09:00 带材料" in summary
    url = link_line.removeprefix("查看行程页：")
    assert url.startswith(bot.app.state.settings.PUBLIC_BASE_URL + "/p/")
    page = await bot.client.get(url.removeprefix(bot.app.state.settings.PUBLIC_BASE_URL))
    assert page.status_code == 200 and "带材料" in page.text


async def test_more_than_eight_entries_get_the_page_link(bot: Bot) -> None:
    chat = bot.chat()
    for hour in range(9, 18):
        await chat.say(f"明天{hour}点提醒我做第{hour}件事")
    reply = await chat.say("看看明天行程")
    assert "共 9 项安排" in reply and "/p/" in reply


async def test_share_unshare_and_feed(bot: Bot) -> None:
    chat = bot.chat()
    share = await chat.say("分享行程页")
    assert share.startswith("公开分享链接（只读）：") and "取消分享" in share
    shared_url = share.split("：", 1)[1].split("\n", 1)[0]
    path = shared_url.removeprefix(bot.app.state.settings.PUBLIC_BASE_URL)
    assert (await bot.client.get(path)).status_code == 200
    assert (await chat.say("取消分享")).startswith("已关闭公开分享链接")
    assert (await bot.client.get(path)).status_code in (404, 410)
    assert (await chat.say("取消分享")) == "你目前没有公开的分享链接。"
    feed = await chat.say("订阅日历")
    assert feed.startswith("日历订阅地址：") and ".ics" in feed
    feed_path = feed.split("：", 1)[1].split("\n", 1)[0].removeprefix(bot.app.state.settings.PUBLIC_BASE_URL)
    ics = await bot.client.get(feed_path)
    assert ics.status_code == 200 and "BEGIN:VCALENDAR" in ics.text


async def test_unfollowing_closes_the_public_share(bot: Bot) -> None:
    chat = bot.chat()
    share = await chat.say("分享行程页")
    path = share.split("：", 1)[1].split("\n", 1)[0].removeprefix(bot.app.state.settings.PUBLIC_BASE_URL)
    assert (await bot.client.get(path)).status_code == 200
    await chat.post(event_message(chat.openid, "unsubscribe", create_time=int(bot.clock.now().timestamp())))
    assert (await bot.client.get(path)).status_code in (404, 410)
