"""The `schedbot` command line: serve, worker, migrate, chat, parse, timex, user token.

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

    sub.add_parser("worker", help="run the delivery worker only (scale-out)")
    sub.add_parser("migrate", help="upgrade the database to the latest migration")

    chat = sub.add_parser("chat", help="talk to the bot in the terminal")
    chat.add_argument("--user", required=True, help="user name (a WeChat openid or any local name)")

    for name, text in (("parse", "utterances → intent JSON lines"), ("timex", "texts → time expressions")):
        p = sub.add_parser(name, help=f"stdin {text}")
        p.add_argument("--now", default=None, help="reference instant, ISO 8601 with offset")
        p.add_argument("--tz", default=None, help="IANA timezone (default H5_DEFAULT_TIMEZONE)")

    user = sub.add_parser("user", help="user administration")
    user_sub = user.add_subparsers(dest="user_command", required=True)
    token = user_sub.add_parser("token", help="issue a fresh API token for NAME (created if missing)")
    token.add_argument("name")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command in ("parse", "timex"):
        from bot import intent_cli

        return intent_cli.run(args.command, now=args.now, tz=args.tz, stdin=sys.stdin, stdout=sys.stdout)
    from bot import commands

    return commands.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
