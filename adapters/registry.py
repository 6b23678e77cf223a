"""The platform registry: each package under adapters/ exports CLI_COMMANDS, its `python -m bot`
sub-commands; a package not built yet is skipped."""

from __future__ import annotations

from bot.agent import CliCommand
from bot.plugins import optional_modules

PLATFORM_PACKAGES = ("console", "slack", "discord")


def platform_commands() -> list[CliCommand]:
    return [c for module in optional_modules(f"adapters.{p}" for p in PLATFORM_PACKAGES) for c in module.CLI_COMMANDS]
