"""The Slack front end on bolt's AsyncApp: Slack requests → ConversationKey + structured turns;
stream events → the core's turn renderer on a SlackSurface. Listeners ack first, then the work
runs under the core's task supervisor."""

from __future__ import annotations

import asyncio
import html
import logging
import random
import re
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp, AsyncAssistant
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
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
from adapters.slack.surface import DM_THREAD, Place, SlackSurface, error_code
from bot.agent import IncomingFile, TurnInput
from bot.attachments import FileRejected
from bot.commands import RESET, CommandTable
from bot.config import ConfigError, Settings
from bot.conversation import ConversationKey
from bot.events import StreamEvent
from bot.locale import currency_for_locale
from bot.render import WORKING, StatusMessage, TurnRenderer
from bot.runtime import ConversationRuntime
from bot.supervisor import AckFirst, TaskSupervisor

log = logging.getLogger(__name__)

HANDLED_SUBTYPES = (None, "file_share", "thread_broadcast")
MAX_RETRY_AFTER = 60.0  # seconds: a longer Retry-After is capped, so no call holds a turn for minutes
RESET_DONE = "Starting a fresh conversation."
RESET_ELSEWHERE = (
    "Each command starts its own thread, so there is nothing to reset here. "
    "In a direct message with me, `/reset` starts a fresh conversation."
)
INCOMPLETE_COMMAND = (
    "Slack did not say which channel or user this command came from, so I can't answer it. "
    "Please try again from a channel or a direct message with me."
)
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_CHANNEL = re.compile(r"<#([CG][A-Z0-9]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>")


