"""The platform registry: each package under adapters/ exports CLI_COMMANDS, its `python -m bot`
sub-commands (a package not built yet is skipped), plus platforms from other packages named in
CONCIERGE_PLATFORM_PLUGINS ("module" or "module:ATTRIBUTE", CLI_COMMANDS by default)."""

from __future__ import annotations

from bot.agent import CliCommand
from bot.plugins import optional_modules, plugins

PLATFORM_PACKAGES = ("console", "slack", "discord")


def platform_commands(plugin_specs: str = "") -> list[CliCommand]:
    built_in = [c for module in optional_modules(f"adapters.{p}" for p in PLATFORM_PACKAGES) for c in module.CLI_COMMANDS]
    return built_in + [c for commands in plugins(plugin_specs, "CLI_COMMANDS", setting="CONCIERGE_PLATFORM_PLUGINS") for c in commands]
