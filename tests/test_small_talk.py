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

        assert (await reply("天気はどう？", "ja")).startswith("オフラインのモデルで動いているため")
        assert (await reply("what's the weather in Paris?", "en")).startswith("I'm running on the offline model")


async def _replies(tmp_path: Path, agents: Sequence[AgentDefinition], *texts: str) -> list[str]:
    from bot.agent import TurnInput
    from bot.config import load_settings
    from bot.conversation import ConversationKey
    from bot.events import Final
    from bot.runtime import ConversationRuntime

    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", _env_file=None)
    out = []
    async with await ConversationRuntime.open(settings, agents=agents) as runtime:
        for i, text in enumerate(texts):
            events = [e async for e in runtime.handle(ConversationKey.console(f"t{i}"), TurnInput(text=text, command="chat"))]
            assert isinstance(events[-1], Final)
            out.append(events[-1].text)
    return out


async def test_what_can_you_do_lists_the_commands_of_this_bot(tmp_path: Path) -> None:
    """The /chat command's own example ("what can you do?") got "Type /help…" on the offline model."""
    from agents.hotel.agent import AGENT as HOTEL

    english, japanese, hello, can_you, thanks = await _replies(
        tmp_path, [ChatAgent(), HOTEL], "what can you do?", "何ができますか？", "hello there", "can you book flights?",
        "thanks!",
    )
    assert english == (f"Here is what I can help with:\n• `/hotel` — {HOTEL.summary}\nType /help for an example of each.")
    assert japanese == "使えるコマンド: `/hotel`。/help でそれぞれの例を確認できます。"
    assert hello.startswith("Hi! Here is what I can help with:") and "/shop" not in hello
    assert can_you.startswith("On the offline model I can only do what these commands do.")
    assert thanks == "You're welcome! Anything else I can help with?"


async def test_a_description_with_parentheses_is_listed_whole(tmp_path: Path) -> None:
    from agents.proofread.agent import AGENT as PROOFREAD

    (listed,) = await _replies(tmp_path, [ChatAgent(), PROOFREAD], "what can you do?")
    assert f"• `/proofread` — {PROOFREAD.summary}\n" in listed and PROOFREAD.summary.endswith(")")


async def test_english_words_against_japanese_are_read(tmp_path: Path) -> None:
    """「thanksです」 and 「commandsを教えて」 got the fallback: no `\\b` between s and で."""
    thanks, commands = await _replies(tmp_path, [ChatAgent()], "thanksです", "commandsを教えて")
    assert thanks.startswith("どういたしまして") and commands.startswith("使えるコマンド")
