"""The composition root: the one module that wires the core, the agents and the platforms."""

from adapters.registry import platform_commands
from agents.registry import registered_agents
from bot.cli import main

raise SystemExit(
    main(
        agents=lambda settings: registered_agents(settings.agent_plugins),
        platforms=lambda settings: platform_commands(settings.platform_plugins),
    )
)
