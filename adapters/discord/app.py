"""The Discord front end on discord.py: interactions and messages → ConversationKey + structured
turns; stream events → the core's turn renderer on a DiscordSurface. Slash commands are deferred
at once; in a guild the answer goes into a public thread started from the command's response (the
thread's id keys the conversation); in a DM the DM channel is the conversation."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import discord

from adapters.discord.commands import command_input
from adapters.discord.surface import RESUME_PREFIX, DiscordSurface
from bot.agent import IncomingFile, TurnInput
from bot.attachments import FileRejected, check_text_file, download_text_file
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.locale import language_for
from bot.platform import PlatformBot, asked_line, locale_fields
from bot.runtime import ConversationRuntime
from bot.storage import ThreadRecord

log = logging.getLogger(__name__)

THREAD_NAME_MAX = 100
PRE_ACK_DOWNLOAD = 1.5  # seconds an attached file may take to fetch before the 3 s ack deadline
_MENTION = re.compile(r"<@!?(\d+)>")


def conversation_key(channel: Any) -> ConversationKey:
    """`discord:{guild}:{thread}` for a thread, `discord:dm:{channel}` for a DM."""
    guild_id = getattr(channel, "guild_id", None) or getattr(getattr(channel, "guild", None), "id", None)
    return ConversationKey("discord", (str(guild_id) if guild_id else "dm", str(channel.id)))


def origin(channel: Any, user: Any, guild_id: int | None = None) -> dict[str, Any]:
    """TurnInput fields saying where a turn comes from, for the access policy: the guild, the
    channel (a thread's parent, so allowing a channel allows its threads), the member's roles."""
    guild_id = guild_id or getattr(channel, "guild_id", None) or getattr(getattr(channel, "guild", None), "id", None)
    channel_id = getattr(channel, "parent_id", None) or getattr(channel, "id", None)
    return {
        "workspace_id": str(guild_id) if guild_id else "",
        "channel_id": str(channel_id) if channel_id else "",
        "roles": tuple(str(role.id) for role in getattr(user, "roles", None) or ()),
        "direct": not guild_id,
    }


def intents() -> discord.Intents:
    """Guild and DM messages, with their content: follow-ups in the bot's threads need no mention.
    Without the message_content privilege (set in the developer portal) the bot still gets DMs and
    messages that mention it."""
    chosen = discord.Intents.default()
    chosen.message_content = True
    return chosen


class DiscordBot(PlatformBot):
    """The discord.py client's events, translated. `tasks` holds the turns that run after an ack."""

    platform = "discord"

    def __init__(self, settings: Settings, runtime: ConversationRuntime, client: discord.Client) -> None:
        super().__init__(settings, runtime)
        self.client = client
        client.event(self.on_ready)
        client.event(self.on_interaction)
        client.event(self.on_message)

    async def on_ready(self) -> None:
        if not self.client.intents.message_content:
            log.warning("no message_content intent: follow-ups in threads need a mention")
        log.info("Discord bot ready as %s in %d guild(s)", self.client.user, len(self.client.guilds))
        self.recover_interrupted()  # on_ready fires on every reconnect; this runs once per start

    async def recovery_surface(self, key: ConversationKey, record: ThreadRecord) -> DiscordSurface | None:
        if len(key.parts) != 2:
            return None
        try:
            channel = self.client.get_channel(int(key.parts[1])) or await self.client.fetch_channel(int(key.parts[1]))
        except (discord.HTTPException, ValueError) as exc:
            log.warning("cannot reach the channel of an interrupted turn: %s", exc)
            return None
        return self.surface(channel)

    def surface(self, channel: Any, report: Any = None) -> DiscordSurface:
        return DiscordSurface(channel, conversation_key(channel), report=report, edit_interval=self.settings.edit_interval)

    # --- slash commands and buttons ---------------------------------------------------------------
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is discord.InteractionType.application_command:
            await self._command(interaction)
        elif interaction.type is discord.InteractionType.component:
            custom_id = str(dict(interaction.data or {}).get("custom_id") or "")
            if custom_id.startswith(RESUME_PREFIX):
                await self._button(interaction, custom_id[len(RESUME_PREFIX) :])

    async def _command(self, interaction: discord.Interaction) -> None:
        name, text, files = command_input(dict(interaction.data or {}))
        turn = self.command(
            name, text, has_files=bool(files), key=conversation_key(interaction.channel) if interaction.channel else None,
            user_id=str(interaction.user.id), delivery_id=f"discord:{interaction.id}",
            **locale_fields(str(interaction.locale)), **origin(interaction.channel, interaction.user, interaction.guild_id),
        )
        if isinstance(turn, TurnInput) and files:
            # Fetched before the ack when it is quick, so a refused file gets its reason privately;
            # a slow download goes on after the deferral.
            try:
                turn = turn.but(attachments=await asyncio.wait_for(self.fetch_files(files), PRE_ACK_DOWNLOAD))
                files = []
            except FileRejected as rejected:
                turn = f"⚠️ {rejected.said(language_for(turn.locale, turn.text))}"
            except TimeoutError:
                pass
        if isinstance(turn, str):  # answered at once, privately
            await interaction.response.send_message(turn, ephemeral=True)
            return
        await interaction.response.defer(thinking=True)
        self.tasks.spawn(self._command_turn(interaction, turn, files), name=f"discord /{turn.command}")

    async def _command_turn(self, interaction: discord.Interaction, turn: TurnInput, files: list[dict[str, Any]]) -> None:
        """The deferred response becomes the root message (who asked what); in a guild a public
        thread grows from it and holds the conversation."""
        if files:
            try:
                turn = turn.but(attachments=await self.fetch_files(files))
            except FileRejected as rejected:
                await interaction.edit_original_response(content=f"⚠️ {rejected.said(language_for(turn.locale, turn.text))}")
                return
        asked = asked_line(f"<@{interaction.user.id}>", f"`/{turn.command} {turn.text}`", turn.text)[:1900]
        root = await interaction.edit_original_response(content=asked, allowed_mentions=discord.AllowedMentions.none())
        channel: Any = interaction.channel
        if interaction.guild_id is not None:
            name = f"/{turn.command} {turn.text}".strip()[:THREAD_NAME_MAX] or turn.command or "conversation"
            channel = await root.create_thread(name=name)
        elif channel is None:
            channel = await interaction.user.create_dm()
        arrived = await self.command_thread(conversation_key(channel), turn, opened=interaction.guild_id is not None)

        async def privately(text: str) -> None:
            await interaction.followup.send(text, ephemeral=True)

        await self.answer(self.surface(channel, report=privately), conversation_key(channel), arrived)

    async def _button(self, interaction: discord.Interaction, payload: str) -> None:
        parsed = ConversationKey.from_button_payload(payload, "discord")
        channel = interaction.channel
        if parsed is None or channel is None or parsed[0] != conversation_key(channel):
            await interaction.response.send_message("That button does not belong here.", ephemeral=True)
            return
        key, value = parsed
        where = TurnInput(text=value, user_id=str(interaction.user.id), **origin(channel, interaction.user, interaction.guild_id))
        refusal = self.refusal(where)
        if refusal is not None:
            await interaction.response.send_message(refusal, ephemeral=True)
            return
        await interaction.response.edit_message(view=None)  # answered: the buttons go, the card stays
        press = self.press(self.surface(channel), key, value, origin=where, delivery_id=f"discord:{interaction.id}")
        self.tasks.spawn(press, name="discord resume")

    # --- messages -------------------------------------------------------------------------------
    async def on_message(self, message: discord.Message) -> None:
        """DMs; follow-ups in threads the bot owns; an @mention in a channel starts a thread from
        the message, one in a thread someone else started is answered in that thread (which the bot
        then follows, as it does its own)."""
        if message.author.bot or self.client.user is None:
            return
        mentioned = self.client.user in message.mentions
        if message.guild is None:
            channel: Any = message.channel
        elif isinstance(message.channel, discord.Thread) and await self.runtime.owns(conversation_key(message.channel)):
            channel = message.channel
        elif mentioned:
            refusal = self.refusal(TurnInput(text="", user_id=str(message.author.id), **origin(message.channel, message.author)))
            if refusal is not None:  # no thread for a turn that will not run
                await message.reply(refusal, mention_author=False)
                return
            if isinstance(message.channel, discord.Thread):  # someone's thread: no thread grows inside one
                channel = message.channel
            else:
                channel = await message.create_thread(name=(self._text(message) or "conversation")[:THREAD_NAME_MAX])
            await self.runtime.bind(conversation_key(channel))
        else:
            return
        files = [{"filename": a.filename, "size": a.size, "content_type": a.content_type, "url": a.url} for a in message.attachments]
        turn = self.message(
            self.surface(channel), conversation_key(channel), self._text(message), delivery_id=f"discord:message:{message.id}",
            files=files, user_id=str(message.author.id), **origin(channel, message.author),
        )
        self.tasks.spawn(turn, name="discord message")

    def _text(self, message: discord.Message) -> str:
        me = str(self.client.user.id) if self.client.user else ""
        return _MENTION.sub(lambda m: "" if m.group(1) == me else m.group(0), message.content).strip()

    async def fetch_file(self, meta: dict[str, Any]) -> IncomingFile:
        name, limit, mime = str(meta.get("filename") or "file"), self.settings.max_attachment_bytes, str(meta.get("content_type") or "")
        check_text_file(name, meta.get("size"), max_bytes=limit, mime=mime)
        return await download_text_file(self.http(), str(meta.get("url")), name, max_bytes=limit, mime=mime or "text/markdown")
