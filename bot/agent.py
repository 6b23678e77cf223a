"""The contract between the core and an agent: what an agent provides (graph, command, settings,
CLI sub-commands, worker jobs, offline skills) and what it is given."""

from __future__ import annotations

import argparse
import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from langgraph.graph.state import CompiledStateGraph
from pydantic_settings import BaseSettings

from bot.commands import BUILT_INS, QUERY, Command, CommandOption, CommandTable
from bot.config import load
from bot.events import Attachment, Final
from bot.locale import Language

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from bot.config import Settings
    from bot.llm import ModelProvider
    from bot.offline import OfflineSkill
    from bot.storage import AppDatabase


# When LangGraph writes a run's checkpoints (its `durability`): after every step, or once as it ends.
Durability = Literal["async", "exit"]


class BadInput(Exception):
    """Raised for input the bot refuses; the message is shown to the user verbatim, or `ja` to a
    Japanese user (`said`)."""

    def __init__(self, message: str, *, ja: str = "") -> None:
        super().__init__(message)
        self.ja = ja

    def said(self, language: Language) -> str:
        return self.ja if language == "ja" and self.ja else str(self)


@dataclass(frozen=True)
class IncomingFile:
    """A file the user attached (Slack file share, Discord attachment, `ask --attach`)."""

    filename: str
    content: bytes
    mime_type: str = "application/octet-stream"

    def text(self) -> str:
        """The file as UTF-8 text; BadInput for binary or non-UTF-8 content."""
        if b"\x00" in self.content[:8192]:
            raise BadInput(f"`{self.filename}` looks like a binary file; please attach a text file.",
                           ja=f"`{self.filename}` はバイナリファイルのようです。テキストファイルを添付してください。")
        try:
            return self.content.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput(f"`{self.filename}` is not valid UTF-8 text.",
                           ja=f"`{self.filename}` は UTF-8 のテキストではありません。") from None


@dataclass(frozen=True)
class TurnInput:
    """One user turn as adapters deliver it: the command (None for plain text, which goes to the
    conversation's agent or is routed by intent), the text after it, files, who and where."""

    text: str
    command: str | None = None
    user_id: str = "user"
    attachments: tuple[IncomingFile, ...] = ()
    locale: str = "en"
    currency: str = "USD"
    timezone: str = "UTC"
    delivery_id: str | None = None  # the platform's id for this delivery; a repeat is ignored
    # Where the turn comes from, for access control (bot/access.py): the workspace (Slack team,
    # Discord guild; "" for none), the channel (a Discord thread's parent), the member's roles
    # where the platform has roles (None where it has none: a role rule does not apply there),
    # and whether it is a direct message.
    workspace_id: str = ""
    channel_id: str = ""
    roles: tuple[str, ...] | None = None
    direct: bool = False

    @classmethod
    def typed(cls, line: str, **fields: Any) -> TurnInput:
        """A line typed where commands are plain text (the console, tests): "/hotel Paris" →
        command "hotel", text "Paris". Platforms with native commands fill the fields instead."""
        if line.startswith("/"):
            head, _, rest = line.partition(" ")
            return cls(text=rest.strip(), command=head[1:].lower(), **fields)
        return cls(text=line, **fields)

    def but(self, **changes: Any) -> TurnInput:
        return replace(self, **changes)


@dataclass(kw_only=True)
class AgentEnv:
    """What every agent hook is given: the core settings and the agent's own (loaded from
    `settings_model` and validated at start-up; None when the agent has none)."""

    settings: Settings
    agent_settings: Any = None


@dataclass(kw_only=True)
class AgentDeps(AgentEnv):
    """What the runtime hands an agent when building its graph."""

    models: ModelProvider
    checkpointer: BaseCheckpointSaver
    app_db: AppDatabase
    commands: CommandTable = field(default_factory=lambda: CommandTable(BUILT_INS))
    history_window: int = 40  # messages the agent keeps (bot.history.windowed)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CliCommand:
    """A sub-command an agent or platform adds to `python -m bot`. `run` gets the parsed arguments
    and the application (bot.app.App) and returns the exit status."""

    name: str
    help: str
    run: Callable[[Any, argparse.Namespace], Coroutine[Any, Any, int]]
    configure: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    group: str | None = None  # e.g. "data" for `python -m bot data seed`
    interactive: bool = False  # a terminal conversation: keep INFO logs off the screen
    quiet_loggers: tuple[str, ...] = ()  # its libraries' loggers that say too much at INFO


class OnFirstUse:
    """Runs `prepare()` once per process, on the first call, however many turns race to it: an
    agent seeds an empty store on its first request rather than at start-up, so processes that
    never serve that agent (other agents, CLI one-shots) don't pay for it. A failure is not
    remembered: the next call tries again."""

    def __init__(self, prepare: Callable[[], Awaitable[Any]]) -> None:
        self._prepare = prepare
        self._lock = asyncio.Lock()
        self._done = False

    async def __call__(self) -> None:
        if self._done:
            return
        async with self._lock:
            if not self._done:
                await self._prepare()
                self._done = True


@dataclass(frozen=True)
class WorkerJob:
    """Background work `python -m bot worker` runs: `run(stop)` until the event is set."""

    name: str
    run: Callable[[Any], Awaitable[None]]


