"""The conversation runtime: ConversationKey → checkpoint thread, one turn at a time per thread,
agent binding and intent routing, the turn lifecycle, fault handling, stream events."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt
from pydantic import BaseModel

from bot.access import TurnGate
from bot.agent import AgentDefinition, AgentDeps, BadInput, TurnInput
from bot.commands import HELP, RESET, CommandTable
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import (
    Action,
    Card,
    Failure,
    Final,
    Status,
    StreamEvent,
    Token,
    ToolFinished,
    ToolStarted,
)
from bot.faults import FAULT_TABLE, FaultClass, TurnFailed
from bot.history import close_dangling
from bot.lifecycle import IN_FLIGHT, TurnEvent, TurnState, next_state
from bot.llm import PLANNER_STEPS, TURN_ENDS, ModelProvider
from bot.locale import Language, language_for
from bot.loop import startup_complete
from bot.phrases import say
from bot.render import RESUMED, StatusMessage
from bot.storage import AppDatabase, Checkpoints, HeldThread, OrphanedTurn, QueuedTurn, ThreadRecord

log = logging.getLogger(__name__)

RECURSION_LIMIT = 25
PRUNE_EVERY = 4  # prune a thread's old checkpoints every few turns, not after each one
INTERRUPT = "__interrupt__"
AWAITING = "awaiting"  # thread note: the graph is paused on interrupt() for the user's answer
INTERRUPTED = "interrupted"  # thread note: a turn was stopped mid-flight (crash, shutdown)
RERUN_LABEL = "Run it again"
TURN_STAMP = "concierge_turn"  # checkpoint metadata: the turn (ThreadRecord.turn) that wrote it


# Runs a turn queued by a process that died, in its place: (conversation, turn, whether it had
# started: recover it, else run its request again). A platform registers one (`adopt_orphans`).
Adopter = Callable[[ConversationKey, QueuedTurn, bool], None]


FILES_NOT_KEPT = "files_not_kept"  # a queued request's mark: its files were not kept, it cannot run again


def replayable(turn: TurnInput, *, files_follow: bool = False) -> dict[str, Any]:
    """What is kept of a queued turn so another process can run it should this one die first.
    Files are not kept: a turn with files (or whose files are still to come) keeps only its user
    and the FILES_NOT_KEPT mark, so whoever adopts it asks for the file again."""
    if files_follow or turn.attachments:
        return {"user_id": turn.user_id, FILES_NOT_KEPT: True}
    fields = {f.name: getattr(turn, f.name) for f in dataclasses.fields(turn) if f.name != "attachments"}
    return fields | {"roles": None if turn.roles is None else list(turn.roles), "delivery_id": None}


def replayed(request: dict[str, Any]) -> TurnInput:
    """The turn `replayable` kept."""
    known = {f.name for f in dataclasses.fields(TurnInput)} - {"attachments"}
    fields = {name: value for name, value in request.items() if name in known}
    roles = fields.get("roles")
    return TurnInput(**fields | {"roles": None if roles is None else tuple(roles)})


class _FifoLocks:
    """One asyncio.Lock per thread (FIFO-fair), dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: collections.Counter[str] = collections.Counter()

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] += 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] <= 0:
                del self._users[key]
                self._locks.pop(key, None)


@dataclass(frozen=True)
class Admission:
    """What `ConversationRuntime.admit` made of an arriving turn: its place in the queue, or the
    refusal to show, or neither (a duplicate delivery)."""

    queued: QueuedTurn | None = None
    refused: StreamEvent | None = None


@dataclass
class _Outcome:
    values: dict[str, Any] = field(default_factory=dict)
    interrupts: list[Interrupt] = field(default_factory=list)


