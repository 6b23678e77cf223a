"""Discord's application commands, from the command table: the schema `--sync-commands` sends, and
an interaction's options back into a command's name, text and files."""

from __future__ import annotations

from typing import Any

from bot.commands import Command, CommandTable

STRING, ATTACHMENT = 3, 11  # Discord's option types
GUILD, BOT_DM, PRIVATE_CHANNEL = 0, 1, 2  # interaction contexts


def command_schema(command: Command) -> dict[str, Any]:
    options = sorted(command.options, key=lambda o: not o.required)  # Discord wants required ones first
    return {
        "name": command.name,
        "description": command.description,
        **({"description_localizations": {"ja": command.description_ja}} if command.description_ja else {}),
        "type": 1,
        "options": [
            {"type": ATTACHMENT if o.kind == "file" else STRING, "name": o.name, "description": o.description,
             "required": o.required}
            for o in options
        ],
        "contexts": [GUILD, BOT_DM, PRIVATE_CHANNEL],
        "integration_types": [0],
    }


def commands_schema(table: CommandTable) -> list[dict[str, Any]]:
    """Every command in the table, as a bulk overwrite of the application's commands."""
    return [command_schema(command) for command in table]


def command_input(data: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    """An interaction's command: its name, the text of its string options, its attachments' metadata."""
    options = data.get("options") or []
    text = " ".join(str(o.get("value") or "") for o in options if o.get("type") == STRING).strip()
    resolved = (data.get("resolved") or {}).get("attachments") or {}
    files = [resolved[str(o["value"])] for o in options if o.get("type") == ATTACHMENT and str(o.get("value")) in resolved]
    return str(data.get("name") or ""), text, files
