"""The agent registry: which agent answers a slash command or a routed intent."""

from __future__ import annotations

import importlib

from bot.agent import AgentDefinition

# Packages under agents/ that export AGENT; a package not present (not built yet) is skipped.
AGENT_PACKAGES = ("hotel", "shopping", "proofread")


def registered_agents() -> list[AgentDefinition]:
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
    return found


def route_by_intent(text: str, agents: list[AgentDefinition]) -> AgentDefinition | None:
    """The agent whose intent words best match `text` (None: small talk)."""
    lowered = text.lower()
    best: tuple[int, AgentDefinition] | None = None
    for agent in agents:
        score = sum(1 for word in agent.intent_words if word.lower() in lowered)
        if score and (best is None or score > best[0]):
            best = (score, agent)
    return best[1] if best else None
