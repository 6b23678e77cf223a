"""A Discord thread or DM as a Surface for the core's turn renderer: messages sent and edited on a
channel, cards as embeds with buttons, files as attachments. discord.py waits out 429s itself; the
renderer's editor coalesces edits, so a burst of progress never queues stale text."""

from __future__ import annotations

import io
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import discord

from bot.conversation import ConversationKey
from bot.editor import MessageGone, clip
from bot.events import Attachment, Card
from bot.render import Surface, web_url

log = logging.getLogger(__name__)

MESSAGE_MAX_CHARS = 2000
EMBEDS_PER_MESSAGE = 10
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELDS_MAX = 25
CUSTOM_ID_MAX = 100  # a button's custom_id carries the conversation and the resume value
BUTTON_LABEL_MAX = 80
EDIT_INTERVAL = 1.0  # Discord allows about 5 edits per 5 s per channel
RESUME_PREFIX = "r:"  # custom_id prefix of buttons that answer a graph waiting on interrupt()


def card_embed(card: Card) -> discord.Embed:
    embed = discord.Embed(
        title=clip(card.title, 256), url=web_url(card.url),
        description=clip(card.subtitle, EMBED_DESCRIPTION_MAX) or None,
    )
    for name, value in list(card.fields.items())[:EMBED_FIELDS_MAX]:
        if str(value).strip():
            embed.add_field(name=clip(name, 256), value=clip(str(value), 1024), inline=True)
    if web_url(card.image_url):
        embed.set_thumbnail(url=card.image_url)
    return embed


def card_view(cards: Sequence[Card], key: ConversationKey) -> discord.ui.View | None:
    """Map links and Confirm/Cancel-style buttons. A button's custom_id names the conversation, so
    a press resumes the waiting graph after a restart too (no view state is kept)."""
    view = discord.ui.View(timeout=None)
    for card in cards:
        if card.map_url and len(view.children) < 25:
            view.add_item(discord.ui.Button(label=clip(f"Map: {card.title}", BUTTON_LABEL_MAX), url=card.map_url))
        for action in card.actions:
            payload = key.button_payload(action.value, CUSTOM_ID_MAX - len(RESUME_PREFIX))
            if payload is None or len(view.children) >= 25:
                continue
            style = {"primary": discord.ButtonStyle.primary, "danger": discord.ButtonStyle.danger}.get(
                action.style, discord.ButtonStyle.secondary
            )
            view.add_item(discord.ui.Button(label=clip(action.label, BUTTON_LABEL_MAX), style=style,
                                            custom_id=RESUME_PREFIX + payload))
    return view if view.children else None


class ChannelSink:
    """Messages on one channel (a thread or a DM): send and edit. A message that is gone (deleted)
    raises MessageGone, so the editor posts a new one."""

    max_chars = MESSAGE_MAX_CHARS

    def __init__(self, channel: discord.abc.Messageable) -> None:
        self.channel = channel

    async def post(self, text: str) -> str:
        message = await self.channel.send(content=text or "…", allowed_mentions=discord.AllowedMentions.none())
        return str(message.id)

    async def edit(self, message_id: str, text: str) -> None:
        try:
            await self.channel.get_partial_message(int(message_id)).edit(content=text or "…")  # type: ignore[attr-defined]
        except discord.NotFound as exc:
            raise MessageGone(str(exc.code)) from exc


class DiscordSurface(Surface):
    name = "Discord"

    def retryable(self, exc: Exception) -> bool:
        """discord.py's HTTP client retries 5xx answers and waits out rate limits itself; an
        HTTPException it raises is final (or a refusal a retry cannot change)."""
        return not isinstance(exc, discord.HTTPException)

    def __init__(
        self,
        channel: discord.abc.Messageable,
        key: ConversationKey,
        *,
        edit_interval: float = EDIT_INTERVAL,
        report: Callable[[str], Awaitable[Any]] | None = None,
    ) -> None:
        self.channel = channel
        self.key = key
        self.edit_interval = edit_interval
        self.answer = ChannelSink(channel)
        self._report = report

    def progress_markup(self, line: str) -> str:
        return f"*{discord.utils.escape_markdown(line)}*"

    def describe(self, exc: BaseException) -> str:
        if isinstance(exc, discord.HTTPException):
            return f"HTTP {exc.status}" + (f", code {exc.code}" if exc.code else "")
        return type(exc).__name__

    async def post(self, text: str) -> str:
        return await self.answer.post(text)

    async def delete(self, message_id: str) -> None:
        try:
            await self.channel.get_partial_message(int(message_id)).delete()  # type: ignore[attr-defined]
        except discord.HTTPException as exc:
            log.info("could not delete a status message: %s", self.describe(exc))

    async def post_cards(self, cards: Sequence[Card]) -> list[str]:
        ids = []
        for start in range(0, len(cards), EMBEDS_PER_MESSAGE):
            chunk = list(cards[start : start + EMBEDS_PER_MESSAGE])
            view = card_view(chunk, self.key)
            kwargs: dict[str, Any] = {"embeds": [card_embed(card) for card in chunk]}
            if view is not None:
                kwargs["view"] = view
            message = await self.channel.send(**kwargs)
            ids.append(str(message.id))
        return ids

    async def post_file(self, file: Attachment) -> None:
        await self.channel.send(file=discord.File(io.BytesIO(file.payload()), filename=file.filename))

    async def report(self, text: str) -> None:
        if self._report is not None:
            await self._report(text)
