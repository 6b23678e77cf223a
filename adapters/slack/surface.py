"""A Slack thread or DM as a Surface for the core's turn renderer: chat.postMessage/chat.update,
native streaming or the assistant status line for progress, Block Kit cards, file uploads."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import Block, card_messages, without_images
from adapters.slack.mrkdwn import escape, to_mrkdwn
from adapters.slack.sinks import (
    AssistantStatusSink,
    ChatMessageSink,
    StreamSink,
    error_code,
    raise_rate_limited,
)
from bot.conversation import ConversationKey
from bot.editor import MessageSink, retrying
from bot.events import Attachment, Card
from bot.render import Surface

log = logging.getLogger(__name__)

SEND_ATTEMPTS = 4


@dataclass(frozen=True)
class Place:
    """Where a turn's messages go and who they answer."""

    channel: str
    thread_ts: str | None  # None: top level (the rolling conversation of a DM)
    team_id: str
    user_id: str
    assistant: bool = False  # an assistant thread: progress via assistant.threads.setStatus


async def send_with_retry(call: Callable[[], Awaitable[Any]], *, what: str) -> Any:
    """A Slack call outside the editor: rate limits waited out, 5xx and connection failures retried."""

    async def once() -> Any:
        try:
            return await call()
        except SlackApiError as exc:
            raise_rate_limited(exc)
            raise

    return await retrying(once, attempts=SEND_ATTEMPTS, retryable=transient, what=what)


def transient(exc: Exception) -> bool:
    if isinstance(exc, SlackApiError):
        return int(getattr(exc.response, "status_code", 200)) >= 500
    return isinstance(exc, aiohttp.ClientError | TimeoutError)


class SlackSurface(Surface):
    """Progress shares the answer message (chat.update), except in assistant threads (their status
    line) and with native streaming (a stream cannot take text back, so progress gets a status
    message of its own and a failure goes below the streamed text)."""

    name = "Slack"

    def __init__(
        self,
        client: AsyncWebClient,
        place: Place,
        key: ConversationKey,
        *,
        edit_interval: float = 1.0,
        native_streaming: bool = False,
        report: Callable[[str], Awaitable[Any]] | None = None,
    ) -> None:
        self.client = client
        self.place = place
        self.key = key
        self.edit_interval = edit_interval
        self._report = report
        self.chat = ChatMessageSink(client, place.channel, place.thread_ts)
        self.stream: StreamSink | None = None
        if native_streaming and place.thread_ts:
            self.stream = StreamSink(
                client, place.channel, place.thread_ts,
                recipient_team_id=place.team_id, recipient_user_id=place.user_id,
            )
        self.answer: MessageSink = self.stream or self.chat
        self.append_only = self.stream is not None
        self.assistant_status: AssistantStatusSink | None = None
        self.progress: MessageSink | None = None
        if place.assistant and place.thread_ts:
            self.progress = self.assistant_status = AssistantStatusSink(client, place.channel, place.thread_ts)
        elif self.stream is not None:
            self.progress = ChatMessageSink(client, place.channel, place.thread_ts)

    # --- markup -------------------------------------------------------------------------------
    def markup(self, markdown: str) -> str:
        return to_mrkdwn(markdown)

    def answer_markup(self, markdown: str) -> str:
        return markdown if self.stream is not None else to_mrkdwn(markdown)

    def progress_markup(self, line: str) -> str:
        return line if self.assistant_status is not None else f"_{escape(line)}_"

    def describe(self, exc: BaseException) -> str:
        return error_code(exc)

    # --- messages -----------------------------------------------------------------------------
    async def post(self, text: str) -> str:
        return await send_with_retry(lambda: self.chat.post(text), what="chat.postMessage")  # type: ignore[no-any-return]

    async def delete(self, message_id: str) -> None:
        await self.chat.delete(message_id)

    async def end_answer(self) -> None:
        if self.stream is not None and self.stream.streaming:
            await self.stream.stop()

    async def clear_progress(self, message_id: str | None) -> None:
        if self.assistant_status is not None:
            await self.assistant_status.clear()
        elif message_id is not None:
            await self.chat.delete(message_id)

    async def report(self, text: str) -> None:
        """Privately: through the command's response_url when there is one, else ephemerally."""
        if self._report is not None:
            await self._report(text)
        else:
            await self.client.chat_postEphemeral(
                channel=self.place.channel, user=self.place.user_id, thread_ts=self.place.thread_ts, text=text
            )

    async def post_cards(self, cards: Sequence[Card]) -> list[str]:
        return [await self.post_blocks(fallback, blocks) for fallback, blocks in card_messages(cards, self.key)]

    async def post_blocks(self, fallback: str, blocks: list[Block]) -> str:
        """Post a Block Kit message; without images if Slack could not fetch one; as text at worst."""
        attempts: list[list[Block] | None] = [blocks, without_images(blocks), None]
        last: SlackApiError | None = None
        for candidate in attempts:
            try:
                response = await send_with_retry(
                    lambda c=candidate: self.client.chat_postMessage(  # type: ignore[misc]
                        channel=self.place.channel, thread_ts=self.place.thread_ts, text=fallback, blocks=c,
                        unfurl_links=False, unfurl_media=False,
                    ),
                    what="chat.postMessage",
                )
                return str(response["ts"])
            except SlackApiError as exc:
                if error_code(exc) not in ("invalid_blocks", "invalid_blocks_format", "downloading_image_failed"):
                    raise
                log.warning("Slack refused blocks (%s); simplifying", error_code(exc))
                last = exc
        assert last is not None
        raise last

    async def post_file(self, file: Attachment) -> None:
        await send_with_retry(
            lambda: self.client.files_upload_v2(
                channel=self.place.channel, thread_ts=self.place.thread_ts, content=file.content.encode("utf-8"),
                filename=file.filename, title=file.filename,
                snippet_type="markdown" if file.mime_type == "text/markdown" else None,
            ),
            what="files upload",
        )
