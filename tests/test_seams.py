"""The core's seams: the command table, per-agent history windows, background turns stopped on
shutdown and resumed afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START

from agents.chat.agent import ChatAgent
from agents.hotel.agent import HotelAgent
from bot.agent import TurnInput
from bot.app import App
from bot.commands import Command, CommandError, CommandOption, CommandTable
from bot.config import ConfigError, Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Failure, Final, Status, StreamEvent
from bot.history import BoundedStateGraph, add_bounded_messages
from bot.runtime import ConversationRuntime
from bot.supervisor import TaskSupervisor
from tests.support import agents as support
from tests.support.agents import ConfirmAgent, EchoAgent


async def collect(events: Any) -> list[StreamEvent]:
    return [e async for e in events]


# --- settings ------------------------------------------------------------------------------------
def test_an_agents_settings_come_from_the_same_sources_as_the_cores(tmp_path: Any) -> None:
    """CONCIERGE_HOTEL_* given where the core's settings are built reach the hotel agent, as SLACK_*
    reach the Slack adapter (Settings.section); a bad one is named."""
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_HOTEL_SEARCH_LIMIT=3, SLACK_BOT_TOKEN="xoxb-kept-aside", _env_file=None
    )
    hotel = HotelAgent()
    assert App(settings, [hotel]).env(hotel).agent_settings.search_limit == 3
    # The overrides kept for `section` are never shown: not in the settings' repr nor their dump.
    assert "xoxb-kept-aside" not in repr(settings) + settings.model_dump_json()
    with pytest.raises(ConfigError, match="CONCIERGE_HOTEL_SEARCH_LIMIT"):
        HotelAgent().load_settings(load_settings(CONCIERGE_HOTEL_SEARCH_LIMIT=99, _env_file=None))


# --- the command table ---------------------------------------------------------------------------
def test_the_command_table_lists_agents_then_built_ins_and_finds_names_and_aliases() -> None:
    table = CommandTable.of([EchoAgent(), ConfirmAgent()])
    assert [c.slash for c in table] == ["/echo", "/confirm", "/reset", "/help"]
    assert table.get("/ECHO") is table.get("echo") is table.for_agent("echo")
    assert table.get("/new") is table.get("reset")
    assert table.get("/nope") is None
    assert table.turn("/echo hi there", user_id="U1") == TurnInput(text="hi there", command="echo", user_id="U1")
    assert table.turn("/usr/bin is a folder") == TurnInput(text="/usr/bin is a folder")
    assert table.parse("/nope x") == ("nope", "x") and table.parse("plain") == (None, "plain")


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (Command("Bad Name", "x"), "must match"),
        (Command("ok", "x" * 101), "descriptions take"),
        (Command("ok", "fine", options=(CommandOption("Query!", "x"),)), "must match"),
        (Command("reset", "again"), "defined twice"),
    ],
)
def test_commands_no_platform_would_accept_are_refused_at_start_up(command: Command, problem: str) -> None:
    with pytest.raises(CommandError, match=problem):
        CommandTable((*CommandTable.of([]).commands, command))


def test_help_names_every_command_with_an_example_or_just_the_one_asked_about() -> None:
    table = CommandTable.of([EchoAgent()])
    full = table.help_text()
    assert "• `/echo` — echoes, or looks things up — e.g. `/echo TEXT`" in full
    assert all(f"`{c.slash}`" in full for c in table)
    assert table.help_text("/echo").count("•") == 1


def test_help_and_usage_in_japanese_where_a_command_says_it_in_japanese() -> None:
    from agents.registry import registered_agents

    table = CommandTable.of(registered_agents())
    ja = table.help_text(language="ja")
    assert ja.startswith("できること:") and "• `/hotel` — 都市・日程・予算などでホテルを探し" in ja
    assert "例: `/shop ワイヤレスイヤホン 1万円以下`" in ja and "• `/reset` — 会話を最初からやり直します" in ja
    echo = CommandTable.of([EchoAgent()])  # an agent with no Japanese text is shown in English
    assert "• `/echo` — echoes, or looks things up — 例: `/echo TEXT`" in echo.help_text(language="ja")
    shop = table.get("shop")
    assert shop is not None and shop.usage_line("ja") == "使い方: `/shop ワイヤレスイヤホン 1万円以下`"
    assert shop.usage_line() == "Usage: `/shop wireless earbuds under $100`"
    with pytest.raises(CommandError, match="descriptions take"):
        CommandTable((Command("ok", "fine", description_ja="長" * 101),))


async def test_help_is_in_the_users_language(settings: Settings) -> None:
    from agents.registry import registered_agents

    async with await ConversationRuntime.open(settings, agents=registered_agents()) as runtime:
        async def last(turn: TurnInput, thread: str) -> StreamEvent:
            return [e async for e in runtime.handle(ConversationKey.console(thread), turn)][-1]

        ja = await last(TurnInput(text="", command="help", locale="ja-JP"), "h1")
        en = await last(TurnInput(text="", command="help", locale="en-US"), "h2")
        assert isinstance(ja, Final) and ja.text.startswith("できること:")
        assert isinstance(en, Final) and en.text.startswith("Here is what I can do:")
        usage = await last(TurnInput(text="", command="hotel", locale="ja"), "h3")
        assert isinstance(usage, Failure) and usage.user_message == "使い方: `/hotel 京都 来週末 2名 1泊2万円以下`"


# --- history windows -----------------------------------------------------------------------------
class WindowState(TypedDict):
    messages: Annotated[list[AnyMessage], add_bounded_messages]


async def test_each_agent_keeps_its_own_history_window() -> None:
    def graph(window: int) -> Any:
        def reply(state: WindowState) -> dict[str, Any]:  # annotated with the base state, as agents do
            return {"messages": [AIMessage("ok")]}

        builder = BoundedStateGraph(WindowState, window)
        builder.add_node("reply", reply)
        builder.add_edge(START, "reply")
        builder.add_edge("reply", END)
        return builder.compile(checkpointer=InMemorySaver())

    short, long = graph(4), graph(12)
    for i in range(10):
        for g in (short, long):
            await g.ainvoke({"messages": [HumanMessage(f"turn {i}")]}, {"configurable": {"thread_id": "t"}})
    short_messages = (await short.aget_state({"configurable": {"thread_id": "t"}})).values["messages"]
    long_messages = (await long.aget_state({"configurable": {"thread_id": "t"}})).values["messages"]
    assert len(short_messages) == 4 and isinstance(short_messages[0], HumanMessage)
    assert len(long_messages) == 12 and long_messages[-2].content == "turn 9"


async def test_the_runtime_hands_an_agent_its_window_or_the_default(settings: Settings) -> None:
    small = ChatAgent()
    small.history_window = 6
    async with await ConversationRuntime.open(settings, agents=[small, EchoAgent()]) as runtime:
        assert runtime.deps(small).history_window == 6
        assert runtime.deps(runtime.agents()[1]).history_window == settings.history_window
        key = ConversationKey.console("window")
        for i in range(8):
            await collect(runtime.handle(key, TurnInput(text=f"hello {i}", command="chat")))
        graph = await runtime._graph(small)
        state = await graph.aget_state(runtime._config(key, small, 0))
        assert len(state.values["messages"]) == 6


# --- shutdown ------------------------------------------------------------------------------------
async def test_close_lets_short_work_finish_and_stops_the_rest() -> None:
    tasks = TaskSupervisor()
    done: list[str] = []
    stopped = asyncio.Event()

    async def quick() -> None:
        await asyncio.sleep(0.01)
        done.append("quick")

    async def endless() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    tasks.spawn(quick(), name="quick")
    tasks.spawn(endless(), name="endless")
    await tasks.close(within=0.5)
    assert done == ["quick"] and stopped.is_set() and len(tasks) == 0


async def test_a_turn_stopped_by_shutdown_is_marked_and_resumes_with_a_valid_history(settings: Settings) -> None:
    key = ConversationKey.console("shutdown")
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as runtime:
        tasks = TaskSupervisor()
        seen: list[StreamEvent] = []

        async def turn() -> None:
            async for event in runtime.handle(key, TurnInput.typed("/echo look up slow things")):
                seen.append(event)

        support.TOOL_DELAY["seconds"] = 30
        try:
            tasks.spawn(turn(), name="turn")
            for _ in range(400):  # wait until the tool is running
                record = await runtime.app_db.get_thread(key.thread_id)
                if record is not None and record.state == "tool_call":
                    break
                await asyncio.sleep(0.025)
            await tasks.close(within=0.1)
        finally:
            support.TOOL_DELAY["seconds"] = 0
        record = await runtime.app_db.get_thread(key.thread_id)
        assert record is not None and record.state == "error" and record.note == "interrupted"
        assert not any(isinstance(e, Final) for e in seen)

    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as runtime:
        events = await collect(runtime.handle(key, TurnInput.typed("/echo look up fast things")))
        assert any(isinstance(e, Status) and "interrupted" in e.text for e in events)
        assert isinstance(events[-1], Final) and "Notes about fast things" in events[-1].text
        record = await runtime.app_db.get_thread(key.thread_id)
        assert record is not None and record.state == "idle"


async def stop_at_its_first_checkpoint(runtime: ConversationRuntime, key: ConversationKey, turn: TurnInput) -> None:
    """Run `turn` until it writes its first checkpoint, and stop it there, as a process killed at
    that moment would be (the write never happens; the turn is marked interrupted)."""
    stuck = asyncio.Event()

    async def never_writes(*args: Any, **kwargs: Any) -> Any:
        stuck.set()
        await asyncio.Event().wait()

    runtime.checkpoints.saver.aput = never_writes  # type: ignore[method-assign]
    tasks = TaskSupervisor()
    tasks.spawn(collect(runtime.handle(key, turn)), name="turn")
    await asyncio.wait_for(stuck.wait(), timeout=30)
    await tasks.close(within=0.1)


async def test_a_turn_stopped_before_its_input_was_checkpointed_runs_its_own_request_on_recovery(
    settings: Settings,
) -> None:
    """Stopped after the turn began but before its input reached the checkpoint (a process killed
    at that moment): the last checkpoint is the turn before it, so continuing from it would answer
    that earlier request again. Recovery runs the stopped turn's own request instead, once."""
    key = ConversationKey.console("stopped-early")
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as runtime:
        first = await collect(runtime.handle(key, TurnInput.typed("/echo look up apples")))
        assert isinstance(first[-1], Final) and "apples" in first[-1].text

        await stop_at_its_first_checkpoint(runtime, key, TurnInput.typed("/echo look up pears"))
        record = await runtime.app_db.get_thread(key.thread_id)
        assert record is not None and record.note == "interrupted" and record.turn == 2

    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as runtime:
        assert key.thread_id in runtime.interrupted_at_start
        events = await collect(runtime.recover(key))
        final = events[-1]
        assert isinstance(final, Final) and "pears" in final.text and "apples" not in final.text
        assert await collect(runtime.recover(key)) == []  # answered once


