"""The Discord front end: `python -m bot discord` runs it; `--sync-commands [--guild ID]` registers
every command in the command table with Discord."""

from __future__ import annotations

import argparse
from typing import Any

from bot.agent import CliCommand


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sync-commands", action="store_true", help="register the slash commands, then exit")
    parser.add_argument("--guild", help="with --sync-commands: this guild only (immediate; for development)")
    parser.add_argument("--shards", type=int, help="run this many shards in this process (AutoShardedClient)")


async def _discord(app: Any, args: argparse.Namespace) -> int:
    from adapters.discord.serve import serve, sync_commands

    if args.sync_commands:
        return await sync_commands(app, args.guild)
    await serve(app, shards=args.shards)
    return 0


CLI_COMMANDS = (
    CliCommand("discord", "run the Discord bot (or --sync-commands)", _discord, _args, quiet_loggers=("discord",)),
)
