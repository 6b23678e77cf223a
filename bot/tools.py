"""The one way agents run tools: LangGraph's `ToolNode`, with per-turn call limits and
retry-then-degrade added through its `awrap_tool_call` hook.

    node = tool_node([search, details], limits={"search": 1}, retries=1, used=calls_this_turn)
    builder.add_node("tools", node)          # chatbot ⇄ tools, as in any LangGraph ReAct graph

What the model reads back, as a ToolMessage with status="error", when a call does not run:

- an unknown tool: ToolNode's own "Error: x is not a valid tool, try one of [...]";
- invalid arguments: "Invalid arguments for <tool>: <field>: <problem>; ..." (a pydantic
  ValidationError raised inside a tool is reported the same way: that is ToolNode's rule);
- over its per-turn limit: "Not run: <tool> is limited to N call(s) per turn and that is used up. ...";
- still failing after `retries` retries: "<tool> failed and returned no result. ...", and the user
  sees a Status "<tool name> is unavailable right now; answering with what I have.".

Cancellation and LangGraph interrupts always propagate. The core imports nothing from agents."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_stream_writer
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolInvocationError
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from bot.events import Status

log = logging.getLogger(__name__)
DEGRADED = "degraded"  # the artifact key of the ToolMessage standing for a tool that failed past its retries

__all__ = ["Admission", "admit", "degraded", "tool_node"]

Execute = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]]


@dataclass(frozen=True)
class Admission:
    """How per-turn limits apply to one AIMessage's tool calls (see `admit`)."""

    counted: dict[str, int]  # calls that run, by tool name: known tool, valid arguments, within limit
    refused: dict[str, int]  # id of each call over its limit → that limit


def admit(
    calls: Sequence[ToolCall],
    tools: Mapping[str, BaseTool],
    limits: Mapping[str, int],
    used: Mapping[str, int],
) -> Admission:
    """Apply per-turn `limits` to `calls` (one AIMessage's, in order), given the calls `used`
    earlier this turn. A call is refused when the calls of its tool already made this turn plus
    the admitted calls of that tool before it in the message reach the limit. Calls to unknown
    tools and calls with invalid arguments never run, so they use up nothing.

    A pure function of the message and the state: ToolNode runs the calls concurrently, and each
    call decides for itself, so they must all reach the same verdicts. Agents use it again after
    the ToolNode to count what ran."""
    counted: Counter[str] = Counter()
    refused: dict[str, int] = {}
    for call in calls:
        name = call["name"]
        tool = tools.get(name)
        if tool is None:
            continue
        limit = limits.get(name)
        if limit is not None and used.get(name, 0) + counted[name] >= limit:
            refused[str(call["id"])] = limit
        elif _valid_arguments(tool, call["args"]):
            counted[name] += 1
    return Admission(counted=dict(counted), refused=refused)


def tool_node(
    tools: Sequence[BaseTool],
    *,
    limits: Mapping[str, int] | None = None,
    retries: int = 1,
    used: Callable[[Any], Mapping[str, int]] | None = None,
    sequential: bool = False,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    name: str = "tools",
) -> ToolNode:
    """A ToolNode running `tools` for the last AIMessage in the state's `messages`.

    - `limits[name]` caps the calls of a tool per turn; `used(state)` gives the calls of each tool
      already made this turn (e.g. read from the agent's turn record). Without `used`, limits
      apply to each AIMessage alone. See `admit` for the rule.
    - A tool that raises is retried `retries` times (0.05 s, 0.1 s, … apart, via `sleep`), then
      degraded as the module docstring says. CancelledError and interrupts propagate.
    - `sequential=True` runs one AIMessage's calls one after another in message order (ToolNode
      runs them concurrently), and each call sees the ToolMessages of the calls before it appended
      to the state's `messages` (through `ToolRuntime.state` / `InjectedState`), for tools that
      build on an earlier call's result in the same message.
    """
    limits = dict(limits or {})
    rounds: dict[tuple[str, ...], _Round] = {}

    async def run_call(request: ToolCallRequest, execute: Execute) -> ToolMessage | Command:
        call = request.tool_call
        if request.tool is None:
            return await execute(request)  # ToolNode answers: not a valid tool
        calls = _last_tool_calls(request.state) or [call]
        if limits:
            already = used(request.state) if used is not None else {}
            limit = admit(calls, node.tools_by_name, limits, already).refused.get(str(call["id"]))
            if limit is not None:
                return ToolMessage(
                    f"Not run: {call['name']} is limited to {limit} call(s) per turn and that is used up. "
                    "Answer now with the results you already have.",
                    tool_call_id=call["id"], name=call["name"], status="error",
                )
        return await _with_retries(request, execute, retries, sleep)

    async def wrap(request: ToolCallRequest, execute: Execute) -> ToolMessage | Command:
        if not sequential:
            return await run_call(request, execute)
        ids = tuple(str(c["id"]) for c in _last_tool_calls(request.state))
        me = str(request.tool_call["id"])
        if len(set(ids)) != len(ids) or ids.count(me) != 1:
            return await run_call(request, execute)  # ids that cannot order the calls
        return await _in_order(rounds, ids, ids.index(me), request, lambda r: run_call(r, execute))

    node = ToolNode(tools, name=name, handle_tool_errors=_invalid_arguments, awrap_tool_call=wrap)
    return node


