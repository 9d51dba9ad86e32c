"""The `schedbot` command line: serve, worker, migrate, chat, parse, timex, user token, wechat, holidays, doctor.

Subcommands import their dependencies lazily so that `schedbot parse` and
`schedbot timex` start fast and work offline without touching a database.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="schedbot", description="schedbot: WeChat schedule assistant")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the web app (webhook, API, pages) and the in-process worker")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1,
                       help="web processes (uvicorn's process manager); more than 1 needs MariaDB/MySQL")
    serve.add_argument("--proxy-headers", action="store_true",
                       help="trust X-Forwarded-For/-Proto from --forwarded-allow-ips (behind nginx)")
    serve.add_argument("--forwarded-allow-ips", default=None,
                       help="comma-separated proxy addresses to trust (default 127.0.0.1)")

    worker = sub.add_parser("worker", help="run the delivery worker only (scale-out)")
    worker.add_argument("--metrics-port", type=int, default=None,
                        help="serve this worker's Prometheus metrics on http://HOST:PORT/metrics")
    worker.add_argument("--metrics-host", default="127.0.0.1")
    sub.add_parser("migrate", help="upgrade the database to the latest migration")

    chat = sub.add_parser("chat", help="talk to the bot in the terminal")
    chat.add_argument("--user", required=True, help="user name (a WeChat openid or any local name)")
    chat.add_argument("--now", default=None, help="pin the clock (ISO 8601 with offset); then /wait 30m moves it")

    for name, text in (("parse", "utterances → intent JSON lines"), ("timex", "texts → time expressions")):
        p = sub.add_parser(name, help=f"stdin {text}")
        p.add_argument("--now", default=None, help="reference instant, ISO 8601 with offset")
        p.add_argument("--tz", default=None, help="IANA timezone (default H5_DEFAULT_TIMEZONE)")

    user = sub.add_parser("user", help="user administration")
    user_sub = user.add_subparsers(dest="user_command", required=True)
    token = user_sub.add_parser("token", help="issue a fresh API token for NAME (created if missing)")
    token.add_argument("name")
    token.add_argument("--label", default="default",
                       help="a name for this token (laptop, phone…); issuing a label again replaces its token")
    token.add_argument("--revoke", metavar="LABEL", default=None, help="revoke NAME's token with this label")
    listing = user_sub.add_parser("tokens", help="list NAME's API tokens (labels, created, last used)")
    listing.add_argument("name")
    forget = user_sub.add_parser("forget", help="delete NAME's data and stop every push to them (as unfollowing does)")
    forget.add_argument("name")

    wechat = sub.add_parser("wechat", help="set up the WeChat service account (menu, reminder template)")
    wechat_sub = wechat.add_subparsers(dest="wechat_command", required=True)
    menu = wechat_sub.add_parser("menu", help="create the custom menu (default, or --file menu.toml/.json)")
    action = menu.add_mutually_exclusive_group()
    action.add_argument("--file", default=None, help="a TOML or JSON menu replacing the default")
    action.add_argument("--show", action="store_true", help="print the account's current menu")
    action.add_argument("--delete", action="store_true", help="remove the account's menu")
    menu.add_argument("--dry-run", action="store_true", help="print the menu JSON without calling WeChat")
    wechat_sub.add_parser("template", help="check WECHAT_TEMPLATE_ID_REMINDER against the account's templates")

    holidays = sub.add_parser("holidays", help="the official holiday schedule (节假日安排) working-day series follow")
    holidays_sub = holidays.add_subparsers(dest="holidays_command", required=True)
    load = holidays_sub.add_parser("load", help="load a year's schedule as the State Council published it "
                                                "(a JSON or TOML file: year, holidays, workdays)")
    load.add_argument("file")
    holidays_sub.add_parser("list", help="which years' 调休 is known (loaded, or built in) and which are not")

    sub.add_parser("doctor", help="check configuration, database, WeChat, agent, public URL and clock")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command in ("parse", "timex"):
        from bot.cli import intent as intent_cli

        return intent_cli.run(args.command, now=args.now, tz=args.tz, stdin=sys.stdin, stdout=sys.stdout)
    from bot.cli import commands

    return commands.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