class RateLimitRetryHandler(AsyncRetryHandler):
    """Waits out Slack's rate limit, however it is said: HTTP 429, or `ok: false, error:
    "ratelimited"` in a 200. Retry-After is honoured when present, else a short backoff."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None:
            return False
        body = response.body if isinstance(response.body, dict) else {}
        return response.status_code == 429 or (body.get("ok") is False and body.get("error") == "ratelimited")

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        state.next_attempt_requested = True
        wait = retry_after(response)
        if wait is None:
            wait = self.interval_calculator.calculate_sleep_duration(state.current_attempt)
        log.info("Slack rate limit on %s; waiting %.1fs", request.url.rsplit("/", 1)[-1], wait)
        await asyncio.sleep(wait + random.random() * 0.2)
        state.increment_current_attempt()


def retry_after(response: HttpResponse | None) -> float | None:
    """Seconds from a Retry-After header (case-insensitive), if there is a usable one."""
    for name, values in (response.headers if response is not None else {}).items():
        if name.lower() == "retry-after" and values:
            try:
                return min(MAX_RETRY_AFTER, max(0.0, float(values[0])))
            except ValueError:
                return None
    return None


def make_client(settings: Settings, *, session: aiohttp.ClientSession | None = None) -> AsyncWebClient:
    """The Web API client at SLACK_API_BASE_URL. Every call made with it (the editor's and the rest)
    waits out rate limits (RateLimitRetryHandler) and retries 5xx answers and dropped connections."""
    if settings.slack_bot_token is None:
        raise ConfigError("SLACK_BOT_TOKEN is not set (the bot token, xoxb-…).")
    base = settings.slack_api_base_url
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=base if base.endswith("/") else base + "/",
        session=session,
        timeout=30,
        retry_handlers=[
            # The one retry policy for Slack calls: the renderer does not retry what these
            # retried (SlackSurface.retryable). A rate limit is waited out longer than a failure.
            RateLimitRetryHandler(max_retry_count=4),
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
            AsyncServerErrorRetryHandler(max_retry_count=2),
        ],
    )


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


PROFILE_TTL = 3600.0  # seconds a user's locale and time zone are kept
PROFILES_KEPT = 10_000


class SlackBot:
    """The bolt app and the background work it starts (`tasks`). `start()` before serving."""

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
        self._profiles: dict[str, tuple[float, dict[str, str]]] = {}  # user → (fetched at, turn fields)
        self._register()

    async def profile(self, user_id: str) -> dict[str, str]:
        """The user's locale, time zone and the currency their locale implies, from `users.info`
        (kept an hour). Without the `users:read` scope, or when Slack fails, the defaults stay."""
        cached = self._profiles.get(user_id)
        now = time.monotonic()
        if cached is not None and now - cached[0] < PROFILE_TTL:
            return cached[1]
        fields: dict[str, str] = {}
        try:
            user = (await self.client.users_info(user=user_id, include_locale=True)).get("user") or {}
        except SlackApiError as exc:
            log.info("users.info failed (%s); default locale and time zone", error_code(exc))
            user = {}
        if user.get("locale"):
            fields["locale"] = str(user["locale"])
            fields["currency"] = currency_for_locale(fields["locale"])
        if user.get("tz"):
            fields["timezone"] = str(user["tz"])
        if len(self._profiles) > PROFILES_KEPT:
            self._profiles.clear()
        self._profiles[user_id] = (now, fields)
        return fields

    # --- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Check the token once at start-up (auth.test) so a bad token fails loudly and early;
        learn the bot's own user id (its mentions and messages)."""
        try:
            auth = await self.client.auth_test()
        except SlackApiError as exc:
            raise ConfigError(f"Slack rejected the bot token ({error_code(exc)}).") from None
        self.bot_user_id = auth.get("user_id")
        self.tasks.spawn(self.recover(), name="slack recovery")

    async def recover(self) -> None:
        """Turns a crash or shutdown stopped, answered now in their threads: each one's old status
        message becomes the resumed turn's (or the offer to run it again)."""
        for thread_id in list(self.runtime.interrupted_at_start):
            key = ConversationKey.parse(thread_id)
            if key.platform == "slack" and len(key.parts) == 3:
                self.tasks.spawn(self._recover_turn(key), name="slack recover turn")

    async def _recover_turn(self, key: ConversationKey) -> None:
        record = await self.runtime.interrupted_turn(key)
        if record is None:
            return
        team, channel, thread_ts = key.parts
        user = str((record.pending or {}).get("user") or "")
        place = Place(channel, None if thread_ts == DM_THREAD else thread_ts, team, user)
        status = StatusMessage()
        await self.run_turn(
            place, self.runtime.recover(key, status=status), status=status, working="",
            replacing=record.status_message,
        )

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
        # Registered last, so it only sees what no listener above took: acknowledged with 200
        # (a 404 makes Slack retry the event and, in time, turn the subscription off).
        app.event(re.compile(r".*"))(self.on_other_event)
        app.action(re.compile(r".*"))(self.on_other_action)
        app.error(self.on_error)

    async def on_other_event(self, event: dict[str, Any]) -> None:
        log.debug("Slack event %s ignored", event.get("type"))

    async def on_other_action(self, ack: AsyncAck, action: dict[str, Any]) -> None:
        await ack()  # e.g. a button on an old message whose feature is gone
        log.debug("Slack action %s ignored", str(action.get("action_id"))[:80])

    async def on_error(self, error: Exception, body: dict[str, Any]) -> None:
        log.error("Slack listener failed (%s): %s", body.get("type") or body.get("command"), type(error).__name__)

    # --- slash commands -------------------------------------------------------------------
    async def on_command(self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        commands = self.runtime.commands
        name = str(command.get("command", ""))
        text = str(command.get("text") or "").strip()
        channel, user = str(command.get("channel_id") or ""), str(command.get("user_id") or "")
        if not channel or not user:
            log.warning("Slack command %s without %s refused", name[:40], "a channel" if not channel else "a user")
            await ack(text=INCOMPLETE_COMMAND, response_type="ephemeral")
            return
        place = Place(channel, None, str(command.get("team_id") or ""), user)
        in_dm = is_dm(channel) or command.get("channel_name") == "directmessage"
        found = commands.get(name)
        if found is RESET:  # a DM's rolling conversation; a command's thread has nothing to reset
            await ack(text=RESET_DONE if in_dm else RESET_ELSEWHERE, response_type="ephemeral")
            if in_dm:
                self.tasks.spawn(self.runtime.reset(place.key), name="slack reset")
            return
        if found is None or found.agent is None or (found.needs_input and not text):
            await ack(text=usage_help(commands, name if found and found.agent else None), response_type="ephemeral")
            return
        turn = TurnInput(
            text=text, command=found.name, user_id=place.user_id,
            workspace_id=place.team_id, channel_id=channel, direct=in_dm,
        )
        refusal = self.runtime.gate.policy.refusal("slack", turn)
        if refusal is not None:  # the runtime refuses it too; answered here, no public root message
            await ack(text=escape(refusal), response_type="ephemeral")
            return
        await ack()
        trigger = str(command.get("trigger_id") or "")
        self.tasks.spawn(
            self._command_turn(place, turn, in_dm=in_dm, respond=respond, trigger=trigger), name=f"slack {name}"
        )

    async def _command_turn(
        self, place: Place, turn: TurnInput, *, in_dm: bool, respond: AsyncRespond, trigger: str = ""
    ) -> None:
        """Post the root message (who asked what); its ts keys the conversation thread (in a DM,
        the command continues the DM's rolling conversation). A command is claimed once per
        trigger_id: a replayed request (same body, still correctly signed) starts nothing."""
        if trigger and not await self.runtime.claim_delivery(f"slack:command:{trigger}"):
            log.info("repeated Slack command ignored")
            return
        turn = turn.but(**await self.profile(place.user_id))
        asked = f"{user_link(place.user_id)} asked {quote_command(f'/{turn.command}', turn.text)}"
        try:
            root = await self.client.chat_postMessage(channel=place.channel, text=asked, unfurl_links=False)
        except SlackApiError as exc:
            code = error_code(exc)
            log.warning("cannot post the command's root message in %s: %s", place.channel, code)
            hint = (
                "Invite me to this channel (`/invite @Concierge`) or write to me directly."
                if code in ("not_in_channel", "channel_not_found")
                else f"Slack said `{code}`; please try again."
            )
            await respond(text=f"I can't post here. {hint}", response_type="ephemeral")
            return
        if not in_dm:
            place = replace(place, thread_ts=str(root["ts"]))
            self.runtime.opened(place.key)
        status = StatusMessage()
        await self.run_turn(place, self.runtime.handle(place.key, turn, status=status), respond=respond, status=status)

    # --- messages -------------------------------------------------------------------------
    def _is_from_bot(self, event: dict[str, Any]) -> bool:
        return bool(event.get("bot_id") or event.get("bot_profile")) or event.get("user") in (None, self.bot_user_id)

    @staticmethod
    def _place(body: dict[str, Any], event: dict[str, Any], thread_ts: str | None, assistant: bool = False) -> Place:
        team = str(body.get("team_id") or event.get("team") or "")
        return Place(str(event["channel"]), thread_ts, team, str(event["user"]), assistant)

    async def on_mention(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """An @mention: continues the thread's conversation, or starts one keyed on this message."""
        if self._is_from_bot(event):
            return
        place = self._place(body, event, str(event.get("thread_ts") or event["ts"]))
        self.runtime.opened(place.key)
        self.tasks.spawn(self._message_turn(body, event, place), name="slack mention")

    async def on_message(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """Channel thread replies in a thread the bot owns; top-level DMs (one rolling conversation).
        Threaded DMs are assistant threads (on_assistant_message); mentions are on_mention's."""
        if event.get("subtype") not in HANDLED_SUBTYPES or self._is_from_bot(event):
            return
        thread_ts = event.get("thread_ts") or None
        if is_dm(str(event["channel"]), event.get("channel_type")):
            self.tasks.spawn(self._message_turn(body, event, self._place(body, event, thread_ts)), name="slack dm")
        elif self.bot_user_id and f"<@{self.bot_user_id}" in str(event.get("text") or ""):
            return  # on_mention answers it
        elif thread_ts and thread_ts != event.get("ts"):
            place = self._place(body, event, str(thread_ts))
            self.tasks.spawn(self._message_turn(body, event, place, owned_only=True), name="slack reply")

    async def on_assistant_thread_started(self, say: Any, set_suggested_prompts: Any) -> None:
        commands = self.runtime.commands
        await say(f"Hi! {to_mrkdwn(commands.help_text())}\nAsk away, here in this thread.")
        prompts = suggested_prompts(commands)
        if prompts:
            await set_suggested_prompts(prompts=prompts, title="Try one of these:")

    async def on_assistant_context_changed(self) -> None:
        """The channel the user is viewing changed; the agents do not use it."""

    async def on_assistant_message(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        if not self._is_from_bot(event):
            place = self._place(body, event, str(event["thread_ts"]), assistant=True)
            self.tasks.spawn(self._message_turn(body, event, place), name="slack assistant")

    async def _message_turn(
        self, body: dict[str, Any], event: dict[str, Any], place: Place, *, owned_only: bool = False
    ) -> None:
        """A user message: claimed once per event_id (Slack retries), files fetched, turn rendered.
        `owned_only`: a channel thread reply, answered in the bot's own threads only."""
        if owned_only and not await self.runtime.owns(place.key):
            return
        event_id = body.get("event_id")
        if event_id and not await self.runtime.claim_delivery(f"slack:{event_id}"):
            log.info("retried Slack event %s ignored", event_id)
            return
        text = from_slack_text(str(event.get("text") or ""), self.bot_user_id)
        attachments = await self._attachments(event.get("files") or [], place)
        if attachments is None or not (text or attachments):
            return
        # A message may start with a command: assistant prompts and users write "/hotel Paris".
        turn = self.runtime.commands.turn(
            text, user_id=place.user_id, attachments=tuple(attachments), workspace_id=place.team_id,
            channel_id=place.channel, direct=is_dm(place.channel, event.get("channel_type")),
            **await self.profile(place.user_id),
        )
        status = StatusMessage()
        await self.run_turn(place, self.runtime.handle(place.key, turn, status=status), status=status)

    async def _attachments(self, files: list[dict[str, Any]], place: Place) -> list[IncomingFile] | None:
        """Shared files, checked and downloaded; None (the user told why) if one is refused."""
        try:
            return [await fetch_file(self.client, self._http(), meta, self.settings.max_attachment_bytes) for meta in files]
        except FileRejected as rejected:
            reason = f"⚠️ {escape(str(rejected))}"
        await self.client.chat_postMessage(channel=place.channel, thread_ts=place.thread_ts, text=reason)
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
        self.tasks.spawn(self._resume(body, action, *parsed), name="slack resume")

    async def _resume(self, body: dict[str, Any], action: dict[str, Any], key: ConversationKey, value: str) -> None:
        user = str(body["user"]["id"])
        message = body.get("message") or {}
        team, channel, thread_ts = key.parts
        where = TurnInput(text=value, user_id=user, workspace_id=team, channel_id=channel, direct=is_dm(channel))
        refusal = self.runtime.gate.policy.refusal("slack", where)
        if refusal is not None:  # the runtime refuses it too; told privately, the buttons stay
            await self.client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=None if thread_ts == DM_THREAD else thread_ts, text=escape(refusal)
            )
            return
        status = StatusMessage()
        events = self.runtime.resume(key, value, user_id=user, origin=where, status=status)
        first = await anext(events, None)
        if first is None:
            log.info("button on %s pressed again; nothing was waiting", key)
            return
        if message.get("ts") and message.get("blocks"):
            label = str((action.get("text") or {}).get("text") or value)  # Slack sends a button's text
            blocks = answered_blocks(message["blocks"], action_id=str(action["action_id"]), label=label, user_id=user)
            try:
                await self.client.chat_update(
                    channel=channel, ts=message["ts"], text=str(message.get("text") or label), blocks=blocks
                )
            except SlackApiError as exc:
                log.warning("could not mark the buttons answered: %s", error_code(exc))
        place = Place(channel, None if thread_ts == DM_THREAD else thread_ts, team, user)
        await self.run_turn(place, events, first=first, status=status)

    # --- rendering ------------------------------------------------------------------------
    async def run_turn(
        self,
        place: Place,
        events: AsyncIterator[StreamEvent],
        *,
        first: StreamEvent | None = None,
        respond: AsyncRespond | None = None,
        status: StatusMessage | None = None,
        working: str = WORKING,
        replacing: str | None = None,
    ) -> StreamEvent | None:
        surface = SlackSurface(
            self.client,
            place,
            edit_interval=self.settings.edit_interval,
            native_streaming=self.settings.slack_native_streaming,
            respond=respond,
        )
        renderer = TurnRenderer(surface, working=working, status=status, replacing=replacing)
        return await renderer.run(events, first=first)
