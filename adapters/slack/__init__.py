"""The Slack front end: `python -m bot slack [--socket]` serves it; `--manifest` prints the app
manifest with every command in the command table."""

from __future__ import annotations

import argparse
from typing import Any

from bot.agent import CliCommand


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--socket", action="store_true", help="Socket Mode (needs SLACK_APP_TOKEN)")
    parser.add_argument("--manifest", action="store_true", help="print the Slack app manifest and exit")
    parser.add_argument("--url", default=None, help="with --manifest: the public URL the bot is served at")


async def _slack(app: Any, args: argparse.Namespace) -> int:
    if args.manifest:
        from adapters.slack.manifest import PLACEHOLDER_URL, manifest_yaml

        print(manifest_yaml(app.commands, url=args.url or PLACEHOLDER_URL, socket_mode=args.socket), end="")
        return 0
    from adapters.slack.serve import serve

    await serve(app, socket=args.socket)
    return 0


CLI_COMMANDS = (
    CliCommand(
        "slack", "run the Slack bot (HTTP Events API on $PORT, or --socket)", _slack, _args,
        quiet_loggers=("slack_bolt.App",),
    ),
)
