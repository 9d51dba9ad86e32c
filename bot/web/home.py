"""`GET /`: a tiny page saying what answers here — the bot's name, version, API docs and health — and the
API docs themselves (`serve_docs`)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

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


ASSETS = "/static-offline-docs"
_ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"  # Swagger UI and ReDoc, shipped by fastapi-offline


def serve_docs(app: FastAPI) -> None:
    """/docs (Swagger UI) and /redoc with their scripts served from here, not from a CDN often unreachable in
    mainland China; build `app` with docs_url and redoc_url None. Links carry the root path a proxy declares."""
    app.mount(ASSETS, StaticFiles(directory=_ASSETS_DIR), name="static-offline-docs")
    openapi_url, redirect_url = app.openapi_url or "/openapi.json", app.swagger_ui_oauth2_redirect_url

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(openapi_url=f"{root}{openapi_url}", title=f"{app.title} - Swagger UI",
                                   oauth2_redirect_url=redirect_url,
                                   swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
                                   swagger_ui_parameters=app.swagger_ui_parameters)

    if redirect_url is not None:
        @app.get(redirect_url, include_in_schema=False)
        async def swagger_ui_redirect() -> HTMLResponse:
            return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(openapi_url=f"{root}{openapi_url}", title=f"{app.title} - ReDoc",
                              redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js", with_google_fonts=False,
                              redoc_favicon_url=f"{root}{ASSETS}/favicon.png")