async def test_a_first_turn_stopped_before_any_checkpoint_runs_its_request_on_recovery(settings: Settings) -> None:
    """The chat agent checkpoints once, as its run ends: its first turn stopped mid-run leaves no
    checkpoint at all, so there is nothing to continue from. Recovery runs the request, once."""
    key = ConversationKey.console("stopped-first")
    async with await ConversationRuntime.open(settings, agents=[ChatAgent()]) as runtime:
        await stop_at_its_first_checkpoint(runtime, key, TurnInput(text="hello there", command="chat"))

    async with await ConversationRuntime.open(settings, agents=[ChatAgent()]) as runtime:
        assert key.thread_id in runtime.interrupted_at_start
        events = await collect(runtime.recover(key))
        assert isinstance(events[-1], Final), events[-1]
        assert await collect(runtime.recover(key)) == []  # answered once


async def test_an_agent_of_one_step_writes_one_checkpoint_a_turn(settings: Settings) -> None:
    """`durability = "exit"` (the chat agent): each turn leaves one checkpoint, stamped with its
    turn, where LangGraph's default writes one before and after every step."""
    async with await ConversationRuntime.open(settings, agents=[ChatAgent()]) as runtime:
        key = ConversationKey.console("one-write")
        for i in range(3):
            events = await collect(runtime.handle(key, TurnInput(text=f"hello {i}", command="chat")))
            assert isinstance(events[-1], Final)
        chat = runtime._agents["chat"]
        graph = await runtime._graph(chat)
        history = [c async for c in graph.aget_state_history(runtime._config(key, chat, 0))]
        assert [c.metadata.get("concierge_turn") for c in history if c.metadata] == [3, 2, 1]