# --- pieces ----------------------------------------------------------------------------------


def _invalid_arguments(error: ToolInvocationError) -> str:
    """ToolNode's `handle_tool_errors`: the annotation makes it handle invalid arguments only, so
    a tool's own exceptions reach the wrapper, which retries them."""
    if not isinstance(error, ToolInvocationError):  # the wrapper raised: not expected, not hidden
        raise error
    errors = error.filtered_errors if error.filtered_errors is not None else error.source.errors()
    detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors[:5])
    return f"Invalid arguments for {error.tool_name}: {detail}"


def _valid_arguments(tool: BaseTool, args: dict[str, Any]) -> bool:
    schema = tool.tool_call_schema  # the arguments the model controls, injected ones left out
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            schema.model_validate(args)
        except ValidationError:
            return False
    return True


def _messages(state: Any) -> list[Any]:
    if isinstance(state, list):
        return state
    if isinstance(state, dict):
        return list(state.get("messages") or [])
    return list(getattr(state, "messages", None) or [])


def _last_tool_calls(state: Any) -> list[ToolCall]:
    last = next((m for m in reversed(_messages(state)) if isinstance(m, AIMessage)), None)
    return list(last.tool_calls) if last is not None else []


async def _with_retries(
    request: ToolCallRequest, execute: Execute, retries: int, sleep: Callable[[float], Awaitable[None]]
) -> ToolMessage | Command:
    name = request.tool_call["name"]
    for attempt in range(retries + 1):
        try:
            return await execute(request)
        except GraphBubbleUp:  # an interrupt, not a failure
            raise
        except Exception as exc:
            log.warning("tool %s failed (attempt %d): %s", name, attempt + 1, type(exc).__name__, exc_info=True)
            if attempt < retries:
                await sleep(0.05 * 2**attempt)
    _status(f"{name.replace('_', ' ')} is unavailable right now; answering with what I have.")
    return ToolMessage(
        f"{name} failed and returned no result. Tell the user this information is temporarily "
        "unavailable and answer with what you already know.",
        tool_call_id=request.tool_call["id"], name=name, status="error", artifact={DEGRADED: True},
    )


def degraded(message: ToolMessage) -> bool:
    """Whether a tool result stands for a tool that failed past its retries: its text is an
    instruction to a model, never words for the user (an offline planner answers in its own)."""
    return message.status == "error" and isinstance(message.artifact, dict) and message.artifact.get(DEGRADED) is True


def _status(text: str) -> None:
    try:
        get_stream_writer()(Status(text=text))
    except RuntimeError:  # outside a graph run
        pass


@dataclass
class _Round:
    """One AIMessage's calls, run in order under `sequential=True`."""

    size: int
    turn: int = 0  # the index of the call that may run now
    results: list[ToolMessage] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)


async def _in_order(
    rounds: dict[tuple[str, ...], _Round],
    ids: tuple[str, ...],
    index: int,
    request: ToolCallRequest,
    run: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
) -> ToolMessage | Command:
    current = rounds.setdefault(ids, _Round(size=len(ids)))
    try:
        async with current.changed:
            await current.changed.wait_for(lambda: current.turn == index)
        if current.results:
            request = request.override(state=_with_messages(request.state, current.results))
        result = await run(request)
        if isinstance(result, ToolMessage):
            current.results.append(result)
        return result
    finally:
        # Also on failure or cancellation, so the calls after this one never wait forever.
        async with current.changed:
            current.turn = max(current.turn, index + 1)
            current.changed.notify_all()
        if current.turn >= current.size:
            rounds.pop(ids, None)


def _with_messages(state: Any, earlier: list[ToolMessage]) -> Any:
    if isinstance(state, list):
        return [*state, *earlier]
    if isinstance(state, dict):
        return {**state, "messages": [*(state.get("messages") or []), *earlier]}
    if isinstance(state, BaseModel):
        return state.model_copy(update={"messages": [*_messages(state), *earlier]})
    return state
