"""The agent registry: the built-in agent packages, plus plugins named in CONCIERGE_AGENT_PLUGINS."""

from __future__ import annotations

import importlib

from bot.agent import AgentDefinition

# Packages under agents/ whose agent.py defines AGENT; a package not present (not built yet) is skipped.
AGENT_PACKAGES = ("hotel", "shopping", "proofread", "chat")


def registered_agents(plugins: str = "") -> list[AgentDefinition]:
    """The built-in agents plus `plugins` ("module:ATTRIBUTE,…", from CONCIERGE_AGENT_PLUGINS)."""
    found: list[AgentDefinition] = []
    for package in AGENT_PACKAGES:
        name = f"agents.{package}"
        try:
            module = importlib.import_module(f"{name}.agent")
        except ModuleNotFoundError as exc:
            if exc.name in (name, f"{name}.agent"):
                continue
            raise
        found.append(module.AGENT)
    for spec in filter(None, (p.strip() for p in plugins.split(","))):
        module_name, _, attribute = spec.partition(":")
        plugin = getattr(importlib.import_module(module_name), attribute or "AGENT")
        found.append(plugin() if isinstance(plugin, type) else plugin)
    return found
