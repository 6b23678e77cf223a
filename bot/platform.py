"""What every chat platform's front end shares around the runtime and the turn renderer: the
background work and its shutdown, recovery of turns a restart stopped, the access gate's early
answer, `/reset`, button presses, attached files and users' profiles. A platform subclasses
`PlatformBot` and supplies only its own calls: where a conversation is and how to reach it."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import aiohttp
from pydantic_settings import BaseSettings

from bot.agent import IncomingFile, TurnInput
from bot.attachments import FileRejected
from bot.commands import RESET, Command
from bot.config import ConfigError, Settings, env_name
from bot.conversation import ConversationKey
from bot.events import StreamEvent
from bot.locale import Language, currency_for_locale, language_for
from bot.loop import startup_complete
from bot.phrases import say
from bot.render import WORKING, StatusMessage, Surface, TurnRenderer
from bot.runtime import FILES_NOT_KEPT, Admission, ConversationRuntime, replayed
from bot.storage import QueuedTurn, ThreadRecord
from bot.supervisor import TaskSupervisor

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 20.0  # seconds turns in progress get to finish on SIGTERM
PROFILE_TTL = 3600.0  # seconds a user's locale and time zone are kept
PROFILES_KEPT = 10_000


def asked_line(mention: str, command_line: str, text: str) -> str:
    """A command's root message, who asked what, in the language the request is written in."""
    return f"{mention} さんの依頼: {command_line}" if language_for(None, text) == "ja" else f"{mention} asked {command_line}"


def require_settings(settings: BaseSettings, platform: str, needed: dict[str, str]) -> dict[str, str]:
    """The secret values of the settings in `needed` (environment name → where to find the value)
    of a platform's settings model; one ConfigError naming every one that is unset, so an operator
    fixes them all in one go."""
    fields = {env_name(type(settings), name): name for name in type(settings).model_fields}
    values = {name: getattr(settings, fields[name]) for name in needed}
    missing = [f"  {name}: {hint}" for name, hint in needed.items() if values[name] is None]
    if missing:
        raise ConfigError(f"{platform} is not configured:\n" + "\n".join(missing))
    return {name: value.get_secret_value() for name, value in values.items()}


def locale_fields(locale: str | None, timezone: str | None = None) -> dict[str, str]:
    """TurnInput fields for what a platform knows of a user: locale (and the currency it implies),
    time zone. What it does not know keeps the defaults."""
    fields = {"locale": locale, "currency": currency_for_locale(locale)} if locale else {}
    return fields | ({"timezone": timezone} if timezone else {})


class Profiles:
    """Users' turn fields (`locale_fields`), fetched from the platform once per `ttl` seconds;
    `known` gives what is kept without asking (for an answer that cannot wait for the platform)."""

    def __init__(self, fetch: Callable[[str], Awaitable[dict[str, str]]], ttl: float = PROFILE_TTL) -> None:
        self.fetch, self.ttl = fetch, ttl
        self._kept: dict[str, tuple[float, dict[str, str]]] = {}  # user → (fetched at, fields)

    def _fresh(self, user_id: str) -> dict[str, str] | None:
        cached = self._kept.get(user_id)
        return cached[1] if cached is not None and time.monotonic() - cached[0] < self.ttl else None

    def known(self, user_id: str) -> dict[str, str]:
        return self._fresh(user_id) or {}

    async def __call__(self, user_id: str) -> dict[str, str]:
        fields = self._fresh(user_id)
        if fields is None:
            fields = await self.fetch(user_id)
            if len(self._kept) > PROFILES_KEPT:
                self._kept.clear()
            self._kept[user_id] = (time.monotonic(), fields)
        return fields


