"""The terminal front end: `python -m bot console` and `python -m bot ask`."""

from __future__ import annotations

import argparse
from typing import Any

from bot.agent import CliCommand


def _console_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", help="send plain lines to this agent (e.g. hotel, proofread)")
    parser.add_argument("--thread", default="console", help="conversation name (default: console)")


def _ask_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--thread", help="conversation name; the same name continues the conversation")
    parser.add_argument("--user", default="console-user", help="user id")
    parser.add_argument("--attach", action="append", default=[], metavar="PATH", help="attach a file")
    parser.add_argument("--json", action="store_true", help="print one JSON object per stream event")
    parser.add_argument("--resume", metavar="VALUE",
                        help="answer the question the conversation (--thread) is waiting on, as a button press would")
    parser.add_argument("text", nargs="*", help="the message, e.g. '/hotel Paris next weekend'")


async def _console(app: Any, args: argparse.Namespace) -> int:
    from adapters.console.app import chat

    return await chat(app, agent=args.agent, thread=args.thread)


async def _ask(app: Any, args: argparse.Namespace) -> int:
    from adapters.console.app import ask

    if args.resume is None and not args.text:
        print("ask: give a message, or --resume VALUE with --thread")
        return 2
    if args.resume is not None and (args.text or not args.thread):
        print("ask: --resume answers a waiting conversation: give --thread NAME and no message")
        return 2
    return await ask(app, " ".join(args.text), thread=args.thread, user=args.user, attach=args.attach,
                     as_json=args.json, resume=args.resume)


CLI_COMMANDS = (
    CliCommand("console", "interactive terminal chat", _console, _console_args, interactive=True),
    CliCommand("ask", "one turn, then exit", _ask, _ask_args, interactive=True),
)
