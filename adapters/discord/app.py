"""The Discord front end on discord.py: interactions and messages → ConversationKey + structured
turns; stream events → the core's turn renderer on a DiscordSurface. Slash commands are deferred
at once; in a guild the answer goes into a public thread started from the command's response (the
thread's id keys the conversation); in a DM the DM channel is the conversation."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import aiohttp
import discord

from adapters.discord.commands import command_turn
from adapters.discord.surface import RESUME_PREFIX, DiscordSurface
from bot.agent import IncomingFile, TurnInput
from bot.attachments import FileRejected, check_text_file, download_text_file
from bot.commands import RESET
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.locale import currency_for_locale
from bot.render import WORKING, StatusMessage, TurnRenderer
from bot.runtime import ConversationRuntime
from bot.supervisor import TaskSupervisor

log = logging.getLogger(__name__)

THREAD_NAME_MAX = 100
PRE_ACK_DOWNLOAD = 1.5  # seconds an attached file may take to fetch before the 3 s ack deadline
_MENTION = re.compile(r"<@!?(\d+)>")


def conversation_key(channel: Any) -> ConversationKey:
    """`discord:{guild}:{thread}` for a thread, `discord:dm:{channel}` for a DM."""
    guild_id = getattr(channel, "guild_id", None) or getattr(getattr(channel, "guild", None), "id", None)
    return ConversationKey.discord(str(guild_id) if guild_id else None, str(channel.id))


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


class DiscordBot:
    """The discord.py client's events, translated. `tasks` holds the turns that run after an ack."""

    def __init__(self, settings: Settings, runtime: ConversationRuntime, client: discord.Client) -> None:
        self.settings = settings
        self.runtime = runtime
        self.client = client
        self.tasks = TaskSupervisor(name="Discord work")
        self._session: Any = None
        self._recovered = False
        client.event(self.on_ready)
        client.event(self.on_interaction)
        client.event(self.on_message)

    async def on_ready(self) -> None:
        if not self.client.intents.message_content:
            log.warning("no message_content intent: follow-ups in threads need a mention")
        log.info("Discord bot ready as %s in %d guild(s)", self.client.user, len(self.client.guilds))
        if not self._recovered:  # on_ready fires on every reconnect; recover once per start
            self._recovered = True
            for thread_id in list(self.runtime.interrupted_at_start):
                key = ConversationKey.parse(thread_id)
                if key.platform == "discord" and len(key.parts) == 2:
                    self.tasks.spawn(self._recover_turn(key), name="discord recover turn")

    async def _recover_turn(self, key: ConversationKey) -> None:
        """A turn a crash or shutdown stopped, answered now in its channel; its old status message
        becomes the resumed turn's (or the offer to run it again)."""
        record = await self.runtime.interrupted_turn(key)
        if record is None:
            return
        try:
            channel = self.client.get_channel(int(key.parts[1])) or await self.client.fetch_channel(int(key.parts[1]))
        except (discord.HTTPException, ValueError) as exc:
            log.warning("cannot reach the channel of an interrupted turn: %s", exc)
            return
        status = StatusMessage()
        await self.run_turn(
            channel, self.runtime.recover(key, status=status), status=status, working="",
            replacing=record.status_message,
        )

    async def close(self, within: float = 10.0) -> None:
        await self.tasks.close(within)
        if self._session is not None:
            await self._session.close()

    # --- slash commands and buttons ---------------------------------------------------------------
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is discord.InteractionType.application_command:
            await self._command(interaction)
        elif interaction.type is discord.InteractionType.component:
            custom_id = str((interaction.data or {}).get("custom_id") or "")
            if custom_id.startswith(RESUME_PREFIX):
                await self._button(interaction, custom_id[len(RESUME_PREFIX) :])

    async def _command(self, interaction: discord.Interaction) -> None:
        turn, problem, files = command_turn(
            self.runtime.commands, dict(interaction.data or {}), user_id=str(interaction.user.id),
            delivery_id=f"discord:{interaction.id}", locale=str(interaction.locale),
            currency=currency_for_locale(str(interaction.locale)),
        )
        if turn is not None:
            turn = turn.but(**origin(interaction.channel, interaction.user, interaction.guild_id))
            refusal = self.runtime.gate.policy.refusal("discord", turn)
            if refusal is not None:  # the runtime refuses it too; answered here, it stays private
                await interaction.response.send_message(refusal, ephemeral=True)
                return
        if turn is not None and turn.command == RESET.name:
            if interaction.guild_id is not None:
                problem = "Each command starts its own thread, so there is nothing to reset here. In a DM with me, `/reset` starts over."
            else:
                await interaction.response.send_message("Starting a fresh conversation.", ephemeral=True)
                self.tasks.spawn(self.runtime.reset(conversation_key(interaction.channel)), name="reset")
                return
        if turn is not None and files:
            # Fetched before the ack when it is quick, so a refused file gets its reason privately;
            # a slow download goes on after the deferral.
            try:
                turn = turn.but(attachments=tuple(await asyncio.wait_for(self._download_all(files), PRE_ACK_DOWNLOAD)))
                files = []
            except FileRejected as rejected:
                problem = f"⚠️ {rejected}"
            except TimeoutError:
                pass
        if problem is not None or turn is None:  # command_turn gives one or the other
            await interaction.response.send_message(problem or self.runtime.commands.help_text(), ephemeral=True)
            return
        await interaction.response.defer(thinking=True)
        self.tasks.spawn(self._command_turn(interaction, turn, files), name=f"discord /{turn.command}")

    async def _command_turn(self, interaction: discord.Interaction, turn: TurnInput, files: list[dict[str, Any]]) -> None:
        """The deferred response becomes the root message (who asked what); in a guild a public
        thread grows from it and holds the conversation."""
        if files:
            try:
                turn = turn.but(attachments=tuple(await self._download_all(files)))
            except FileRejected as rejected:
                await interaction.edit_original_response(content=f"⚠️ {rejected}")
                return
        asked = f"<@{interaction.user.id}> asked `/{turn.command} {turn.text}`"[:1900]
        root = await interaction.edit_original_response(content=asked, allowed_mentions=discord.AllowedMentions.none())
        channel: Any = interaction.channel
        if interaction.guild_id is not None:
            name = f"/{turn.command} {turn.text}".strip()[:THREAD_NAME_MAX] or turn.command or "conversation"
            channel = await root.create_thread(name=name)
            self.runtime.opened(conversation_key(channel))
        elif channel is None:
            channel = await interaction.user.create_dm()

        async def privately(text: str) -> None:
            await interaction.followup.send(text, ephemeral=True)

        status = StatusMessage()
        await self.run_turn(channel, self.runtime.handle(conversation_key(channel), turn, status=status), report=privately, status=status)

    async def _button(self, interaction: discord.Interaction, payload: str) -> None:
        parsed = ConversationKey.from_button_payload(payload, "discord")
        channel = interaction.channel
        if parsed is None or channel is None or parsed[0] != conversation_key(channel):
            await interaction.response.send_message("That button does not belong here.", ephemeral=True)
            return
        key, value = parsed
        where = TurnInput(text=value, user_id=str(interaction.user.id), **origin(channel, interaction.user, interaction.guild_id))
        refusal = self.runtime.gate.policy.refusal("discord", where)
        if refusal is not None:
            await interaction.response.send_message(refusal, ephemeral=True)
            return
        await interaction.response.edit_message(view=None)  # answered: the buttons go, the card stays
        status = StatusMessage()
        events = self.runtime.resume(
            key, value, user_id=str(interaction.user.id), delivery_id=f"discord:{interaction.id}", origin=where, status=status
        )
        self.tasks.spawn(self.run_turn(channel, events, status=status), name="discord resume")

    # --- messages -------------------------------------------------------------------------------
    async def on_message(self, message: discord.Message) -> None:
        """DMs; follow-ups in threads the bot owns; @mentions elsewhere start a thread."""
        if message.author.bot or self.client.user is None:
            return
        mentioned = self.client.user in message.mentions
        if message.guild is None:
            channel: Any = message.channel
        elif isinstance(message.channel, discord.Thread) and await self.runtime.owns(conversation_key(message.channel)):
            channel = message.channel
        elif mentioned:
            refusal = self.runtime.gate.policy.refusal("discord", TurnInput(text="", user_id=str(message.author.id), **origin(message.channel, message.author)))
            if refusal is not None:  # no thread for a turn that will not run
                await message.reply(refusal, mention_author=False)
                return
            channel = await message.create_thread(name=(self._text(message) or "conversation")[:THREAD_NAME_MAX])
            self.runtime.opened(conversation_key(channel))
        else:
            return
        self.tasks.spawn(self._message_turn(message, channel), name="discord message")

    def _text(self, message: discord.Message) -> str:
        me = str(self.client.user.id) if self.client.user else ""
        return _MENTION.sub(lambda m: "" if m.group(1) == me else m.group(0), message.content).strip()

    async def _message_turn(self, message: discord.Message, channel: Any) -> None:
        if not await self.runtime.claim_delivery(f"discord:message:{message.id}"):
            return  # a gateway RESUME replayed it
        try:
            files = tuple([
                await self._download({"filename": a.filename, "size": a.size, "content_type": a.content_type, "url": a.url})
                for a in message.attachments
            ])
        except FileRejected as rejected:
            await channel.send(f"⚠️ {rejected}")
            return
        turn = self.runtime.commands.turn(
            self._text(message), user_id=str(message.author.id), attachments=files, **origin(channel, message.author)
        )
        if turn.text or turn.attachments or turn.command:
            status = StatusMessage()
            await self.run_turn(channel, self.runtime.handle(conversation_key(channel), turn, status=status), status=status)

    async def _download_all(self, files: list[dict[str, Any]]) -> list[IncomingFile]:
        return [await self._download(meta) for meta in files]

    async def _download(self, meta: dict[str, Any]) -> IncomingFile:
        name, limit, mime = str(meta.get("filename") or "file"), self.settings.max_attachment_bytes, str(meta.get("content_type") or "")
        check_text_file(name, meta.get("size"), max_bytes=limit, mime=mime)
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return await download_text_file(self._session, str(meta.get("url")), name, max_bytes=limit, mime=mime or "text/markdown")

    async def run_turn(
        self, channel: Any, events: Any, *, report: Any = None, status: StatusMessage | None = None,
        working: str = WORKING, replacing: str | None = None,
    ) -> Any:
        surface = DiscordSurface(channel, conversation_key(channel), report=report, edit_interval=self.settings.edit_interval)
        return await TurnRenderer(surface, working=working, status=status, replacing=replacing).run(events)
