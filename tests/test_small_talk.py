"""Small talk advertises only the commands this bot has: the chat agent's prompt comes from the
command table, so a bot without /shop never offers it, and every agent's command appears."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agents.chat.agent import ChatAgent
from agents.chat.graph import system_prompt
from agents.registry import registered_agents
from bot.agent import AgentDefinition, AgentDeps
from bot.commands import CommandTable


def _prompt(agents: Sequence[AgentDefinition]) -> str:
    deps = AgentDeps(settings=None, models=None, checkpointer=None, app_db=None,  # type: ignore[arg-type]
                     commands=CommandTable.of(agents))
    return system_prompt(deps)


def test_the_prompt_names_every_agent_command_and_no_other() -> None:
    agents = registered_agents()
    prompt = _prompt(agents)
    assert {a.command for a in agents if a.name != "chat"} == {c for c in ("/hotel", "/shop", "/proofread") if f"`{c}`" in prompt}
    without_shop = _prompt([a for a in agents if a.name != "shop"])
    assert "/shop" not in without_shop and "`/hotel`" in without_shop
    assert "`/chat`" not in _prompt([ChatAgent()])


async def test_small_talk_on_the_offline_model_is_answered_in_the_language_it_was_written_in(tmp_path: Path) -> None:
    from bot.agent import TurnInput
    from bot.config import load_settings
    from bot.conversation import ConversationKey
    from bot.events import Final
    from bot.runtime import ConversationRuntime

    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", _env_file=None)
    async with await ConversationRuntime.open(settings, agents=[ChatAgent()]) as runtime:
        async def reply(text: str, thread: str) -> str:
            events = [e async for e in runtime.handle(ConversationKey.console(thread), TurnInput(text=text, command="chat"))]
            assert isinstance(events[-1], Final)
            return events[-1].text

        assert (await reply("こんにちは", "ja")).startswith("オフラインのモデルで動いているため")
        assert (await reply("hello there", "en")).startswith("I'm running on the offline model")
