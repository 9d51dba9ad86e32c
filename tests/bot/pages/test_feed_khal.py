"""A real calendar client reads the feed: khal (Debian package `khal`) imports it into a vdir of its own and
lists the same occurrences as the API and as `recurring-ical-events`, over 60 days in summer and over 60
days around 国庆 (holidays off, the 调休 Saturday on). Both backends."""

from __future__ import annotations

import asyncio
import os
import shutil
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
from icalendar import Calendar
from page_world import World, app_fixture, ms, world_fixture  # noqa: F401 (pytest fixtures `app`, `world`)
from test_page_feed import occurrences, series

from schedule.clock import to_ms

KHAL = shutil.which("khal")
SH = ZoneInfo("Asia/Shanghai")
DAY = 86_400_000
pytestmark = pytest.mark.skipif(KHAL is None, reason="khal is not installed (Debian package khal; .ci/run installs it)")

CONFIG = """\
[calendars]
[[feed]]
path = {vdir}
[locale]
local_timezone = Asia/Shanghai
default_timezone = Asia/Shanghai
timeformat = %H:%M
dateformat = %Y-%m-%d
longdateformat = %Y-%m-%d
datetimeformat = %Y-%m-%d %H:%M
longdatetimeformat = %Y-%m-%d %H:%M
[default]
default_calendar = feed
[sqlite]
path = {db}
"""


async def khal(home: Path, *args: str) -> str:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_DATA_HOME": str(home / "data"), "TZ": "Asia/Shanghai", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    assert KHAL is not None
    process = await asyncio.create_subprocess_exec(
        KHAL, "-c", str(home / "khal.conf"), *args, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode("utf-8", "replace")
    return out.decode("utf-8")


def listed(output: str, titles: dict[str, int]) -> list[tuple[int, int]]:
    """khal's lines `YYYY-MM-DD HH:MM|title` as (item id, start ms); its day headings are turned off."""
    found = []
    for line in output.splitlines():
        if not line.strip():
            continue
        start, _, title = line.partition("|")
        at = datetime.strptime(start.strip(), "%Y-%m-%d %H:%M").replace(tzinfo=SH)
        found.append((titles[title.strip()], to_ms(at)))
    return sorted(found)


async def test_khal_lists_what_the_api_lists(world: World, tmp_path: Path) -> None:
    await series(world)
    _, token, _ = await world.service.issue_api_token("alice")
    body = (await world.client.get(urlsplit(await world.links.feed_url(world.user.id)).path)).content
    cal = Calendar.from_ical(body)
    titles = {str(c["SUMMARY"]): int(str(c["UID"]).split("-")[1].split("@")[0]) for c in cal.walk("VEVENT")}
    feed = tmp_path / "feed.ics"
    feed.write_bytes(body)
    (tmp_path / "vdir").mkdir()
    (tmp_path / "khal.conf").write_text(CONFIG.format(vdir=tmp_path / "vdir", db=tmp_path / "khal.db"),
                                        encoding="utf-8")
    await khal(tmp_path, "import", "--batch", "-a", "feed", str(feed))
    assert len(list((tmp_path / "vdir").glob("*.ics"))) == len({str(c["UID"]) for c in cal.walk("VEVENT")})
    for start in (ms(2026, 6, 18), ms(2026, 9, 20)):  # this summer; 国庆 with its 调休 Saturday 10/10
        end = start + 60 * DAY
        api = await world.client.get("/api/schedule/items", headers={"Authorization": f"Bearer {token}"},
                                     params={"from": start, "to": end, "include_undated": "false"})
        expected = sorted((i["id"], i["start_at"] if i["kind"] == "event" else i["due_at"])
                          for i in api.json()["items"])
        first = datetime.fromtimestamp(start / 1000, SH).strftime("%Y-%m-%d")
        last = datetime.fromtimestamp((end - 1) / 1000, SH).strftime("%Y-%m-%d")
        shown = await khal(tmp_path, "list", "-a", "feed", "--day-format", "", "--format", "{start}|{title}",
                           first, last)
        assert listed(shown, titles) == expected == occurrences(cal, start, end)
        assert len(expected) > 60
