"""The agent registry: which agent answers a slash command or a routed intent."""

from __future__ import annotations

import importlib

from bot.agent import AgentDefinition

# Packages under agents/ that export AGENT; a package not present (not built yet) is skipped.
AGENT_PACKAGES = ("hotel", "shopping", "proofread", "chat")
# The agent for text that no intent claims.
FALLBACK_AGENT = "chat"


def registered_agents(plugins: str = "") -> list[AgentDefinition]:
    """The built-in agents plus `plugins` ("module:ATTRIBUTE,…", from CONCIERGE_AGENT_PLUGINS)."""
    found: list[AgentDefinition] = []
    for package in AGENT_PACKAGES:
        name = f"agents.{package}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        agent = getattr(module, "AGENT", None)
        if agent is not None:
            found.append(agent)
    for spec in filter(None, (p.strip() for p in plugins.split(","))):
        module_name, _, attribute = spec.partition(":")
        plugin = getattr(importlib.import_module(module_name), attribute or "AGENT")
        found.append(plugin() if isinstance(plugin, type) else plugin)
    return found


def route_by_intent(text: str, agents: list[AgentDefinition]) -> AgentDefinition | None:
    """The agent whose intent words best match `text` (None: small talk)."""
    lowered = text.lower()
    best: tuple[int, AgentDefinition] | None = None
    for agent in agents:
        if agent.name == FALLBACK_AGENT:
            continue
        score = sum(1 for word in agent.intent_words if word.lower() in lowered)
        if score and (best is None or score > best[0]):
            best = (score, agent)
    return best[1] if best else None
