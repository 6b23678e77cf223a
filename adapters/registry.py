"""The platform registry: each package under adapters/ that exports CLI_COMMANDS (its `python -m
bot` sub-commands) is a platform; a package not present is skipped."""

from __future__ import annotations

import importlib

from bot.agent import CliCommand

PLATFORM_PACKAGES = ("console", "slack", "discord")


def platform_commands() -> list[CliCommand]:
    found: list[CliCommand] = []
    for package in PLATFORM_PACKAGES:
        name = f"adapters.{package}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        found.extend(getattr(module, "CLI_COMMANDS", ()))
    return found
