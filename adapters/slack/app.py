"""The Slack front end on bolt's AsyncApp: Slack requests → ConversationKey + structured turns;
stream events → the core's turn renderer on a SlackSurface. Listeners ack first, then the work
runs under the core's task supervisor."""

from __future__ import annotations

import asyncio
import html
import logging
import random
import re
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

from adapters.slack.blocks import RESUME_ACTION, answered_blocks, quote_command, user_link
from adapters.slack.files import fetch_file
from adapters.slack.mrkdwn import escape, to_mrkdwn
from adapters.slack.settings import SlackSettings
from adapters.slack.surface import Place, SlackSurface, error_code
from bot.agent import IncomingFile, TurnInput
from bot.commands import Command, CommandTable
from bot.config import ConfigError, Settings
from bot.conversation import ConversationKey
from bot.locale import Language, language_for
from bot.phrases import say as phrase
from bot.platform import PlatformBot, Profiles, asked_line, locale_fields, require_settings
from bot.runtime import ConversationRuntime
from bot.storage import ThreadRecord
from bot.supervisor import AckFirst

log = logging.getLogger(__name__)

HANDLED_SUBTYPES = (None, "file_share", "thread_broadcast")
MAX_RETRY_AFTER = 60.0  # seconds: a longer Retry-After is capped, so no call holds a turn for minutes
INCOMPLETE_COMMAND = (
    "Slack did not say which channel or user this command came from, so I can't answer it. "
    "Please try again from a channel or a direct message with me."
)
REQUIRED = {  # setting → where its value is found
    "SLACK_BOT_TOKEN": "the Bot User OAuth Token (xoxb-…), from OAuth & Permissions",
    "SLACK_SIGNING_SECRET": "from Basic Information → App Credentials",
}
SOCKET_MODE_REQUIRED = {"SLACK_APP_TOKEN": "an app-level token (xapp-…) with connections:write, for Socket Mode"}
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
    slack = settings.section(SlackSettings)
    token = require_settings(slack, "Slack", {"SLACK_BOT_TOKEN": REQUIRED["SLACK_BOT_TOKEN"]})["SLACK_BOT_TOKEN"]
    base = slack.api_base_url
    return AsyncWebClient(
        token=token,
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


def usage_help(commands: CommandTable, command: str | None = None, language: Language = "en") -> str:
    """Ephemeral help for an empty or unknown command, in mrkdwn."""
    return to_mrkdwn(commands.help_text(command, language)) + "\n" + phrase("how_to_continue", language)


def suggested_prompts(commands: CommandTable, language: Language = "en") -> list[dict[str, str]]:
    """Up to four prompts for a new assistant thread, one per agent command, from its usage."""
    return [
        {"title": c.described(language)[:75], "message": c.example(language)[:1000]}
        for c in commands.agent_commands()[:4]
        if c.usage
    ]


class SlackBot(PlatformBot):
    """The bolt app and the background work it starts (`tasks`). `start()` before serving."""

    platform = "slack"

    def __init__(
        self,
        settings: Settings,
        runtime: ConversationRuntime,
        *,
        client: AsyncWebClient | None = None,
    ) -> None:
        self.slack = settings.section(SlackSettings)
        secret = require_settings(self.slack, "Slack", REQUIRED)["SLACK_SIGNING_SECRET"]
        self.ack_first = AckFirst()
        super().__init__(settings, runtime, gate=self.ack_first.wait)
        self.client = client or make_client(settings)
        # Listeners return before Slack is answered: a message is acknowledged only once it is
        # queued (admit_message), so a process that dies after the 200 leaves a turn another
        # process adopts, and one that dies before it gets the event delivered again. Listeners
        # only admit and spawn; every Slack call happens after the acknowledgement.
        self.app = AsyncApp(
            client=self.client,
            signing_secret=secret,
            name="concierge",
            logger=logging.getLogger("adapters.slack.bolt"),
            process_before_response=True,
        )
        self.bot_user_id: str | None = None
        self.profiles = Profiles(self._users_info)
        self._register()

    async def _users_info(self, user_id: str) -> dict[str, str]:
        """The user's locale and time zone from `users.info`. Without the `users:read` scope, or
        when Slack fails, the defaults stay."""
        try:
            user = (await self.client.users_info(user=user_id, include_locale=True)).get("user") or {}
        except SlackApiError as exc:
            log.info("users.info failed (%s); default locale and time zone", error_code(exc))
            user = {}
        return locale_fields(user.get("locale"), user.get("tz"))

    # --- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Check the token once at start-up (auth.test) so a bad token fails loudly and early;
        learn the bot's own user id (its mentions and messages)."""
        try:
            auth = await self.client.auth_test()
        except SlackApiError as exc:
            raise ConfigError(f"Slack rejected the bot token ({error_code(exc)}).") from None
        self.bot_user_id = auth.get("user_id")
        self.recover_interrupted()

    async def recovery_surface(self, key: ConversationKey, record: ThreadRecord) -> SlackSurface | None:
        if len(key.parts) != 3:
            return None
        return self.surface(Place.of(key, str((record.pending or {}).get("user") or "")))

    def surface(self, place: Place, respond: AsyncRespond | None = None) -> SlackSurface:
        return SlackSurface(
            self.client, place, edit_interval=self.settings.edit_interval,
            native_streaming=self.slack.native_streaming, respond=respond,
        )

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
        # Registered last, so it only sees what no listener above took: acknowledged with 200
        # (a 404 makes Slack retry the event and, in time, turn the subscription off).
        app.event(re.compile(r".*"))(self.on_other_event)
        app.action(re.compile(r".*"))(self.on_other_action)
        app.error(self.on_error)

    async def on_other_event(self, event: dict[str, Any]) -> None:
        log.debug("Slack event %s ignored", event.get("type"))

    async def on_other_action(self, ack: AsyncAck, action: dict[str, Any]) -> None:
        await ack()  # URL buttons (they open in the browser), or a button whose feature is gone
        log.debug("Slack action %s ignored", str(action.get("action_id"))[:80])

    async def on_error(self, error: Exception, body: dict[str, Any]) -> None:
        log.error("Slack listener failed (%s): %s", body.get("type") or body.get("command"), type(error).__name__)

    # --- slash commands -------------------------------------------------------------------
    async def on_command(self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        name = str(command.get("command", ""))
        text = str(command.get("text") or "").strip()
        channel, user = str(command.get("channel_id") or ""), str(command.get("user_id") or "")
        if not channel or not user:
            log.warning("Slack command %s without %s refused", name[:40], "a channel" if not channel else "a user")
            await ack(text=INCOMPLETE_COMMAND, response_type="ephemeral")
            return
        place = Place(channel, None, str(command.get("team_id") or ""), user)
        in_dm = is_dm(channel) or command.get("channel_name") == "directmessage"
        turn = self.command(  # the user's locale if already known: an answer given now is in their language
            name, text, key=place.key, has_files=False, user_id=user, workspace_id=place.team_id, channel_id=channel,
            direct=in_dm, **self.known_profile(user),
        )
        if isinstance(turn, str):  # answered privately: no public root message
            await ack(text=turn, response_type="ephemeral")
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
        asked = asked_line(user_link(place.user_id), quote_command(f"/{turn.command}", turn.text), turn.text)
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
        arrived = await self.command_thread(place.key, turn, opened=not in_dm)
        await self.answer(self.surface(place, respond), place.key, arrived)

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
        await self._arrive(body, event, place, bind=True, name="slack mention")

    async def on_message(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """Channel thread replies in a thread the bot owns; top-level DMs (one rolling conversation).
        Threaded DMs are assistant threads (on_assistant_message); mentions are on_mention's."""
        if event.get("subtype") not in HANDLED_SUBTYPES or self._is_from_bot(event):
            return
        thread_ts = event.get("thread_ts") or None
        if is_dm(str(event["channel"]), event.get("channel_type")):
            await self._arrive(body, event, self._place(body, event, thread_ts), name="slack dm")
        elif self.bot_user_id and f"<@{self.bot_user_id}" in str(event.get("text") or ""):
            return  # on_mention answers it
        elif thread_ts and thread_ts != event.get("ts"):
            place = self._place(body, event, str(thread_ts))
            await self._arrive(body, event, place, owned_only=True, name="slack reply")

    async def on_assistant_thread_started(self, event: dict[str, Any], say: Any, set_suggested_prompts: Any) -> None:
        async def greet() -> None:
            """In the user's language, as their Slack locale says (users.info)."""
            user = str((event.get("assistant_thread") or {}).get("user_id") or "")
            language = language_for((await self.profile(user)).get("locale") if user else None, "")
            commands = self.runtime.commands
            await say(phrase("greeting", language, help=to_mrkdwn(commands.help_text(language=language))))
            prompts = suggested_prompts(commands, language)
            if prompts:
                await set_suggested_prompts(prompts=prompts, title=phrase("try_these", language))

        self.tasks.spawn(greet(), name="slack assistant greeting")

    async def on_assistant_context_changed(self) -> None:
        """The channel the user is viewing changed; the agents do not use it."""

    async def on_assistant_message(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        if not self._is_from_bot(event):
            place = self._place(body, event, str(event["thread_ts"]), assistant=True)
            await self._arrive(body, event, place, name="slack assistant")

    async def _arrive(
        self, body: dict[str, Any], event: dict[str, Any], place: Place, *, name: str,
        owned_only: bool = False, bind: bool = False,
    ) -> None:
        """A user message admitted before Slack is answered (claimed once per event_id, as Slack
        retries), then answered in the background. `owned_only`: a channel thread reply, answered
        in the bot's own threads only: one whose thread the database knows, or under a root
        message the bot posted (Slack says whose the parent is), recorded then. `bind`: a mention,
        whose thread the bot now owns on every replica."""
        if owned_only:
            if self.bot_user_id and event.get("parent_user_id") == self.bot_user_id:
                await self.runtime.bind(place.key)
            elif not await self.runtime.owns(place.key):
                return
        arrived = await self.admit_message(
            place.key, from_slack_text(str(event.get("text") or ""), self.bot_user_id),
            delivery_id=f"slack:{body['event_id']}" if body.get("event_id") else None, files=event.get("files") or [],
            user_id=place.user_id, workspace_id=place.team_id, channel_id=place.channel,
            direct=is_dm(place.channel, event.get("channel_type")), bind=bind,
        )
        if arrived is not None:
            self.tasks.spawn(self.answer(self.surface(place), place.key, arrived), name=name)

    def usage(self, command: Command | None, language: Language = "en") -> str:
        return usage_help(self.runtime.commands, command.name if command is not None else None, language)

    def plain(self, text: str) -> str:
        return escape(text)

    async def fetch_file(self, meta: dict[str, Any]) -> IncomingFile:
        return await fetch_file(self.client, self.http(), meta, self.settings.max_attachment_bytes)

    # --- buttons --------------------------------------------------------------------------
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
        place = Place.of(key, str(body["user"]["id"]))
        channel, user, message = place.channel, place.user_id, body.get("message") or {}
        where = TurnInput(text=value, user_id=user, workspace_id=place.team_id, channel_id=channel, direct=is_dm(channel))

        async def mark_answered() -> None:
            if not (message.get("ts") and message.get("blocks")):
                return
            label = str((action.get("text") or {}).get("text") or value)  # Slack sends a button's text
            blocks = answered_blocks(message["blocks"], action_id=str(action["action_id"]), label=label, user_id=user)
            try:
                await self.client.chat_update(
                    channel=channel, ts=message["ts"], text=str(message.get("text") or label), blocks=blocks
                )
            except SlackApiError as exc:
                log.warning("could not mark the buttons answered: %s", error_code(exc))

        await self.press(self.surface(place), key, value, origin=where, answered=mark_answered)
