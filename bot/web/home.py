"""`GET /`: a tiny page saying what answers here — the bot's name, version, API docs and health."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

try:
    VERSION = version("schedbot")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0.0.0"

router = APIRouter(include_in_schema=False)

_PAGE = f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>schedbot</title>
<style>body{{font:16px/1.6 system-ui,sans-serif;color:#1f2933;background:#fff;max-width:34rem;margin:3rem auto;
padding:0 1rem}}a{{color:#2f6f9f}}code{{background:#f3f5f7;padding:0 .25rem}}</style></head>
<body><h1>schedbot <small>{VERSION}</small></h1>
<p>微信服务号日程助手：待办、日程与提醒。WeChat schedule assistant.</p>
<ul><li><a href="/docs">API docs</a> (<code>/api/schedule/…</code>, bearer token from
<code>schedbot user token NAME</code>)</li><li><a href="/healthz">health</a></li></ul>
</body></html>"""


@router.get("/", response_class=HTMLResponse)
async def home() -> HTMLResponse:
    return HTMLResponse(_PAGE)
