"""The Slack app manifest: manifest.yaml's template with a slash command for every command in the
command table, so a new agent's command reaches Slack without an edit here."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from bot.commands import CommandTable

TEMPLATE = Path(__file__).with_name("manifest.yaml")
PLACEHOLDER_URL = "https://concierge.example.com"
EVENTS_PATH = "/slack/events"  # slash commands, events and interactivity all arrive here


def manifest(commands: CommandTable, *, url: str = PLACEHOLDER_URL, socket_mode: bool = False) -> dict[str, Any]:
    """The manifest as a dict; `url` is where `python -m bot slack` is reachable (HTTP mode)."""
    data: dict[str, Any] = copy.deepcopy(yaml.safe_load(TEMPLATE.read_text(encoding="utf-8")))
    events = url.rstrip("/") + EVENTS_PATH
    slash = []
    for command in commands:
        entry: dict[str, Any] = {"command": command.slash, "description": command.description, "should_escape": False}
        if command.usage:
            entry["usage_hint"] = command.usage[:1000]
        if not socket_mode:
            entry["url"] = events
        slash.append(entry)
    data["features"]["slash_commands"] = slash
    settings = data["settings"]
    settings["socket_mode_enabled"] = socket_mode
    if socket_mode:
        settings["event_subscriptions"].pop("request_url", None)
        settings["interactivity"].pop("request_url", None)
    else:
        settings["event_subscriptions"]["request_url"] = events
        settings["interactivity"]["request_url"] = events
    return data


def manifest_yaml(commands: CommandTable, **options: Any) -> str:
    return yaml.safe_dump(manifest(commands, **options), sort_keys=False, allow_unicode=True)