class ConversationRuntime:
    def __init__(
        self,
        settings: Settings,
        app_db: AppDatabase,
        checkpoints: Checkpoints,
        models: ModelProvider,
        agents: Sequence[AgentDefinition],
        *,
        agent_settings: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.app_db = app_db
        self.checkpoints = checkpoints
        self.models = models
        self._agents = {agent.name: agent for agent in agents}
        self.commands = CommandTable.of(agents)
        self._graphs: dict[str, CompiledStateGraph] = {}
        self._locks = _FifoLocks()  # in-process arrival order, until a turn has its place in the queue
        self._entries: dict[str, str] = {}  # thread → the queue entry of the turn running there
        self._held: dict[str, HeldThread] = {}  # thread → its record as the turn took it, the last write
        self._adopters: dict[str, Adopter] = {}
        app_db.orphan_handler = self._orphaned
        self._opened: collections.deque[str] = collections.deque(maxlen=1000)
        # Each agent's own settings, loaded once (open() loads them before it opens anything).
        self._agent_settings = agent_settings if agent_settings is not None else {a.name: a.load_settings(settings) for a in agents}
        # Threads whose turn a crash or shutdown stopped, found at start-up: the adapters resume
        # them (`recover`); until then the next turn there starts with a notice.
        self.interrupted_at_start: list[str] = []
        self._owns_models = False
        self.gate = TurnGate(settings, app_db, models)  # access, token budget, rate limit

    # --- lifecycle ----------------------------------------------------------------------
    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        agents: Sequence[AgentDefinition],
        models: ModelProvider | None = None,
    ) -> Self:
        """A runtime over `agents` (the composition root passes them; the core knows none)."""
        agent_settings = {agent.name: agent.load_settings(settings) for agent in agents}  # a bad one fails here
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        checkpoints = await Checkpoints.open(settings)
        app_db = await AppDatabase.open(
            settings.resolved_database_url, share=checkpoints, lock_ttl=settings.turn_deadline + 60
        )
        skills = [skill for agent in agents for skill in agent.offline_skills]
        runtime = cls(
            settings, app_db, checkpoints, models or ModelProvider.from_settings(settings, skills=skills), agents,
            agent_settings=agent_settings,
        )
        runtime._owns_models = models is None
        try:
            await runtime._recover()
            for agent in runtime._agents.values():
                await runtime._graph(agent)
        except BaseException:
            await runtime.close()
            raise
        startup_complete()
        return runtime

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for agent in self._agents.values():
            if agent.name in self._graphs:
                with contextlib.suppress(Exception):
                    await agent.close()
        self._graphs.clear()
        if self._owns_models:
            with contextlib.suppress(Exception):
                await self.models.aclose()
        await self.app_db.close()
        await self.checkpoints.close()

    def agents(self) -> list[AgentDefinition]:
        return list(self._agents.values())

    def deps(self, agent: AgentDefinition) -> AgentDeps:
        return AgentDeps(
            settings=self.settings, agent_settings=self._agent_settings[agent.name], models=self.models,
            checkpointer=self.checkpoints.saver, app_db=self.app_db, commands=self.commands,
            history_window=agent.history_window or self.settings.history_window,
        )

    async def _graph(self, agent: AgentDefinition) -> CompiledStateGraph:
        graph = self._graphs.get(agent.name)
        if graph is None:
            graph = await agent.build(self.deps(agent))
            self.checkpoints.allow(graph)  # its state's classes pass the checkpoint allowlist
            self._graphs[agent.name] = graph
        return graph

    async def _recover(self) -> None:
        """Turns left in flight by a crash: mark them interrupted. They, and turns a shutdown
        stopped, are listed in `interrupted_at_start` for the adapters to `recover`; a new message
        there first repairs the history (closing tool calls that never got a result) and tells the
        user. A turn whose lock another live process holds is still running there, not interrupted."""
        for record in await self.app_db.threads_in_states([s.value for s in IN_FLIGHT]):
            async with self.app_db.try_thread_lock(record.key) as orphaned:
                if not orphaned:
                    continue
                current = await self.app_db.get_thread(record.key)  # it may have finished meanwhile
                if current is None or TurnState(current.state) not in IN_FLIGHT:
                    continue
                log.warning("turn %s of %s was interrupted (state %s)", current.turn, current.key, current.state)
                await self.app_db.update_thread(
                    current.key, state=next_state(current.state, TurnEvent.INTERRUPTED).value, note=INTERRUPTED
                )
                self.interrupted_at_start.append(current.key)
        for record in await self.app_db.threads_in_states([TurnState.ERROR.value]):
            if record.note == INTERRUPTED and record.key not in self.interrupted_at_start:
                self.interrupted_at_start.append(record.key)  # stopped by a shutdown

    async def interrupted_turn(self, key: ConversationKey) -> ThreadRecord | None:
        """The thread's record while a turn there waits to be recovered (`pending` holds the request:
        text, command line, user; `status_message` where its status message is), else None."""
        record = await self.app_db.get_thread(key.thread_id)
        return record if record is not None and record.note == INTERRUPTED else None

    async def recover(
        self, key: ConversationKey, *, status: StatusMessage | None = None, queued: QueuedTurn | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Finish a turn a crash or shutdown stopped, answering the user once: the graph continues
        from its last checkpoint, or, for an agent whose steps are not safe to repeat, the user is
        offered to run the request again (a button whose value is the request). Nothing when the
        turn is no longer waiting (recovered already, or a newer message went first). `queued`:
        the dead process's queue entry of that turn, adopted (it keeps its place)."""
        async with self._slot(key, queued or await self.app_db.enqueue(key.thread_id)):
            record = await self.app_db.get_thread(key.thread_id)
            if record is None or record.note != INTERRUPTED or record.agent not in self._agents:
                return
            agent = self._agents[record.agent or ""]
            graph = await self._graph(agent)
            config = self._config(key, agent, record.generation)
            snapshot = await graph.aget_state(config)
            request = record.pending or {}
            checkpointed = (snapshot.metadata or {}).get(TURN_STAMP)
            if snapshot.metadata is None or (checkpointed is not None and checkpointed != record.turn):
                # The turn stopped before its input reached the checkpoint: the last checkpoint is
                # the turn before it (continuing would answer that one again), or there is none (a
                # first turn of an agent that checkpoints as its run ends), and no step of it ran,
                # so it runs from its request, as if it were arriving now.
                turn = self._interrupted_request(queued, request)
                if turn is None:
                    await self.app_db.update_thread(key.thread_id, note=None, pending=None, status_message=None)
                    yield self._rerun_offer(key, request)
                    return
                log.info("turn %s of %s had not started; running it from its request", record.turn, key)
                async for event in self._turn(key, turn, status=status):
                    yield event
                return
            if snapshot.next and not snapshot.interrupts and not agent.resumable:
                log.info("turn %s of %s not resumed: %s does not repeat steps", record.turn, key, agent.name)
                await self.app_db.update_thread(key.thread_id, note=None, pending=None, status_message=None)
                yield self._rerun_offer(key, request)
                return
            log.info("resuming turn %s of %s", record.turn, key)
            yield Status(text=RESUMED)
            resumed = None if snapshot.next else snapshot.values  # finished, but the answer was not sent
            async for event in self._run(
                key, agent, graph, config, record, None, status=status, resumed=resumed or {},
                language=language_for(None, str((request or {}).get("text") or "")),
            ):
                yield event

    @staticmethod
    def _interrupted_request(queued: QueuedTurn | None, request: dict[str, Any]) -> TurnInput | None:
        """The turn to run again for an interrupted one that never started: the adopted queue
        entry's request as it arrived, else the command line recorded with the turn (None: it
        carried files, which are not kept)."""
        if queued is not None and queued.request and not queued.request.get(FILES_NOT_KEPT):
            return replayed(queued.request)
        line = str(request.get("line") or "").strip()
        return TurnInput.typed(line, user_id=str(request.get("user") or "user")) if line else None

    def _rerun_offer(self, key: ConversationKey, request: dict[str, Any]) -> Final:
        line = str(request.get("line") or "").strip()
        text = "Your request was interrupted by a restart before it finished. It changes things outside this conversation, so I haven't run it again on my own."
        if not line:
            return Final(text=text + " Please send it again.")
        shown = line if len(line) <= 200 else line[:199] + "…"
        return Final(
            text=f"{text}\n\nTo run `{shown}` again, press the button or send it again.",
            cards=[Card(title="Run it again?", subtitle=shown, actions=[Action(label=RERUN_LABEL, value=line, style="primary")])],
            data={"interrupted": True, "request": line},
        )

    # --- public API ---------------------------------------------------------------------
    async def claim_delivery(self, delivery_id: str) -> bool:
        return await self.app_db.claim_delivery(delivery_id, self.settings.dedupe_ttl)

    async def bind(self, key: ConversationKey, agent: str | None = None) -> None:
        """The bot started a platform thread for `key` (and its command names `agent`): recorded
        in the database, so a reply there is routed by whichever process receives it."""
        self._opened.append(key.thread_id)
        await self.app_db.bind_thread(key.thread_id, key.platform, agent)

    async def owns(self, key: ConversationKey) -> bool:
        """Whether the bot started or answered in this conversation (follow-ups need no mention)."""
        return key.thread_id in self._opened or await self.app_db.get_thread(key.thread_id) is not None

    # --- turns queued by a process that died ---------------------------------------------
    def adopt_orphans(self, platform: str, adopter: Adopter) -> None:
        """Let `adopter` run `platform`'s turns that a process queued and then died with."""
        self._adopters[platform] = adopter

    async def adopt_orphaned_turns(self, platform: str) -> set[str]:
        """Adopt every orphaned turn of `platform` there is now (at start-up); the threads whose
        adopted turn had started (they are recovered through their adopted entry)."""
        by_thread: dict[str, list[OrphanedTurn]] = {}
        for orphan in await self.app_db.orphaned_turns():
            if ConversationKey.parse(orphan.turn.key).platform == platform:
                by_thread.setdefault(orphan.turn.key, []).append(orphan)
        started: set[str] = set()
        for key, orphans in by_thread.items():
            started |= await self._orphaned(key, orphans)
        return started

    async def _orphaned(self, key: str, orphans: list[OrphanedTurn]) -> set[str]:
        """Take over turns queued by a process that died, keeping their places: one that had
        started is recovered (as after a restart), one that had not runs from its request; with no
        adopter for the platform, or nothing to run, they leave the queue."""
        conversation = ConversationKey.parse(key)
        adopter = self._adopters.get(conversation.platform)
        started: set[str] = set()
        for orphan in orphans:
            if adopter is None:
                log.warning("dropping turn %s of %s queued by a process that is gone", orphan.turn.seq, key)
                await self.app_db.drop_turn(orphan.turn, orphan.owner)
                continue
            if not await self.app_db.adopt_turn(orphan):
                continue  # another process took it
            record = await self.app_db.get_thread(key)
            had_started = record is not None and record.turn_entry == orphan.turn.entry
            if had_started and record is not None:
                if TurnState(record.state) in IN_FLIGHT:
                    await self.app_db.update_thread(
                        key, state=next_state(record.state, TurnEvent.INTERRUPTED).value, note=INTERRUPTED
                    )
                elif record.note != INTERRUPTED:  # it finished; only leaving the queue was left
                    await self.app_db.drop_turn(orphan.turn)
                    continue
                started.add(key)
            elif orphan.turn.request is None:
                # Nothing was kept to run it again (a button press, or a recovery the next start redoes).
                log.warning("turn %s of %s was lost with its process", orphan.turn.seq, key)
                await self.app_db.drop_turn(orphan.turn)
                continue
            log.info("adopted turn %s of %s from a process that is gone", orphan.turn.seq, key)
            adopter(conversation, orphan.turn, had_started)
        return started

    async def abandon(self, queued: QueuedTurn) -> None:
        """An adopted turn that will not run after all leaves the queue (if it is still there)."""
        await self.app_db.drop_turn(queued)

    @contextlib.asynccontextmanager
    async def _slot(self, key: ConversationKey, queued: QueuedTurn) -> AsyncIterator[HeldThread]:
        """The thread held for a queued turn: `_turn` starts from the record read with the lock,
        `_run` records the entry with the turn and leaves its last write for leaving the queue."""
        async with self.app_db.turn_slot(queued) as held:
            self._entries[key.thread_id] = queued.entry
            self._held[key.thread_id] = held
            try:
                yield held
            finally:
                self._entries.pop(key.thread_id, None)
                self._held.pop(key.thread_id, None)

    async def bound_agent(self, key: ConversationKey) -> str | None:
        record = await self.app_db.get_thread(key.thread_id)
        return record.agent if record else None

    async def reset(self, key: ConversationKey) -> None:
        """Start the conversation over (what `/reset` does), outside a turn."""
        async with self.app_db.thread_lock(key.thread_id):
            await self._reset(key)

    async def _reset(self, key: ConversationKey) -> None:
        record = await self.app_db.ensure_thread(key.thread_id, key.platform)
        await self.app_db.update_thread(
            key.thread_id, generation=record.generation + 1, agent=None, state=TurnState.IDLE.value,
            pending=None, note=None,
        )

    def checkpoint_thread(self, key: ConversationKey, agent: str, generation: int) -> str:
        """The LangGraph thread id for a conversation's agent (a /reset starts a new generation)."""
        suffix = f"#{generation}" if generation else ""
        return f"{key.thread_id}{suffix}/{agent}"

    async def handle(
        self, key: ConversationKey, turn: TurnInput, *, status: StatusMessage | None = None,
        queued: QueuedTurn | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Run one user turn; yields stream events ending with exactly one Final or Failure (nothing
        for a delivery already claimed). `status`, from the renderer, says where the turn's status
        message is; it is recorded with the turn, so a restart can replace it.

        The turn takes its place in the thread's queue as it arrives (after de-duplication and the
        access gate) and runs when every turn queued before it, in any process, is done. `queued`:
        a turn adopted from a process that died, already past those steps, in its old place."""
        if queued is None:
            admitted = await self.admit(key, turn)
            if admitted.refused is not None:
                yield admitted.refused
            if admitted.queued is None:
                return
            queued = admitted.queued
        async with self._slot(key, queued):
            async for event in self._turn(key, turn.but(text=turn.text.strip()), status=status):
                yield event

    async def admit(self, key: ConversationKey, turn: TurnInput, *, files_follow: bool = False) -> Admission:
        """A turn's arrival: checked, let through the access gate, and given its place in the
        thread's queue with its delivery claimed in the same write (a duplicate delivery gets
        neither). Once this returns, the turn is durable: should this process die, another one
        (or this one, restarted) adopts it. `handle(..., queued=...)` runs it. `files_follow`: the
        turn's attached files are still to be fetched (so it is not empty, and it cannot be run
        again from what the queue keeps; `input_problem` checks it once they are there)."""
        async with self._locks.hold(key.thread_id):  # this process's arrival order, until queued
            problem = self._check_input(turn, files_follow=files_follow)
            refused = Failure(kind="bad_input", user_message=problem) if problem else await self.gate.check(key, turn)
            if refused is not None:
                if turn.delivery_id is not None and not await self.claim_delivery(turn.delivery_id):
                    return Admission()  # refused once already
                return Admission(refused=refused)
            request = replayable(turn, files_follow=files_follow)
            if turn.delivery_id is None:
                return Admission(queued=await self.app_db.enqueue(key.thread_id, request))
            queued = await self.app_db.claim_and_enqueue(turn.delivery_id, self.settings.dedupe_ttl, key.thread_id, request)
            if queued is None:
                log.info("duplicate delivery %s ignored", turn.delivery_id)
            return Admission(queued=queued)

    def input_problem(self, turn: TurnInput) -> Failure | None:
        """Why the runtime would refuse `turn` as input (too long, binary, an attachment too big)."""
        problem = self._check_input(turn)
        return Failure(kind="bad_input", user_message=problem) if problem else None

    async def resume(
        self,
        key: ConversationKey,
        value: str,
        *,
        user_id: str = "user",
        delivery_id: str | None = None,
        origin: TurnInput | None = None,
        status: StatusMessage | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """A button press: answer a graph paused on interrupt() with `value` (nothing happens when
        nothing is pending), or, for a value that is a command line ("/shop add P1 to my cart"),
        run it as the user's next message in the conversation. `origin` says who pressed it where
        (workspace, channel, roles): the press passes the same gate as a typed turn."""
        if delivery_id is not None and not await self.claim_delivery(delivery_id):
            return
        where = (origin or TurnInput(text="", user_id=user_id)).but(text=value)
        refused = await self.gate.check(key, where)
        if refused is not None:
            yield refused
            return
        async with self._slot(key, await self.app_db.enqueue(key.thread_id)):
            if value.startswith("/"):
                typed = TurnInput.typed(value, user_id=where.user_id)
                turn = where.but(text=typed.text, command=typed.command, delivery_id=None)
                async for event in self._turn(key, turn, status=status):
                    yield event
                return
            record = await self.app_db.get_thread(key.thread_id)
            if record is None or record.agent is None or record.agent not in self._agents:
                return
            agent = self._agents[record.agent]
            graph = await self._graph(agent)
            config = self._config(key, agent, record.generation)
            snapshot = await graph.aget_state(config)
            if not snapshot.interrupts:
                return
            async for event in self._run(key, agent, graph, config, record, Command(resume=value), status=status):
                yield event

    # --- a turn -------------------------------------------------------------------------
    def _check_input(self, turn: TurnInput, *, files_follow: bool = False) -> str | None:
        """Why the turn cannot be taken, in the user's language; None when it can. The limit of the
        agent the turn's command names applies too (a follow-up's agent is checked in `_turn`)."""
        text, attachments = turn.text, turn.attachments
        language = language_for(turn.locale, text)
        size = len(text.encode("utf-8", "surrogatepass"))
        if not text.strip() and not attachments and not turn.command and not files_follow:
            return say("empty_message", language)
        command = self.commands.get(turn.command) if turn.command else None
        agent = self._agents.get(command.agent) if command is not None and command.agent else None
        if agent is not None and (too_long := self._too_long_for(agent, text, language)):
            return too_long
        if size > self.settings.max_input_bytes:
            return say("message_too_long", language, size=size // 1000, limit=self.settings.max_input_bytes // 1000)
        if "\x00" in text:
            return say("binary_message", language)
        for file in attachments:
            if len(file.content) > self.settings.max_attachment_bytes:
                return say("file_too_large", language, name=file.filename, size=len(file.content) // 1000,
                           limit=self.settings.max_attachment_bytes // 1000)
            try:
                file.text()  # every agent reads text; refuse binary or non-UTF-8 files up front
            except BadInput as exc:
                return exc.said(language)
        return None

    def _too_long_for(self, agent: AgentDefinition, text: str, language: Language) -> str | None:
        """The refusal of a message longer than the agent takes (`max_input_chars`), else None."""
        limit = agent.max_input_chars
        if limit is None or len(text) <= limit:
            return None
        found = self.commands.for_agent(agent.name)
        return say("agent_message_too_long", language, command=found.slash if found else agent.command,
                   limit=limit, size=len(text))

    def _config(self, key: ConversationKey, agent: AgentDefinition, generation: int) -> RunnableConfig:
        return {
            "configurable": {"thread_id": self.checkpoint_thread(key, agent.name, generation)},
            "recursion_limit": RECURSION_LIMIT,
        }

    def route(self, text: str) -> AgentDefinition | None:
        """The agent whose intent words best match un-commanded text, else the fallback agent."""
        lowered = text.lower()
        best: tuple[int, AgentDefinition] | None = None
        for agent in self._agents.values():
            score = sum(1 for word in agent.intent_words if word.lower() in lowered)
            if score and (best is None or score > best[0]):
                best = (score, agent)
        if best is not None:
            return best[1]
        return next((a for a in self._agents.values() if a.fallback), None)

    async def _turn(
        self, key: ConversationKey, turn: TurnInput, *, status: StatusMessage | None = None
    ) -> AsyncIterator[StreamEvent]:
        held = self._held.get(key.thread_id)
        if held is None:
            record = await self.app_db.ensure_thread(key.thread_id, key.platform)
        else:  # read as the lock was taken: a thread without a record has none yet
            record = held.record or await self.app_db.create_thread(key.thread_id, key.platform)
        command = self.commands.get(turn.command) if turn.command else None
        language = language_for(turn.locale, turn.text)
        if turn.command and command is None:
            yield Failure(kind="bad_input", user_message=say("unknown_command", language, command=turn.command))
            return
        if command is RESET:
            await self._reset(key)
            yield Final(text=say("conversation_reset", language))
            return
        if command is HELP:
            yield Final(text=self.commands.help_text(language=language))
            return
        if record.note == INTERRUPTED:
            yield Status(text=say("interrupted", language))
        agent: AgentDefinition | None
        if command is not None:
            agent = self._agents[command.agent or ""]
            if command.needs_input and not turn.text and not turn.attachments:
                yield Failure(kind="bad_input", user_message=command.usage_line(language))
                return
        else:
            agent = self._agents.get(record.agent or "") or self.route(turn.text)
            if agent is None:
                yield Final(text=self.commands.help_text(language=language))  # no agent claims it, no small talk
                return
        too_long = self._too_long_for(agent, turn.text, language)
        if too_long is not None:  # a follow-up to an agent with a limit of its own; nothing runs
            yield Failure(kind="bad_input", user_message=too_long)
            return
        graph = await self._graph(agent)
        config = self._config(key, agent, record.generation)
        if record.note == AWAITING and record.agent == agent.name:
            snapshot = await graph.aget_state(config)
            value = agent.resume_value(turn, snapshot.interrupts[0].value) if snapshot.interrupts else None
            if value is not None:  # the message answers the question the graph is waiting on
                async for event in self._run(
                    key, agent, graph, config, record, Command(resume=value), user_text=turn.text, status=status,
                    language=language,
                ):
                    yield event
                return
        try:
            turn_input = agent.turn_input(turn)
        except BadInput as exc:
            yield Failure(kind="bad_input", user_message=exc.said(language))
            return
        if record.state != TurnState.IDLE or record.agent != agent.name:
            turn_input = await self._repair(graph, config, turn_input)
        request = self._request(agent, turn)
        async for event in self._run(
            key, agent, graph, config, record, turn_input, user_text=turn.text, request=request, status=status,
            language=language,
        ):
            yield event

    def _request(self, agent: AgentDefinition, turn: TurnInput) -> dict[str, Any]:
        """What is kept of a turn's request while it runs: enough to offer it again after a
        restart (the command line; attached files are not kept)."""
        command = turn.command or (found.name if (found := self.commands.for_agent(agent.name)) else None)
        line = f"/{command} {turn.text}".strip() if command else turn.text
        request: dict[str, Any] = {"text": turn.text[:2000], "user": turn.user_id}
        if len(line) <= 2000 and not turn.attachments:
            request["line"] = line
        return request

    async def _repair(self, graph: CompiledStateGraph, config: RunnableConfig, turn_input: Any) -> Any:
        """Close tool calls left without results (crash, timeout) before the next user message, so
        the model never sees an invalid history."""
        if not isinstance(turn_input, dict) or "messages" not in turn_input:
            return turn_input
        snapshot = await graph.aget_state(config)
        messages = (snapshot.values or {}).get("messages") or []
        closing = close_dangling(messages)
        if not closing:
            return turn_input
        log.warning("closing %d dangling tool call(s) in %s", len(closing), config["configurable"]["thread_id"])
        new_messages = turn_input["messages"]
        if not isinstance(new_messages, list):
            new_messages = [new_messages]
        return {**turn_input, "messages": [*closing, *new_messages]}

    async def _transition(self, key: ConversationKey, state: TurnState, event: TurnEvent, **fields: Any) -> TurnState:
        new_state = next_state(state, event)
        await self.app_db.update_thread(key.thread_id, state=new_state.value, **fields)
        return new_state

    async def _run(
        self,
        key: ConversationKey,
        agent: AgentDefinition,
        graph: CompiledStateGraph,
        config: RunnableConfig,
        record: ThreadRecord,
        graph_input: Any,
        *,
        user_text: str | None = None,
        request: dict[str, Any] | None = None,
        status: StatusMessage | None = None,
        resumed: dict[str, Any] | None = None,
        language: Language | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """One run of the graph as a turn. `resumed` (the recovery of an interrupted turn): the
        graph continues from its checkpoint (`graph_input` None) as the same turn, or, when the
        dict holds values, the run had finished and only its answer is given."""
        started = time.monotonic()
        language = language or language_for(None, user_text)  # what a failure is told in
        turn_no = record.turn + 1 if resumed is None else record.turn
        current = TurnState(record.state)
        if current in IN_FLIGHT:  # left in flight by another process that died
            current = await self._transition(key, current, TurnEvent.INTERRUPTED)
        fields: dict[str, Any] = {"turn": turn_no, "note": None, "agent": agent.name}
        if key.thread_id in self._entries:  # the queue entry it runs for: a crash is recovered from it
            fields["turn_entry"] = self._entries[key.thread_id]
        if resumed is None:
            fields["pending"] = request or {"text": (user_text or "")[:2000]}
        if status is not None:
            fields["status_message"] = status.message_id  # None clears an earlier turn's

            async def record_status(message_id: str) -> None:
                await self.app_db.update_thread(key.thread_id, status_message=message_id)

            status.on_posted = record_status
        current = await self._transition(key, current, TurnEvent.USER_MESSAGE, **fields)
        final: Final | Failure | None = None
        outcome = _Outcome(values=dict(resumed or {}))
        planner_steps: list[str] = []
        PLANNER_STEPS.set(planner_steps)  # the model provider notes tool calls the planner made
        TURN_ENDS.set(time.monotonic() + self.settings.turn_deadline)
        try:
            async with asyncio.timeout(self.settings.turn_deadline):
                if not resumed:
                    # Each checkpoint of the run names its turn, so a recovery can tell whether
                    # this turn's input ever reached the checkpoint (see `recover`).
                    stamped: RunnableConfig = {**config, "metadata": {**config.get("metadata", {}), TURN_STAMP: turn_no}}
                    async for event in self._stream(graph, stamped, graph_input, outcome, agent):
                        if isinstance(event, ToolStarted) and current is not TurnState.TOOL_CALL:
                            current = await self._transition(key, current, TurnEvent.TOOL_REQUIRED)
                        elif isinstance(event, ToolFinished) and current is TurnState.TOOL_CALL:
                            current = await self._transition(key, current, TurnEvent.TOOL_DONE)
                        yield event
                if outcome.interrupts:
                    final = agent.interrupted(outcome.interrupts[0].value)
                else:
                    final = await _with_attachments(agent, dict(outcome.values), agent.final(dict(outcome.values)))
                if planner_steps:
                    final = final.model_copy(update={"text": final.text + say("planner_footer", language)})
                if resumed is not None:
                    final = final.model_copy(update={"text": final.text + say("resumed_footer", language)})
        except asyncio.CancelledError:
            # Stopped mid-turn (shutdown): the graph's last checkpoint stands; mark the turn
            # interrupted now, so the next start resumes it (the status message id stays recorded).
            if status is not None:
                status.on_posted = None
            with contextlib.suppress(Exception):
                await asyncio.shield(self._transition(key, current, TurnEvent.INTERRUPTED, note=INTERRUPTED))
            raise
        except TurnFailed as exc:
            final = Failure(kind=exc.kind, user_message=exc.said(language), retry_after=exc.retry_after)
        except TimeoutError:
            strategy = FAULT_TABLE[FaultClass.DEADLINE]
            ja = language == "ja" and strategy.user_message_ja
            final = Failure(kind=strategy.failure, user_message=strategy.user_message_ja if ja else strategy.user_message)
        except GraphRecursionError:
            final = Failure(kind="internal", user_message=say("went_round", language))
        except BadInput as exc:
            final = Failure(kind="bad_input", user_message=exc.said(language))
        except Exception:
            log.exception("turn failed in %s", config["configurable"]["thread_id"])
            final = Failure(kind="internal", user_message=say("internal_error", language))
        if status is not None:
            status.on_posted = None  # the answer replaces the status message from here on
        if isinstance(final, Failure):
            try:
                await self._transition(key, current, TurnEvent.FAILED, pending=None, status_message=None)
            except Exception:  # the user is told all the same: a failure is never silent
                log.exception("could not record the failed turn of %s", key.thread_id)
            yield final
            return
        current = await self._transition(key, current, TurnEvent.LLM_DONE)
        try:
            yield final
        finally:
            done = {"state": next_state(current, TurnEvent.MESSAGE_SENT).value, "pending": None,
                    "status_message": None, "note": AWAITING if outcome.interrupts else None}
            held = self._held.get(key.thread_id)
            if held is not None:
                held.final_update = done  # written as the turn leaves the queue, in the same round trip
            else:
                await self.app_db.update_thread(key.thread_id, **done)
            if turn_no % PRUNE_EVERY == 0:
                await self.checkpoints.prune(config["configurable"]["thread_id"], self.settings.checkpoints_kept)
            log.info("turn %s of %s done in %.3fs", turn_no, key.thread_id, time.monotonic() - started)

    async def _stream(
        self, graph: CompiledStateGraph, config: RunnableConfig, graph_input: Any, outcome: _Outcome,
        agent: AgentDefinition,
    ) -> AsyncIterator[StreamEvent]:
        """Translate LangGraph's stream into stream events; the final state lands in `outcome`."""
        stream: AsyncIterator[Any] = graph.astream(
            graph_input, config, stream_mode=["messages", "updates", "custom", "values"], durability=agent.durability
        )
        narrated = agent.narrates_tools
        async for mode, chunk in stream:
            if mode == "values":
                outcome.values = chunk
            elif mode == "messages":
                message, metadata = chunk
                if (
                    isinstance(message, AIMessageChunk)
                    and "nostream" not in (metadata.get("tags") or [])
                    and isinstance(message.content, str)
                    and message.content
                ):
                    yield Token(text=message.content)
            elif mode == "updates":
                if INTERRUPT in (chunk or {}):
                    outcome.interrupts = list(chunk[INTERRUPT])
                    continue
                for update in (chunk or {}).values():
                    for message in _messages_of(update):
                        if isinstance(message, AIMessage) and message.tool_calls:
                            for call in message.tool_calls:
                                yield ToolStarted(
                                    name=call["name"], args_summary=_summarise_args(call["args"]), narrated=narrated
                                )
                        elif isinstance(message, ToolMessage):
                            yield ToolFinished(
                                name=message.name or "tool", summary=_first_line(message.content), narrated=narrated
                            )
            elif mode == "custom":
                if isinstance(chunk, Status | Token | ToolStarted | ToolFinished):
                    yield chunk
                elif isinstance(chunk, dict) and "status" in chunk:
                    yield Status(text=str(chunk["status"]))


async def _with_attachments(agent: AgentDefinition, state: dict[str, Any], final: Final) -> Final:
    """The agent's files added to its answer; a failure to make them never fails the turn."""
    try:
        files = list(await agent.attachments(state))
    except Exception:
        log.warning("%s: attachments failed; answering without them", agent.name, exc_info=True)
        return final
    return final.model_copy(update={"files": [*final.files, *files]}) if files else final


def _messages_of(update: Any) -> list[Any]:
    if isinstance(update, dict):
        messages = update.get("messages")
    elif isinstance(update, BaseModel):
        messages = getattr(update, "messages", None)
    else:
        return []
    if messages is None:
        return []
    return messages if isinstance(messages, list) else [messages]


def _summarise_args(args: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v}" for k, v in args.items() if v not in (None, "", [], {}))
    return text if len(text) <= 200 else text[:199] + "…"


def _first_line(content: Any) -> str:
    text = content if isinstance(content, str) else str(content)
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 200 else line[:199] + "…"
