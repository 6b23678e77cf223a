"""The contract between the runtime and an agent: what an agent provides, what it is given."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langgraph.graph.state import CompiledStateGraph

from bot.events import Final

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from bot.config import Settings
    from bot.llm import ModelProvider
    from bot.storage import AppDatabase


class BadInput(Exception):
    """Raised by an agent for input it refuses; the message is shown to the user verbatim."""


@dataclass(frozen=True)
class IncomingFile:
    """A file the user attached (Slack file share, Discord attachment, `ask --attach`)."""

    filename: str
    content: bytes
    mime_type: str = "application/octet-stream"

    def text(self) -> str:
        """The file as UTF-8 text; BadInput for binary or non-UTF-8 content."""
        if b"\x00" in self.content[:8192]:
            raise BadInput(f"`{self.filename}` looks like a binary file; please attach a text file.")
        try:
            return self.content.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput(f"`{self.filename}` is not valid UTF-8 text.") from None


@dataclass(frozen=True)
class TurnInput:
    """One user turn as the agent sees it."""

    text: str
    user_id: str = "user"
    attachments: tuple[IncomingFile, ...] = ()
    locale: str = "en"
    currency: str = "USD"
    timezone: str = "UTC"


@dataclass
class AgentDeps:
    """What the runtime hands every agent when building its graph."""

    settings: Settings
    models: ModelProvider
    checkpointer: BaseCheckpointSaver
    app_db: AppDatabase
    extra: dict[str, Any] = field(default_factory=dict)


class AgentDefinition(ABC):
    """An agent behind a slash command.

    The runtime streams the compiled graph with stream_mode ["messages", "updates", "custom"]:
    - text chunks from chat models become Token events, unless the call was tagged "nostream"
      (use it for structured output and internal calls);
    - AIMessage tool calls and ToolMessages in node updates become ToolStarted / ToolFinished;
    - anything a node writes with `langgraph.config.get_stream_writer()` that is a bot.events
      model (e.g. `Status(text="Searching hotels in Paris…")`) is passed through as is.
    When the run ends, `final(state)` turns the graph state into the Final event, or, when the
    graph is paused on `interrupt(value)`, `interrupted(value)` does.
    """

    name: str
    command: str
    summary: str
    usage: str
    # Words that route un-commanded text ("find a hotel in Rome") to this agent.
    intent_words: tuple[str, ...] = ()

    @abstractmethod
    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        """Compile the graph with `deps.checkpointer`."""

    @abstractmethod
    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        """The state update that starts a turn. Raise BadInput to refuse the input."""

    @abstractmethod
    def final(self, state: dict[str, Any]) -> Final:
        """The Final event for a finished run."""

    def interrupted(self, value: Any) -> Final:
        """The Final event for a graph paused on `interrupt(value)`; buttons carry resume values."""
        return Final(text=str(value), data={"awaiting_input": True})

    async def close(self) -> None:
        """Release resources opened in build()."""
