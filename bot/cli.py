"""The one entry point: `python -m bot console|ask|slack|discord|worker|data`."""

from __future__ import annotations

import argparse
import logging
import sys

from bot.config import ConfigError, Settings, load_settings
from bot.loop import run


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Concierge chat bot")
    sub = parser.add_subparsers(dest="command", required=True)

    console = sub.add_parser("console", help="interactive terminal chat")
    console.add_argument("--agent", help="send plain lines to this agent (hotel, shop, proofread)")
    console.add_argument("--thread", default="console", help="conversation name (default: console)")

    ask = sub.add_parser("ask", help="one turn, then exit")
    ask.add_argument("--thread", help="conversation name; the same name continues the conversation")
    ask.add_argument("--user", default="console-user", help="user id")
    ask.add_argument("--attach", action="append", default=[], metavar="PATH", help="attach a file")
    ask.add_argument("--json", action="store_true", help="print one JSON object per stream event")
    ask.add_argument("text", nargs="+", help="the message, e.g. '/hotel Paris next weekend'")

    slack = sub.add_parser("slack", help="run the Slack bot")
    slack.add_argument("--socket", action="store_true", help="Socket Mode (needs SLACK_APP_TOKEN)")

    discord = sub.add_parser("discord", help="run the Discord bot")
    discord.add_argument("--sync-commands", action="store_true")
    discord.add_argument("--guild")

    sub.add_parser("worker", help="background worker: keeps hotel availability and prices fresh")

    data = sub.add_parser("data", help="data management")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    data_sub.add_parser("seed", help="load the demo hotel data (idempotent)")
    return parser


def _logging(settings: Settings, command: str) -> None:
    level = settings.log_level
    if command in ("console", "ask") and level == "INFO":
        level = "WARNING"  # keep the terminal for the conversation
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("httpx", "httpcore", "aiosqlite", "openai", "slack_bolt.App", "discord"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))


async def _seed(settings: Settings, *, quiet: bool = False) -> int:
    from agents.hotel.seed import seed
    from agents.hotel.store import HotelStore

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = await HotelStore.open(settings.resolved_database_url)
    try:
        await store.setup()
        written = await seed(store)
    finally:
        await store.close()
    if written:
        print(f"hotels written: {written}")
    elif not quiet:
        print("hotel data already seeded")
    return 0


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "console":
        from adapters.console import chat

        await _seed(settings, quiet=True)  # the demo hotel data, on the first start only
        return await chat(settings, agent=args.agent, thread=args.thread)
    if args.command == "ask":
        from adapters.console import ask

        return await ask(
            settings, " ".join(args.text), thread=args.thread, user=args.user, attach=args.attach, as_json=args.json
        )
    if args.command == "slack":
        from adapters.slack import serve

        await serve(settings, socket=args.socket)
        return 0
    if args.command == "discord":
        print("The Discord adapter is not available in this version.", file=sys.stderr)
        return 2
    if args.command == "worker":
        from agents.hotel.refresh import run_worker

        await run_worker(settings)
        return 0
    if args.command == "data" and args.data_command == "seed":
        return await _seed(settings)
    return 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    _logging(settings, args.command)
    try:
        return run(_run(args, settings), settings.event_loop)
    except KeyboardInterrupt:
        return 130
