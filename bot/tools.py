"""Running an AIMessage's tool calls: hidden context injection, per-turn limits, retry-then-degrade."""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_stream_writer

from bot.events import Status

log = logging.getLogger(__name__)

CONTEXT_ARG = "tool_context"


def _wants_context(tool: BaseTool) -> bool:
    func = getattr(tool, "coroutine", None) or getattr(tool, "func", None)
    return func is not None and CONTEXT_ARG in inspect.signature(func).parameters


class ToolRunner:
    """Executes tool calls for a ReAct loop.

    - `tool_context` (hidden runtime data) is passed to tools whose function takes a parameter of
      that name, declared `Annotated[dict, InjectedToolArg]` so it never appears in the schema.
    - `limits[name]` caps calls per turn; a call over the cap gets a tool message saying so.
    - A failing tool is retried `retries` times, then degraded: its ToolMessage says it failed (the
      model answers with what it has) and the user sees a Status saying so."""

    def __init__(
        self,
        tools: Sequence[BaseTool],
        *,
        retries: int = 1,
        limits: Mapping[str, int] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.retries = retries
        self.limits = dict(limits or {})
        self._sleep = sleep
        self._wants_context = {name: _wants_context(tool) for name, tool in self.tools.items()}

    async def run(
        self,
        message: AIMessage,
        *,
        used: collections.Counter[str] | None = None,
        context: dict[str, Any] | None = None,
    ) -> list[ToolMessage]:
        """ToolMessages answering every call in `message` (in order). `used` counts calls this turn."""
        used = used if used is not None else collections.Counter()
        results: list[ToolMessage] = []
        for call in message.tool_calls:
            name, call_id = call["name"], str(call["id"])
            tool = self.tools.get(name)
            if tool is None:
                results.append(ToolMessage(f"There is no tool named {name!r}.", tool_call_id=call_id, name=name, status="error"))
                continue
            limit = self.limits.get(name)
            if limit is not None and used[name] >= limit:
                results.append(ToolMessage(
                    f"Limit reached: {name} may be called at most {limit} time(s) per turn. "
                    "Answer with the results you already have.",
                    tool_call_id=call_id, name=name, status="error",
                ))
                continue
            used[name] += 1
            args = dict(call["args"])
            if self._wants_context[name]:
                args[CONTEXT_ARG] = context or {}
            results.append(await self._invoke(tool, args, call_id))
        return results

    async def _invoke(self, tool: BaseTool, args: dict[str, Any], call_id: str) -> ToolMessage:
        for attempt in range(self.retries + 1):
            try:
                output = await tool.ainvoke({**args})
                return ToolMessage(content=str(output), tool_call_id=call_id, name=tool.name)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("tool %s failed (attempt %d): %s", tool.name, attempt + 1, type(exc).__name__)
                if attempt < self.retries:
                    await self._sleep(0.2 * 2**attempt)
        _status(f"{tool.name.replace('_', ' ')} is unavailable right now; answering with what I have.")
        return ToolMessage(
            content=(
                f"{tool.name} failed and returned no result. Tell the user this information is "
                "temporarily unavailable and answer with what you already know."
            ),
            tool_call_id=call_id,
            name=tool.name,
            status="error",
        )


def _status(text: str) -> None:
    try:
        get_stream_writer()(Status(text=text))
    except RuntimeError:  # outside a graph run (direct calls in tests)
        pass
