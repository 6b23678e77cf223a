"""The agent registry: the built-in agents (each package's agent.py defines AGENT), plus plugins
named in CONCIERGE_AGENT_PLUGINS."""

from __future__ import annotations

from bot.agent import AgentDefinition
from bot.plugins import optional_modules, plugins

AGENT_PACKAGES = ("hotel", "shopping", "proofread", "chat")  # one not built yet is skipped


def registered_agents(plugin_specs: str = "") -> list[AgentDefinition]:
    modules = optional_modules(f"agents.{package}.agent" for package in AGENT_PACKAGES)
    return [module.AGENT for module in modules] + plugins(plugin_specs)