class PlatformBot:
    """One platform's front end. `tasks` holds the work started after an acknowledgement; `close()`
    lets it finish (or stops it: the turn resumes on the next start). Subclasses set `platform`
    (the ConversationKey platform) and implement `recovery_surface`."""

    platform = "platform"
    profiles: Profiles | None = None

    def __init__(self, settings: Settings, runtime: ConversationRuntime, *, gate: Callable[[], Awaitable[None]] | None = None) -> None:
        self.settings = settings
        self.runtime = runtime
        self.tasks = TaskSupervisor(gate=gate, name=f"{self.platform} work")
        self._session: aiohttp.ClientSession | None = None
        self._recovered = False
        runtime.adopt_orphans(self.platform, self._adopted)

    def http(self) -> aiohttp.ClientSession:
        """A session for downloads (attached files), opened on first use."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def close(self, within: float = 10.0) -> None:
        """Let turns in progress finish (up to `within` seconds), then stop the rest."""
        await self.tasks.close(within)
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def profile(self, user_id: str) -> dict[str, str]:
        """The user's `locale_fields`, where the platform can look them up (`profiles`)."""
        return await self.profiles(user_id) if self.profiles is not None else {}

    def known_profile(self, user_id: str) -> dict[str, str]:
        """What `profile` would give without asking the platform: for an answer that cannot wait."""
        return self.profiles.known(user_id) if self.profiles is not None else {}

    def refusal(self, turn: TurnInput) -> str | None:
        """The access policy's answer for a turn, known before it runs: a platform answers it at
        once and privately (the runtime refuses the turn too, should it get there)."""
        return self.runtime.gate.policy.refusal(self.platform, turn)

    def command(self, name: str, text: str, *, key: ConversationKey | None, has_files: bool = False, **fields: Any) -> TurnInput | str:
        """A native slash command (`fields`: the TurnInput's who and where): the turn to run, or the
        reply to give at once and privately: help or usage, `/reset`'s, the access policy's refusal,
        why the runtime would refuse the text (too long for the agent, binary), so a request that
        cannot run opens no thread."""
        found = self.runtime.commands.get(name)
        language = language_for(fields.get("locale"), text)
        if found is RESET:  # a direct message's rolling conversation; a command's thread has nothing to reset
            if not fields.get("direct") or key is None:
                return say("reset_elsewhere", language)
            self.tasks.spawn(self.runtime.reset(key), name=f"{self.platform} reset")
            return say("reset_done", language)
        if found is None or found.agent is None or (found.needs_input and not text and not has_files):
            return self.usage(found if found is not None and found.agent is not None else None, language)
        turn = TurnInput(text=text, command=found.name, **fields)
        problem = self.runtime.input_problem(turn)
        refusal = problem.user_message if problem is not None else self.refusal(turn)
        return turn if refusal is None else self.plain(refusal)

    def usage(self, command: Command | None, language: Language = "en") -> str:
        """The reply to an agent command without its input; `None`: to `/help` or an unknown command."""
        return command.usage_line(language) if command is not None else self.runtime.commands.help_text(language=language)

    def plain(self, text: str) -> str:
        """Plain words as the platform's markup, for replies outside a turn (`Surface.plain` inside)."""
        return text

    async def command_thread(self, key: ConversationKey, turn: TurnInput, *, opened: bool) -> ArrivedMessage:
        """A command's turn, admitted in its conversation as soon as that exists (`opened`: a thread
        the command's root message just started): it takes the thread's first place in the queue,
        so a reply sent there at once runs after it, and the thread is recorded with the command's
        agent, so a reply reaches that agent through whichever replica the platform delivers it to.
        `answer` runs it."""
        arrived = ArrivedMessage(turn, (), await self.runtime.admit(key, turn))
        if opened:
            command = self.runtime.commands.get(turn.command or "")
            await self.runtime.bind(key, command.agent if command is not None else None)
        return arrived

    # --- turns a restart stopped -----------------------------------------------------------------
    def recover_interrupted(self) -> None:
        """Answer, once per start, the turns of this platform a crash or shutdown stopped, and
        take over the turns a process that died had queued (in their places)."""
        if self._recovered:
            return
        self._recovered = True
        self.tasks.spawn(self._recover_all(), name=f"{self.platform} recover turns")

    async def _recover_all(self) -> None:
        adopted = await self.runtime.adopt_orphaned_turns(self.platform)
        for thread_id in list(self.runtime.interrupted_at_start):
            key = ConversationKey.parse(thread_id)
            if key.platform == self.platform and thread_id not in adopted:
                self.tasks.spawn(self._recover_turn(key), name=f"{self.platform} recover turn")

    async def _recover_turn(self, key: ConversationKey, queued: QueuedTurn | None = None) -> None:
        """The old status message becomes the resumed turn's (or the offer to run it again)."""
        record = await self.runtime.interrupted_turn(key)
        surface = None if record is None else await self.recovery_surface(key, record)
        if record is None or surface is None:
            return
        status = StatusMessage()
        await self.render(
            surface, self.runtime.recover(key, status=status, queued=queued), status=status, working="",
            replacing=record.status_message,
        )

    def _adopted(self, key: ConversationKey, queued: QueuedTurn, started: bool) -> None:
        self.tasks.spawn(self._run_adopted(key, queued, started), name=f"{self.platform} adopted turn")

    async def _run_adopted(self, key: ConversationKey, queued: QueuedTurn, started: bool) -> None:
        """A turn a process that died had queued, in its place: recovered if it had started, else
        run from its request and answered where it was asked."""
        try:
            if started:
                await self._recover_turn(key, queued)
                return
            request = queued.request or {}
            record = await self.runtime.app_db.ensure_thread(key.thread_id, key.platform)
            surface = await self.recovery_surface(key, dataclasses.replace(record, pending={"user": request.get("user_id")}))
            if surface is None:
                return
            if request.get(FILES_NOT_KEPT):  # its files were never kept: the user is asked again
                lost = say("files_lost", language_for(None, str(request.get("text") or "")))
                await surface.post(surface.plain(lost))
                return
            await self.run(surface, key, replayed(request), queued=queued)
        finally:
            await self.runtime.abandon(queued)  # whatever did not run leaves the queue

    async def recovery_surface(self, key: ConversationKey, record: ThreadRecord) -> Surface | None:
        """Where an interrupted turn of `key` is answered (`record.pending` holds its user), or None."""
        raise NotImplementedError

    # --- turns -----------------------------------------------------------------------------------
    async def fetch_file(self, meta: Any) -> IncomingFile:
        """One attached file, checked and downloaded; FileRejected (shown to the user) if refused."""
        raise FileRejected("I can't read files here.", ja="ここではファイルを読めません。")

    async def fetch_files(self, files: Iterable[Any]) -> tuple[IncomingFile, ...]:
        """Attached files fetched one by one; FileRejected for the first one refused."""
        return tuple([await self.fetch_file(meta) for meta in files])

    async def attachments(
        self, files: Iterable[Any], surface: Surface, language: Language = "en"
    ) -> tuple[IncomingFile, ...] | None:
        """Attached files fetched one by one; None, the user told why on `surface` (in `language`),
        if one is refused."""
        try:
            return await self.fetch_files(files)
        except FileRejected as rejected:
            await surface.post(f"⚠️ {surface.plain(rejected.said(language))}")
            return None

    async def message(
        self, surface: Surface, key: ConversationKey, text: str, *, delivery_id: str | None, files: Iterable[Any] = (),
        user_id: str, bind: bool = False, **fields: Any,
    ) -> None:
        """A user's message, admitted and answered (`admit_message`, then `answer`)."""
        arrived = await self.admit_message(key, text, delivery_id=delivery_id, files=files, user_id=user_id, bind=bind, **fields)
        if arrived is not None:
            await self.answer(surface, key, arrived)

    async def admit_message(
        self, key: ConversationKey, text: str, *, delivery_id: str | None, files: Iterable[Any] = (),
        user_id: str, bind: bool = False, **fields: Any,
    ) -> ArrivedMessage | None:
        """What must be durable before a platform is told a message arrived: the message, a command
        at its start recognised ("/hotel Paris"), let through the gate and queued in its thread
        with its delivery claimed (platforms redeliver what they were not told of; a duplicate is
        claimed already). None: nothing to answer (no text, no files). `bind`: the message opens
        a thread the bot now owns (a mention), recorded for every replica unless the access policy
        refuses its sender (the runtime then answers the refusal and records nothing). Files are
        fetched later, by `answer`."""
        files = tuple(files)
        if not (text or files):
            return None
        turn = self.runtime.commands.turn(text, user_id=user_id, delivery_id=delivery_id, **fields)
        if bind and self.refusal(turn) is None:
            await self.runtime.bind(key)
        return ArrivedMessage(turn, files, await self.runtime.admit(key, turn, files_follow=bool(files)))

    async def answer(self, surface: Surface, key: ConversationKey, arrived: ArrivedMessage) -> None:
        """An admitted message: its refusal shown, or its files fetched and its turn run and rendered
        in its place in the queue. A turn that cannot run (a file refused) leaves the queue; one
        stopped by a shutdown stays queued, for the next start to adopt."""
        admission = arrived.admission
        if admission.refused is not None:
            await self.render(surface, _events(admission.refused))
            return
        if admission.queued is None:
            log.info("repeated delivery %s ignored", arrived.turn.delivery_id)
            return
        try:
            turn = await self._complete(surface, arrived)
        except Exception:  # not a cancellation: a turn a shutdown stops stays queued
            await self.runtime.abandon(admission.queued)
            raise
        if turn is None:
            await self.runtime.abandon(admission.queued)
            return
        await self.run(surface, key, turn, queued=admission.queued)

    async def _complete(self, surface: Surface, arrived: ArrivedMessage) -> TurnInput | None:
        """The admitted turn with its files and the user's profile; None, the user told why, if a
        file is refused."""
        turn = arrived.turn.but(**await self.profile(arrived.turn.user_id))  # its locale says a refusal's language
        if arrived.files:
            attachments = await self.attachments(arrived.files, surface, language_for(turn.locale, turn.text))
            if attachments is None:
                return None
            turn = turn.but(attachments=attachments)
            problem = self.runtime.input_problem(turn)
            if problem is not None:
                await self.render(surface, _events(problem))
                return None
        return turn

    async def press(
        self, surface: Surface, key: ConversationKey, value: str, *, origin: TurnInput,
        delivery_id: str | None = None, answered: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """A button press answering the conversation's waiting question (or running the command
        line it carries). A press the access policy refuses is told so privately (the buttons
        stay). With `answered`, nothing is shown until the press turns out to answer something;
        then `answered()` (e.g. mark the buttons answered) and the turn are shown."""
        refusal = self.refusal(origin)
        if refusal is not None:
            await surface.report(surface.plain(refusal))
            return
        status = StatusMessage()
        events = self.runtime.resume(
            key, value, user_id=origin.user_id, delivery_id=delivery_id, origin=origin, status=status
        )
        first = None
        if answered is not None:
            first = await anext(events, None)
            if first is None:
                log.info("button on %s pressed again; nothing was waiting", key)
                return
            await answered()
        await self.render(surface, events, first=first, status=status)

    async def run(self, surface: Surface, key: ConversationKey, turn: TurnInput, *, queued: QueuedTurn | None = None) -> None:
        """Run a turn and render it; the runtime records where its status message is."""
        status = StatusMessage()
        await self.render(surface, self.runtime.handle(key, turn, status=status, queued=queued), status=status,
                          working=say("working", language_for(turn.locale, turn.text)))

    async def render(
        self, surface: Surface, events: AsyncIterator[StreamEvent], *, first: StreamEvent | None = None,
        status: StatusMessage | None = None, working: str = WORKING, replacing: str | None = None,
    ) -> StreamEvent | None:
        return await TurnRenderer(surface, working=working, status=status, replacing=replacing).run(events, first=first)


@dataclasses.dataclass(frozen=True)
class ArrivedMessage:
    """A user's message as `PlatformBot.admit_message` left it: the turn (files still to fetch)
    and what the runtime's admission made of it."""

    turn: TurnInput
    files: tuple[Any, ...]
    admission: Admission


async def _events(*events: StreamEvent) -> AsyncIterator[StreamEvent]:
    for event in events:
        yield event


@contextlib.asynccontextmanager
async def serving(bot: PlatformBot) -> AsyncIterator[PlatformBot]:
    """The bot is serving while the block runs; on the way out turns in progress get
    SHUTDOWN_GRACE seconds to finish, and the rest stop (to resume on the next start)."""
    startup_complete()
    try:
        yield bot
    finally:
        log.info("shutting down: waiting for turns in progress")
        await bot.close(within=SHUTDOWN_GRACE)
