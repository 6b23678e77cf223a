"""A new agent is one package: a plugin agent defined outside the project gets its command in the
command table, /help, the Slack manifest, Slack itself and the CLI, with no core or adapter edit."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import yaml

from adapters.slack.manifest import manifest_yaml
from agents.registry import registered_agents
from bot.agent import TurnInput
from bot.commands import CommandTable
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.runtime import ConversationRuntime

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "tests.plugins.todo:TodoAgent"


def test_a_plugin_agent_joins_the_command_table_and_the_slack_manifest() -> None:
    commands = CommandTable.of(registered_agents(PLUGIN))
    todo = commands.get("/todo")
    assert todo is not None and todo.agent == "todo" and todo.description == "Keep a to-do list"
    slash = yaml.safe_load(manifest_yaml(commands))["features"]["slash_commands"]
    assert {"command": "/todo", "description": "Keep a to-do list", "should_escape": False,
            "usage_hint": "buy milk", "url": "https://concierge.example.com/slack/events"} in slash


async def test_a_plugin_agent_is_listed_in_help_and_answers_its_command(settings: Settings) -> None:
    async with await ConversationRuntime.open(settings, agents=registered_agents(PLUGIN)) as runtime:
        key = ConversationKey.console("todo")
        help_events = [e async for e in runtime.handle(key, TurnInput.typed("/help"))]
        assert isinstance(help_events[-1], Final) and "`/todo` — Keep a to-do list" in help_events[-1].text
        first = [e async for e in runtime.handle(key, TurnInput(text="buy milk", command="todo"))]
        second = [e async for e in runtime.handle(key, TurnInput(text="call Ann"))]  # the thread's agent
        assert isinstance(second[-1], Final) and second[-1].data == {"items": ["buy milk", "call Ann"]}
        assert isinstance(first[-1], Final)


async def test_the_cli_prints_a_manifest_with_the_plugin_command(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "SLACK_"))}
    env.update(CONCIERGE_DATA_DIR=str(tmp_path), CONCIERGE_AGENT_PLUGINS=PLUGIN)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "slack", "--manifest", "--url", "https://bot.example.org",
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, err.decode()
    commands = {c["command"]: c for c in yaml.safe_load(out)["features"]["slash_commands"]}
    assert commands["/todo"]["url"] == "https://bot.example.org/slack/events"
    assert {"/hotel", "/proofread", "/chat", "/reset", "/help"} <= set(commands)
