"""bot.tools.tool_node: LangGraph's ToolNode with per-turn limits and retry-then-degrade, run in a
small real graph (START → tools → END) on an AIMessage's tool calls."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.errors import NodeCancelledError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedState, ToolNode

from bot.events import Status
from bot.tools import admit, degraded, tool_node


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    used: dict[str, int]  # calls made earlier this turn, as an agent's turn record would hold them


def calls_used(state: State) -> dict[str, int]:
    return state.get("used") or {}


def call(name: str, n: int, /, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{name}_{n}", "type": "tool_call"}


async def run(node: ToolNode, *calls: dict[str, Any], used: dict[str, int] | None = None,
              ) -> tuple[dict[str, ToolMessage], list[str]]:
    """The ToolMessages by call id, and the Status texts written while the tools ran."""
    builder = StateGraph(State)
    builder.add_node("tools", node)
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    graph = builder.compile()
    update: State = {"messages": [HumanMessage("hi"), AIMessage("", tool_calls=list(calls))], "used": used or {}}
    statuses: list[str] = []
    final: Any = {}
    async for mode, chunk in graph.astream(update, stream_mode=["custom", "values"]):
        if mode == "custom" and isinstance(chunk, Status):
            statuses.append(chunk.text)
        elif mode == "values":
            final = chunk
    results = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in results] == [c["id"] for c in calls]  # one answer per call, in order
    return {m.tool_call_id: m for m in results}, statuses


class Searches:
    """A `search` tool that records the cities it was called with."""

    def __init__(self) -> None:
        self.cities: list[str] = []

        @tool
        async def search(city: str) -> str:
            """Search a city."""
            self.cities.append(city)
            await asyncio.sleep(0)
            return f"hotels in {city}"

        self.tool: BaseTool = search


async def no_sleep(_: float) -> None:
    return None


# --- limits ----------------------------------------------------------------------------------


async def test_same_named_calls_in_one_message_stop_at_the_limit() -> None:
    searches = Searches()
    node = tool_node([searches.tool], limits={"search": 2}, used=calls_used)

    results, _ = await run(node, call("search", 1, city="Paris"), call("search", 2, city="Rome"),
                           call("search", 3, city="Oslo"), call("search", 4, city="Bern"))

    assert sorted(searches.cities) == ["Paris", "Rome"]
    assert [results[f"call_search_{i}"].status for i in (1, 2)] == ["success", "success"]
    for i in (3, 4):
        refused = results[f"call_search_{i}"]
        assert refused.status == "error"
        assert refused.text == ("Not run: search is limited to 2 call(s) per turn and that is used up. "
                                "Answer now with the results you already have.")


async def test_calls_made_earlier_in_the_turn_count_against_the_limit() -> None:
    searches = Searches()
    node = tool_node([searches.tool], limits={"search": 2}, used=calls_used)

    results, _ = await run(node, call("search", 1, city="Paris"), call("search", 2, city="Rome"),
                           used={"search": 1})

    assert searches.cities == ["Paris"]
    assert results["call_search_1"].text == "hotels in Paris"
    assert results["call_search_2"].text.startswith("Not run: search is limited to 2 call(s)")

    _, _ = await run(node, call("search", 3, city="Oslo"), used={"search": 2})
    assert searches.cities == ["Paris"]


async def test_a_call_with_invalid_arguments_uses_up_no_call() -> None:
    searches = Searches()
    node = tool_node([searches.tool], limits={"search": 1}, used=calls_used)

    results, _ = await run(node, call("search", 1), call("search", 2, city="Rome"))

    assert results["call_search_1"].status == "error"
    assert results["call_search_2"].text == "hotels in Rome"
    assert searches.cities == ["Rome"]


def test_admit_counts_what_runs_and_names_what_is_refused() -> None:
    searches = Searches()
    calls = [call("search", 1), call("search", 2, city="A"), call("nope", 3), call("search", 4, city="B"),
             call("search", 5, city="C")]

    admission = admit(calls, {"search": searches.tool}, {"search": 2}, {"search": 1})  # type: ignore[arg-type]

    assert admission.counted == {"search": 1}
    assert admission.refused == {"call_search_4": 2, "call_search_5": 2}
    unlimited = admit(calls, {"search": searches.tool}, {}, {})  # type: ignore[arg-type]
    assert unlimited.counted == {"search": 3} and unlimited.refused == {}


# --- failures --------------------------------------------------------------------------------


async def test_a_failing_tool_is_retried_then_degraded_with_a_status() -> None:
    attempts: list[str] = []
    sleeps: list[float] = []

    @tool
    async def hotel_prices(city: str) -> str:
        """Prices in a city."""
        attempts.append(city)
        raise ConnectionError("price service down")

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    node = tool_node([hotel_prices], retries=2, sleep=sleep)
    results, statuses = await run(node, call("hotel_prices", 1, city="Paris"))

    assert attempts == ["Paris"] * 3 and sleeps == [0.05, 0.1]
    message = results["call_hotel_prices_1"]
    assert message.status == "error" and degraded(message)
    assert message.text.startswith("hotel_prices failed and returned no result.")
    assert statuses == ["hotel prices is unavailable right now; answering with what I have."]


async def test_a_tool_that_recovers_on_retry_answers_normally() -> None:
    attempts: list[int] = []

    @tool
    async def flaky(city: str) -> str:
        """Sometimes fails."""
        attempts.append(1)
        if len(attempts) == 1:
            raise TimeoutError
        return f"ok {city}"

    results, statuses = await run(tool_node([flaky], retries=1, sleep=no_sleep), call("flaky", 1, city="Rome"))

    assert len(attempts) == 2
    assert results["call_flaky_1"].text == "ok Rome" and results["call_flaky_1"].status == "success"
    assert not degraded(results["call_flaky_1"])
    assert statuses == []


async def test_an_unknown_tool_gets_an_error_message_the_model_can_read() -> None:
    searches = Searches()

    results, _ = await run(tool_node([searches.tool], limits={"search": 1}, used=calls_used),
                           call("book_flight", 1, to="Rome"), call("search", 2, city="Rome"))

    message = results["call_book_flight_1"]
    assert message.status == "error" and "book_flight is not a valid tool" in message.text and "search" in message.text
    assert searches.cities == ["Rome"]


async def test_invalid_arguments_get_an_error_message_and_no_retry() -> None:
    searches = Searches()
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    results, statuses = await run(tool_node([searches.tool], retries=2, sleep=sleep),
                                  call("search", 1, town="Paris"))

    message = results["call_search_1"]
    assert message.status == "error"
    assert message.text == "Invalid arguments for search: city: Field required"
    assert searches.cities == [] and sleeps == [] and statuses == []


async def test_cancellation_propagates_and_is_not_retried() -> None:
    started = asyncio.Event()
    attempts: list[int] = []

    @tool
    async def slow(city: str) -> str:
        """Takes forever."""
        attempts.append(1)
        started.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.create_task(run(tool_node([slow], retries=1, sleep=no_sleep), call("slow", 1, city="Rome")))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    await asyncio.wait({task}, timeout=5)
    if not task.done():  # the cancellation was swallowed: end the retry too, then fail
        task.cancel()
        await asyncio.wait({task}, timeout=5)
    assert task.cancelled()
    assert attempts == [1]


async def test_a_tool_raising_cancelled_error_is_not_retried_or_degraded() -> None:
    attempts: list[int] = []

    @tool
    async def cancelled(city: str) -> str:
        """Gets cancelled."""
        attempts.append(1)
        raise asyncio.CancelledError

    # LangGraph reports a CancelledError raised inside a node as that node's failure.
    with pytest.raises(NodeCancelledError) as failure:
        await run(tool_node([cancelled], retries=3, sleep=no_sleep), call("cancelled", 1, city="Rome"))
    assert isinstance(failure.value.__cause__, asyncio.CancelledError)
    assert attempts == [1]


# --- order -----------------------------------------------------------------------------------


def recorder(log: list[str]) -> BaseTool:
    @tool
    async def note(text: str, state: Annotated[dict, InjectedState]) -> str:
        """Write a note."""
        earlier = [m.text for m in state["messages"] if isinstance(m, ToolMessage)]
        log.append(f"start {text}")
        await asyncio.sleep(0.02 if text == "first" else 0)
        log.append(f"end {text}")
        return f"{text} after {earlier}"

    return note


async def test_sequential_calls_run_in_order_and_see_the_results_before_them() -> None:
    log: list[str] = []
    node = tool_node([recorder(log)], sequential=True)

    results, _ = await run(node, call("note", 1, text="first"), call("note", 2, text="second"),
                           call("note", 3, text="third"))

    assert log == ["start first", "end first", "start second", "end second", "start third", "end third"]
    assert results["call_note_1"].text == "first after []"
    assert results["call_note_2"].text == "second after ['first after []']"
    assert results["call_note_3"].text == "third after ['first after []', \"second after ['first after []']\"]"


async def test_calls_run_concurrently_by_default() -> None:
    log: list[str] = []

    results, _ = await run(tool_node([recorder(log)]), call("note", 1, text="first"), call("note", 2, text="second"))

    assert log.index("start second") < log.index("end first")
    assert results["call_note_2"].text == "second after []"


async def test_a_sequential_call_that_fails_does_not_block_the_next() -> None:
    seen: list[str] = []

    @tool
    async def step(n: int) -> str:
        """A step."""
        seen.append(str(n))
        if n == 1:
            raise ValueError("broken")
        return f"step {n}"

    results, _ = await run(tool_node([step], retries=0, sequential=True), call("step", 1, n=1), call("step", 2, n=2))

    assert seen == ["1", "2"]
    assert results["call_step_1"].status == "error" and results["call_step_2"].text == "step 2"