async def test_tools_an_agent_narrates_get_no_progress_line_of_their_own() -> None:
    import io

    from adapters.console.app import TerminalSurface
    from bot.events import ToolFinished, ToolStarted
    from bot.render import TurnRenderer

    async def turn(narrated: bool) -> list[str]:
        out = io.StringIO()  # not a terminal: every progress line is printed on its own line

        async def events() -> AsyncIterator[StreamEvent]:
            yield ToolStarted(name="search_hotels", args_summary="city=Osaka", narrated=narrated)
            yield Status(text="大阪のホテルを検索しています…")
            yield ToolFinished(name="search_hotels", summary="30 hotels available in Osaka", narrated=narrated)
            yield Final(text="おすすめ: …")

        await TurnRenderer(TerminalSurface(out), working="").run(events())
        return out.getvalue().splitlines()

    # The first progress line is shown at once (later ones may be coalesced, latest text wins).
    assert await turn(narrated=True) == ["… 大阪のホテルを検索しています…", "おすすめ: …"]
    assert (await turn(narrated=False))[0] == "… Using search_hotels (city=Osaka)…"


async def test_input_refusals_are_in_the_users_language(settings: Settings) -> None:
    from agents.registry import registered_agents
    from bot.agent import IncomingFile

    binary = IncomingFile("photo.md", b"\x89PNG\x00\x00")
    async with await ConversationRuntime.open(settings, agents=registered_agents()) as runtime:
        async def refusal(turn: TurnInput, thread: str) -> str:
            last = [e async for e in runtime.handle(ConversationKey.console(thread), turn)][-1]
            assert isinstance(last, Failure)
            return last.user_message

        ja = TurnInput(text="", command="proofread", attachments=(binary,), locale="ja-JP")
        assert await refusal(ja, "r1") == "`photo.md` はバイナリファイルのようです。テキストファイルを添付してください。"
        assert await refusal(ja.but(locale="en-US"), "r2") == "`photo.md` looks like a binary file; please attach a text file."
        assert (await refusal(TurnInput(text="", command="proofread", locale="ja"), "r3")).startswith("/proofread の後に記事を")
        assert (await refusal(TurnInput(text="", locale="ja"), "r4")).startswith("メッセージが空です。")


async def test_a_japanese_users_next_message_after_a_restart_is_told_of_it_in_japanese(settings: Settings) -> None:
    key = ConversationKey.console("ja-restart")
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as runtime:
        await stop_at_its_first_checkpoint(runtime, key, TurnInput.typed("/echo ねこを調べて"))
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as runtime:
        events = await collect(runtime.handle(key, TurnInput.typed("/echo いぬを調べて")))
        assert any(isinstance(e, Status) and e.text.startswith("前回の依頼は再起動で中断されました") for e in events), events
        assert isinstance(events[-1], Final)
