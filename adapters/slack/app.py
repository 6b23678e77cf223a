"""The Slack front end on bolt's AsyncApp: Slack requests → ConversationKey + structured turns;
stream events → the core's turn renderer on a SlackSurface. Listeners ack first, then the work
runs under the core's task supervisor."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp, AsyncAssistant
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import (
    LINK_ACTION,
    RESUME_ACTION,
    answered_blocks,
    quote_command,
    user_link,
)
from adapters.slack.files import fetch_file
from adapters.slack.mrkdwn import escape, to_mrkdwn
from adapters.slack.sinks import error_code
from adapters.slack.surface import Place, SlackSurface, send_with_retry
from bot.agent import IncomingFile, TurnInput
from bot.attachments import FileRejected
from bot.commands import RESET, CommandTable
from bot.config import ConfigError, Settings
from bot.conversation import ConversationKey
from bot.events import StreamEvent
from bot.render import TurnRenderer
from bot.runtime import ConversationRuntime
from bot.supervisor import AckFirst, TaskSupervisor

log = logging.getLogger(__name__)

DM_THREAD = "dm"  # the thread part of a DM's rolling conversation key
HANDLED_SUBTYPES = (None, "file_share", "thread_broadcast")
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_CHANNEL = re.compile(r"<#([CG][A-Z0-9]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>")


def make_client(settings: Settings, *, session: aiohttp.ClientSession | None = None) -> AsyncWebClient:
    """The Web API client: SLACK_API_BASE_URL, 429s retried after Retry-After, transient errors retried."""
    if settings.slack_bot_token is None:
        raise ConfigError("SLACK_BOT_TOKEN is not set (the bot token, xoxb-…).")
    base = settings.slack_api_base_url
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=base if base.endswith("/") else base + "/",
        session=session,
        timeout=30,
        retry_handlers=[
            AsyncRateLimitErrorRetryHandler(max_retry_count=2),
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
            AsyncServerErrorRetryHandler(max_retry_count=1),
        ],
    )


def thread_key(team: str, channel: str, thread_ts: str) -> ConversationKey:
    return ConversationKey.slack(team, channel, thread_ts)


def dm_key(team: str, channel: str) -> ConversationKey:
    return ConversationKey.slack(team, channel, DM_THREAD)


def is_dm(channel_id: str, channel_type: str | None = None) -> bool:
    return channel_type == "im" or (channel_type is None and channel_id.startswith("D"))


def from_slack_text(text: str, bot_user_id: str | None) -> str:
    """Slack's message markup to the plain text agents read: mentions of the bot removed, links and
    channel references spelled out, entities unescaped."""
    text = _MENTION.sub(lambda m: "" if m.group(1) == bot_user_id else f"@{m.group(1)}", text)
    text = _CHANNEL.sub(lambda m: f"#{m.group(2) or m.group(1)}", text)
    text = _SPECIAL.sub(lambda m: f"@{m.group(1)}", text)

    def link(m: re.Match[str]) -> str:
        url, label = m.group(1), m.group(2)
        if not label or url.removeprefix("mailto:") == label or url.split("://", 1)[-1] == label:
            return label or url
        return f"{label} ({url})"

    text = _LINK.sub(link, text)
    return html.unescape(text).strip()


def usage_help(commands: CommandTable, command: str | None = None) -> str:
    """Ephemeral help for an empty or unknown command, in mrkdwn."""
    return to_mrkdwn(commands.help_text(command)) + (
        "\nEvery command starts a thread; reply there to continue (no mention needed). "
        "You can also mention me anywhere, or write to me directly."
    )


def suggested_prompts(commands: CommandTable) -> list[dict[str, str]]:
    """Up to four prompts for a new assistant thread, one per agent command, from its usage."""
    return [
        {"title": c.description[:75], "message": c.example()[:1000]}
        for c in commands.agent_commands()[:4]
        if c.usage
    ]


class SlackBot:
    """The bolt app and the background work it starts. `drain()` waits for in-flight turns."""

    def __init__(
        self,
        settings: Settings,
        runtime: ConversationRuntime,
        *,
        client: AsyncWebClient | None = None,
    ) -> None:
        if settings.slack_signing_secret is None:
            raise ConfigError("SLACK_SIGNING_SECRET is not set (Basic Information → Signing Secret).")
        self.settings = settings
        self.runtime = runtime
        self.client = client or make_client(settings)
        self.app = AsyncApp(
            client=self.client,
            signing_secret=settings.slack_signing_secret.get_secret_value(),
            name="concierge",
            logger=logging.getLogger("adapters.slack.bolt"),
        )
        self.ack_first = AckFirst()
        self.tasks = TaskSupervisor(gate=self.ack_first.wait, name="Slack work")
        self._session: aiohttp.ClientSession | None = None
        self.bot_user_id: str | None = None
        self._register()

    # --- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Check the token once at start-up (auth.test) so a bad token fails loudly and early."""
        try:
            auth = await self.client.auth_test()
        except SlackApiError as exc:
            raise ConfigError(f"Slack rejected the bot token ({error_code(exc)}).") from None
        self.bot_user_id = auth.get("user_id")

    async def drain(self, within: float | None = None) -> None:
        """Wait until every started turn has finished (or `within` seconds passed)."""
        await self.tasks.drain(within)

    async def close(self, within: float = 10.0) -> None:
        """Let turns in progress finish (up to `within` seconds), then stop the rest."""
        await self.tasks.close(within)
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def _bot_user(self, context: dict[str, Any]) -> str | None:
        if self.bot_user_id is None:
            self.bot_user_id = context.get("bot_user_id")
        return self.bot_user_id

    # --- wiring ---------------------------------------------------------------------------
    def _register(self) -> None:
        app = self.app
        assistant = AsyncAssistant()
        assistant.thread_started(self.on_assistant_thread_started)
        assistant.thread_context_changed(self.on_assistant_context_changed)
        assistant.user_message(self.on_assistant_message)
        app.assistant(assistant)
        app.command(re.compile(r"^/"))(self.on_command)
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)
        app.action(re.compile(rf"^{re.escape(RESUME_ACTION)}\."))(self.on_resume_button)
        app.action(re.compile(rf"^{re.escape(LINK_ACTION)}\."))(self.on_link_button)
        app.error(self.on_error)

    async def on_error(self, error: Exception, body: dict[str, Any]) -> None:
        log.error("Slack listener failed (%s): %s", body.get("type") or body.get("command"), type(error).__name__)

    # --- slash commands -------------------------------------------------------------------
    async def on_command(self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        commands = self.runtime.commands
        name = str(command.get("command", ""))
        text = str(command.get("text") or "").strip()
        channel = str(command["channel_id"])
        team = str(command.get("team_id") or "")
        user = str(command["user_id"])
        in_dm = is_dm(channel) or command.get("channel_name") == "directmessage"
        found = commands.get(name)
        if found is RESET:
            if not in_dm:
                await ack(
                    text="Each command starts its own thread, so there is nothing to reset here. "
                    "In a direct message with me, `/reset` starts a fresh conversation.",
                    response_type="ephemeral",
                )
                return
            await ack(text="Starting a fresh conversation.", response_type="ephemeral")
            self.tasks.spawn(self._reset(dm_key(team, channel)), name="slack reset")
            return
        if found is None or found.agent is None or (found.needs_input and not text):
            await ack(text=usage_help(commands, name if found and found.agent else None), response_type="ephemeral")
            return
        await ack()
        turn = TurnInput(text=text, command=found.name, user_id=user)
        self.tasks.spawn(self._command_turn(team, channel, turn, in_dm=in_dm, respond=respond), name=f"slack {name}")

    async def _reset(self, key: ConversationKey) -> None:
        async for _ in self.runtime.handle(key, TurnInput(text="", command=RESET.name)):
            pass

    async def _command_turn(
        self, team: str, channel: str, turn: TurnInput, *, in_dm: bool, respond: AsyncRespond
    ) -> None:
        """Post the root message (who asked what); its ts keys the conversation thread."""
        user = turn.user_id
        asked = f"{user_link(user)} asked {quote_command(f'/{turn.command}', turn.text)}"
        try:
            root = await send_with_retry(
                lambda: self.client.chat_postMessage(channel=channel, text=asked, unfurl_links=False),
                what="chat.postMessage",
            )
        except SlackApiError as exc:
            code = error_code(exc)
            log.warning("cannot post the command's root message in %s: %s", channel, code)
            hint = (
                "Invite me to this channel (`/invite @Concierge`) or write to me directly."
                if code in ("not_in_channel", "channel_not_found")
                else f"Slack said `{code}`; please try again."
            )
            await respond(text=f"I can't post here. {hint}", response_type="ephemeral")
            return
        if in_dm:
            key, place = dm_key(team, channel), Place(channel, None, team, user)
        else:
            ts = str(root["ts"])
            key, place = thread_key(team, channel, ts), Place(channel, ts, team, user)
            self.runtime.opened(key)
        await self.run_turn(key, place, self.runtime.handle(key, turn), report=self._responder(respond))

    @staticmethod
    def _responder(respond: AsyncRespond) -> Callable[[str], Awaitable[Any]]:
        async def report(text: str) -> Any:
            return await respond(text=text, response_type="ephemeral")

        return report

    # --- messages -------------------------------------------------------------------------
    def _is_from_bot(self, event: dict[str, Any]) -> bool:
        return bool(event.get("bot_id") or event.get("bot_profile")) or event.get("user") in (None, self.bot_user_id)

    async def on_mention(self, body: dict[str, Any], event: dict[str, Any], context: dict[str, Any]) -> None:
        """An @mention: continues the thread's conversation, or starts one keyed on this message."""
        await self._bot_user(context)
        if self._is_from_bot(event):
            return
        team = str(body.get("team_id") or event.get("team") or "")
        channel = str(event["channel"])
        root = str(event.get("thread_ts") or event["ts"])
        self.runtime.opened(thread_key(team, channel, root))
        self.tasks.spawn(
            self._message_turn(body, event, thread_key(team, channel, root), Place(channel, root, team, event["user"])),
            name="slack mention",
        )

    async def on_message(self, body: dict[str, Any], event: dict[str, Any], context: dict[str, Any]) -> None:
        """Channel thread replies in a thread the bot owns; top-level DMs (one rolling conversation).
        Threaded DMs are assistant threads (on_assistant_message); mentions are on_mention's."""
        bot_user = await self._bot_user(context)
        if event.get("subtype") not in HANDLED_SUBTYPES or self._is_from_bot(event):
            return
        team = str(body.get("team_id") or event.get("team") or "")
        channel = str(event["channel"])
        user = str(event["user"])
        if is_dm(channel, event.get("channel_type")):
            if event.get("thread_ts"):
                key, place = thread_key(team, channel, event["thread_ts"]), Place(channel, event["thread_ts"], team, user)
            else:
                key, place = dm_key(team, channel), Place(channel, None, team, user)
            self.tasks.spawn(self._message_turn(body, event, key, place), name="slack dm")
            return
        if bot_user and f"<@{bot_user}" in str(event.get("text") or ""):
            return  # on_mention answers it
        thread_ts = event.get("thread_ts")
        if not thread_ts or thread_ts == event.get("ts"):
            return
        key = thread_key(team, channel, str(thread_ts))
        self.tasks.spawn(self._thread_reply(body, event, key, Place(channel, str(thread_ts), team, user)), name="slack reply")

    async def _thread_reply(self, body: dict[str, Any], event: dict[str, Any], key: ConversationKey, place: Place) -> None:
        if await self.runtime.owns(key):
            await self._message_turn(body, event, key, place)

    async def on_assistant_thread_started(self, say: Any, set_suggested_prompts: Any) -> None:
        commands = self.runtime.commands
        await say(f"Hi! {to_mrkdwn(commands.help_text())}\nAsk away, here in this thread.")
        prompts = suggested_prompts(commands)
        if prompts:
            await set_suggested_prompts(prompts=prompts, title="Try one of these:")

    async def on_assistant_context_changed(self) -> None:
        """The channel the user is viewing changed; the agents do not use it."""

    async def on_assistant_message(self, body: dict[str, Any], event: dict[str, Any], context: dict[str, Any]) -> None:
        await self._bot_user(context)
        if self._is_from_bot(event):
            return
        team = str(body.get("team_id") or event.get("team") or "")
        channel, thread_ts = str(event["channel"]), str(event["thread_ts"])
        place = Place(channel, thread_ts, team, str(event["user"]), assistant=True)
        self.tasks.spawn(self._message_turn(body, event, thread_key(team, channel, thread_ts), place), name="slack assistant")

    async def _message_turn(
        self, body: dict[str, Any], event: dict[str, Any], key: ConversationKey, place: Place
    ) -> None:
        """A user message: claimed once per event_id (Slack retries), files fetched, turn rendered."""
        event_id = body.get("event_id")
        if event_id and not await self.runtime.claim_delivery(f"slack:{event_id}"):
            log.info("retried Slack event %s ignored", event_id)
            return
        text = from_slack_text(str(event.get("text") or ""), self.bot_user_id)
        attachments = await self._attachments(event.get("files") or [], place)
        if attachments is None:
            return
        if not text and not attachments:
            return
        # A message may start with a command: assistant prompts and users write "/hotel Paris".
        turn = self.runtime.commands.turn(text, user_id=place.user_id, attachments=tuple(attachments))
        await self.run_turn(key, place, self.runtime.handle(key, turn))

    async def _attachments(self, files: list[dict[str, Any]], place: Place) -> list[IncomingFile] | None:
        """Shared files, checked and downloaded; None (the user told why) if one is refused."""
        try:
            return [await fetch_file(self.client, self._http(), meta, self.settings.max_attachment_bytes) for meta in files]
        except FileRejected as rejected:
            reason = f"⚠️ {escape(str(rejected))}"
        await send_with_retry(
            lambda: self.client.chat_postMessage(channel=place.channel, thread_ts=place.thread_ts, text=reason),
            what="chat.postMessage",
        )
        return None

    # --- buttons --------------------------------------------------------------------------
    async def on_link_button(self, ack: AsyncAck) -> None:
        await ack()  # URL buttons open in the browser; Slack still expects an acknowledgement

    async def on_resume_button(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        parsed = ConversationKey.from_button_payload(str(action.get("value") or ""), "slack")
        channel = str((body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id") or "")
        team = str((body.get("team") or {}).get("id") or "")
        if parsed is None or parsed[0].parts[1] != channel or (team and parsed[0].parts[0] != team):
            log.warning("button value does not belong to this channel; ignored")
            return
        key, value = parsed
        self.tasks.spawn(self._resume(body, action, key, value), name="slack resume")

    async def _resume(self, body: dict[str, Any], action: dict[str, Any], key: ConversationKey, value: str) -> None:
        user = str(body["user"]["id"])
        message = body.get("message") or {}
        channel = key.parts[1]
        thread_ts = None if key.parts[2] == DM_THREAD else key.parts[2]
        events = self.runtime.resume(key, value, user_id=user)
        first = await anext(events, None)
        if first is None:
            log.info("button on %s pressed again; nothing was waiting", key)
            return
        label = str((action.get("text") or {}).get("text") or _button_label(message, str(action["action_id"])) or value)
        if message.get("ts") and message.get("blocks"):
            blocks = answered_blocks(message["blocks"], action_id=str(action["action_id"]), label=label, user_id=user)
            try:
                await send_with_retry(
                    lambda: self.client.chat_update(
                        channel=channel, ts=message["ts"], text=str(message.get("text") or label), blocks=blocks
                    ),
                    what="chat.update",
                )
            except SlackApiError as exc:
                log.warning("could not mark the buttons answered: %s", error_code(exc))
        team = key.parts[0]
        await self.run_turn(key, Place(channel, thread_ts, team, user), events, first=first)

    # --- rendering ------------------------------------------------------------------------
    async def run_turn(
        self,
        key: ConversationKey,
        place: Place,
        events: AsyncIterator[StreamEvent],
        *,
        first: StreamEvent | None = None,
        report: Callable[[str], Awaitable[Any]] | None = None,
    ) -> StreamEvent | None:
        surface = SlackSurface(
            self.client,
            place,
            key,
            edit_interval=self.settings.edit_interval,
            native_streaming=self.settings.slack_native_streaming,
            report=report,
        )
        return await TurnRenderer(surface).run(events, first=first)


def _button_label(message: dict[str, Any], action_id: str) -> str | None:
    for block in message.get("blocks") or []:
        for element in block.get("elements") or [] if block.get("type") == "actions" else []:
            if element.get("action_id") == action_id:
                return str((element.get("text") or {}).get("text") or "") or None
    return None