class AgentDefinition(ABC):
    """An agent behind a slash command. Agent packages follow one template (docs/adding-an-agent.md).

    The runtime streams the compiled graph with stream_mode ["messages", "updates", "custom"]:
    - text chunks from chat models become Token events, unless the call was tagged "nostream"
      (use it for structured output and internal calls);
    - AIMessage tool calls and ToolMessages in node updates become ToolStarted / ToolFinished;
    - anything a node writes with `langgraph.config.get_stream_writer()` that is a bot.events
      model (e.g. `Status(text="Searching hotels in Paris…")`) is passed through as is.
    When the run ends, `final(state)` turns the graph state into the Final event, or, when the
    graph is paused on `interrupt(value)`, `interrupted(value)` does.
    `attachments(state)` adds files to a finished run's Final (awaited; never checkpointed).
    """

    name: str
    command: str  # "/hotel"
    summary: str  # one line, at most 100 characters (Discord's limit for descriptions)
    usage: str = ""  # what typically follows the command: "Paris under $200 next weekend"
    summary_ja: str = ""  # the two in Japanese, for a Japanese user's /help (optional)
    usage_ja: str = ""
    options: tuple[CommandOption, ...] = (QUERY,)
    # Words that route un-commanded text ("find a hotel in Rome") to this agent.
    intent_words: tuple[str, ...] = ()
    # The agent's own settings, read from the environment under its own prefix.
    settings_model: type[BaseSettings] | None = None
    # Messages of history the agent keeps; None: CONCIERGE_HISTORY_WINDOW.
    history_window: int | None = None
    # The most characters a message to this agent may have; None: only the core's limit
    # (CONCIERGE_MAX_INPUT_BYTES, sized for documents). Set it for an agent that reads requests:
    # the user is told this agent's limit, and its offline rules never read a pasted book.
    max_input_chars: int | None = None
    # Rules that teach the offline model this agent's domain.
    offline_skills: Sequence[OfflineSkill] = ()
    # The agent for text that no agent's intent words claim (small talk); one per bot.
    fallback: bool = False
    # Whether a turn a crash or shutdown stopped may continue from its last checkpoint on the next
    # start. False when its steps change things outside the checkpoint (a cart, an order): the
    # user is offered to run the request again instead.
    resumable: bool = True
    # When LangGraph writes the turn's checkpoints: "async" (after every step, while the next one
    # runs; a crashed turn continues from its last step) or "exit" (once, when the run ends: for a
    # graph of one step, where intermediate checkpoints save nothing worth resuming; a crashed turn
    # runs again from its request).
    durability: Durability = "async"
    # Whether the agent's tools say their own progress, in the user's words and language (Status
    # events: "Searching hotels in Osaka…"); their tool_started/tool_finished events are then
    # marked `narrated` and the renderer shows no line of its own for them.
    narrates_tools: bool = False

    def load_settings(self, settings: Settings | None = None) -> Any:
        """The agent's settings (ConfigError naming each bad variable): through `settings.section`
        when given (the environment, `.env` and the overrides the core's settings were built with),
        else from the environment."""
        if self.settings_model is None:
            return None
        return settings.section(self.settings_model) if settings is not None else load(self.settings_model)

    def command_spec(self) -> Command:
        return Command(
            name=self.command.lstrip("/"), description=self.summary, usage=self.usage, options=self.options,
            agent=self.name, needs_input=any(o.required for o in self.options),
            description_ja=self.summary_ja, usage_ja=self.usage_ja,
        )

    def cli_commands(self) -> Sequence[CliCommand]:
        """Sub-commands of `python -m bot` this agent adds (e.g. `data ingest`)."""
        return ()

    async def seed(self, env: AgentEnv) -> str | None:
        """Load demo data (`python -m bot data seed`); a line saying what was done, or None."""
        return None

    def worker_jobs(self, env: AgentEnv) -> Sequence[WorkerJob]:
        """Background jobs for `python -m bot worker` (refreshers, ingestion)."""
        return ()

    @abstractmethod
    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        """Compile the graph with `deps.checkpointer`."""

    @abstractmethod
    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        """The state update that starts a turn. Raise BadInput to refuse the input."""

    @abstractmethod
    def final(self, state: dict[str, Any]) -> Final:
        """The Final event for a finished run."""

    async def attachments(self, state: dict[str, Any]) -> Sequence[Attachment]:
        """Files sent with a finished run's answer (e.g. a rendered map), made from the final state
        after `final(state)`: they reach the user without entering the checkpoint. Run CPU-bound
        work off the event loop (`asyncio.to_thread`). A failure is logged and the answer goes
        without them."""
        return ()

    def interrupted(self, value: Any) -> Final:
        """The Final event for a graph paused on `interrupt(value)`; buttons carry resume values."""
        return Final(text=str(value), data={"awaiting_input": True})

    def resume_value(self, turn: TurnInput, pending: Any) -> Any | None:
        """The resume value when the next message in a conversation paused on `interrupt(pending)`
        answers it (e.g. "yes"); None runs the message as a new turn, which drops the pause."""
        return None

    async def close(self) -> None:
        """Release resources opened in build()."""
