"""`python -m bot`: the core's commands (worker, data seed) plus those the platforms and agents
bring (console, ask, slack, discord, data ingest…), built from what the entry module wires."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable, Sequence

from bot.agent import AgentDefinition, CliCommand
from bot.app import App
from bot.config import ConfigError, Settings, load_settings
from bot.loop import run
from bot.sqldb import DatabaseError, configure_pool_size
from bot.storage import prune_database
from bot.supervisor import stop_signal


async def _worker(app: App, args: argparse.Namespace) -> int:
    async with stop_signal() as stop:
        retention = asyncio.create_task(run_retention(app.settings, stop), name="retention")
        try:
            await app.work(stop)
        finally:
            retention.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await retention
    return 0


async def run_retention(settings: Settings, stop: asyncio.Event) -> None:
    """The worker's retention job: `data prune` now, then every CONCIERGE_RETENTION_INTERVAL
    seconds, until `stop` is set. A failed run is logged; the next one tries again."""
    while not stop.is_set():
        try:
            report = await prune_database(settings)
            log.info("retention: %s", report.summary())
        except Exception:
            log.exception("retention run failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=settings.retention_interval)


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be a number of days, 0 or more (0 keeps threads for ever), not {text!r}")
    return value


def _prune_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ttl", type=_days, metavar="DAYS",
                        help="forget conversations idle this many days (default CONCIERGE_THREAD_TTL_DAYS; 0: never)")
    parser.add_argument("--dry-run", action="store_true", help="report what would be removed, remove nothing")


async def _prune(app: App, args: argparse.Namespace) -> int:
    report = await prune_database(app.settings, ttl_days=args.ttl, dry_run=args.dry_run)
    print(report.summary())
    return 0


async def _seed(app: App, args: argparse.Namespace) -> int:
    done = await app.seed()
    print("\n".join(done) if done else "demo data already seeded")
    return 0


CORE_COMMANDS = (
    CliCommand("worker", "background worker: every agent's jobs (e.g. hotel availability refresh)", _worker),
    CliCommand("seed", "load every agent's demo data (idempotent)", _seed, group="data"),
    CliCommand(
        "prune", "retention: keep each conversation's latest checkpoint, forget conversations idle past the TTL",
        _prune, _prune_options, group="data",
    ),
)
GROUPS = {"data": "data management"}
log = logging.getLogger(__name__)


def parser_for(commands: Sequence[CliCommand]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Concierge chat bot")
    sub = parser.add_subparsers(dest="command", required=True)
    groups: dict[str, argparse._SubParsersAction] = {}
    for command in commands:
        where = sub
        if command.group:
            if command.group not in groups:
                group = sub.add_parser(command.group, help=GROUPS.get(command.group, command.group))
                groups[command.group] = group.add_subparsers(dest="group_command", required=True)
            where = groups[command.group]
        cli = where.add_parser(command.name, help=command.help)
        command.configure(cli)
        cli.set_defaults(cli_command=command)
    return parser


def _logging(settings: Settings, command: CliCommand) -> None:
    level = settings.log_level
    if command.interactive and level == "INFO":
        level = "WARNING"  # keep the terminal for the conversation
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("httpx", "httpcore", "aiosqlite", "openai", *command.quiet_loggers):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))


def main(
    argv: list[str] | None = None,
    *,
    agents: Callable[[Settings], Sequence[AgentDefinition]],
    platforms: Callable[[Settings], Sequence[CliCommand]] = lambda settings: (),
) -> int:
    """Parse the command line, load settings, agents and platforms, run the chosen command."""
    try:
        settings = load_settings()
        configure_pool_size(settings.db_pool_size)
        app = App(settings, agents(settings), platforms(settings))
        commands = [*app.cli_commands(), *CORE_COMMANDS]
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    args = parser_for(commands).parse_args(argv)
    command: CliCommand = args.cli_command
    _logging(settings, command)
    try:
        return run(command.run(app, args), settings.event_loop)
    except (ConfigError, DatabaseError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
