"""A Slack thread or DM as a Surface for the core's turn renderer: messages posted and edited with
chat.postMessage/chat.update, native text streaming (chat.startStream/appendStream/stopStream) or
the assistant thread's status line for progress, Block Kit cards, file uploads. Rate limits, 5xx
answers and dropped connections are retried by the Web API client itself (make_client)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import Block, card_messages, without_images
from adapters.slack.mrkdwn import escape, to_mrkdwn
from bot.conversation import ConversationKey
from bot.editor import STATUS_LINE, MessageGone, MessageSink, StatusLineSink
from bot.events import Attachment, Card
from bot.render import Surface

log = logging.getLogger(__name__)

MESSAGE_MAX_CHARS = 3000  # Slack advises ≤ 4,000 chars of text; 3,000 also fits a section block
STREAM_MAX_CHARS = 11_000  # markdown_text takes ≤ 12,000 chars per call
STATUS_MAX_CHARS = 200
DM_THREAD = "dm"  # the thread part of a DM's rolling conversation key
# chat.update errors after which the message can never be edited again (the editor posts anew).
UNEDITABLE = ("message_not_found", "cant_update_message", "edit_window_closed", "is_inactive")
# `ok: false` answers (HTTP 200) saying Slack itself failed: worth another try.
TRANSIENT = ("internal_error", "fatal_error", "service_unavailable", "request_timeout")
# chat.postMessage errors for blocks Slack will not take (e.g. an image it could not fetch).
REFUSED_BLOCKS = ("invalid_blocks", "invalid_blocks_format", "downloading_image_failed")


def error_code(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or f"http_{exc.response.status_code}")
    return type(exc).__name__


@dataclass(frozen=True)
class Place:
    """Where a turn's messages go and who they answer."""

    channel: str
    thread_ts: str | None  # None: top level (the rolling conversation of a DM)
    team_id: str
    user_id: str
    assistant: bool = False  # an assistant thread: progress via assistant.threads.setStatus

    @property
    def key(self) -> ConversationKey:
        """The conversation: the thread's, or at a DM's top level its one rolling conversation."""
        return ConversationKey("slack", (self.team_id, self.channel, self.thread_ts or DM_THREAD))

    @classmethod
    def of(cls, key: ConversationKey, user_id: str) -> Place:
        """The place a conversation key names (`key`'s inverse), answering `user_id`."""
        team, channel, thread_ts = key.parts
        return cls(channel, None if thread_ts == DM_THREAD else thread_ts, team, user_id)


class StreamSink:
    """Native streaming: the first post starts a stream, edits append what is new. Text is Markdown.

    An edit that is not a continuation of what was streamed (the agent rewrote its answer) stops the
    stream and replaces the message with chat.update; later posts are ordinary messages."""

    max_chars = STREAM_MAX_CHARS

    def __init__(self, client: AsyncWebClient, place: Place) -> None:
        self.client = client
        self.place = place
        self._stream: AsyncChatStream | None = None
        self._sent = ""
        self.streaming = False

    async def post(self, text: str) -> str:
        place = self.place
        if self._stream is None:
            self._stream = await self.client.chat_stream(
                channel=place.channel,
                thread_ts=place.thread_ts,  # type: ignore[arg-type]  # only streamed in threads
                recipient_team_id=place.team_id,
                recipient_user_id=place.user_id,
                buffer_size=1,  # MessageEditor already coalesces; every append is one call
            )
            await self._stream.append(markdown_text=text)
            self._sent = text
            self.streaming = True
            return str(self._stream.ts)
        response = await self.client.chat_postMessage(
            channel=place.channel, thread_ts=place.thread_ts, markdown_text=text, unfurl_links=False
        )
        return str(response["ts"])

    async def edit(self, message_id: str, text: str) -> None:
        if self.streaming and self._stream is not None and message_id == self._stream.ts:
            if text.startswith(self._sent):
                delta = text[len(self._sent) :]
                if delta:
                    await self._stream.append(markdown_text=delta)
                    self._sent = text
                return
            await self.stop()
        await self.client.chat_update(channel=self.place.channel, ts=message_id, markdown_text=text)

    async def stop(self) -> None:
        if self.streaming and self._stream is not None:
            self.streaming = False
            await self._stream.stop()


class AssistantStatusSink(StatusLineSink):
    """The assistant thread's status line (assistant.threads.setStatus; "" clears it). Cosmetic:
    failures are logged and dropped rather than delaying the answer."""

    max_chars = STATUS_MAX_CHARS

    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts

    async def edit(self, message_id: str, text: str) -> None:
        try:
            await self.client.assistant_threads_setStatus(
                channel_id=self.channel, thread_ts=self.thread_ts, status=text
            )
        except SlackApiError as exc:
            log.info("assistant status not set: %s", error_code(exc))


class SlackSurface(Surface):
    """Progress shares the answer message (chat.update), except in assistant threads (their status
    line) and with native streaming (a stream cannot take text back, so progress gets a status
    message of its own and a failure goes below the streamed text). The surface is also the sink
    for those chat messages: text in Slack mrkdwn."""

    name = "Slack"
    max_chars = MESSAGE_MAX_CHARS

    def retryable(self, exc: Exception) -> bool:
        """Only what slack_sdk's retry handlers do not already retry: `ok: false` answers that
        say Slack failed (internal_error, fatal_error…). HTTP 5xx, 429, `ratelimited` and
        connection errors were retried in the client; other refusals would fail again."""
        return isinstance(exc, SlackApiError) and error_code(exc) in TRANSIENT and exc.response.status_code < 500

    def __init__(
        self,
        client: AsyncWebClient,
        place: Place,
        *,
        edit_interval: float = 1.0,
        native_streaming: bool = False,
        respond: AsyncRespond | None = None,
    ) -> None:
        self.client = client
        self.place = place
        self.edit_interval = edit_interval
        self._respond = respond  # a slash command's response_url
        self.stream = StreamSink(client, place) if native_streaming and place.thread_ts else None
        self.answer: MessageSink = self.stream or self
        self.append_only = self.stream is not None
        self.assistant_status: AssistantStatusSink | None = None
        self.progress: MessageSink | None = self if self.stream is not None else None
        if place.assistant and place.thread_ts:
            self.progress = self.assistant_status = AssistantStatusSink(client, place.channel, place.thread_ts)

    # --- markup -------------------------------------------------------------------------------
    def markup(self, markdown: str) -> str:
        return to_mrkdwn(markdown)

    def plain(self, text: str) -> str:
        return escape(text)

    def answer_markup(self, markdown: str) -> str:
        return markdown if self.stream is not None else to_mrkdwn(markdown)

    def progress_markup(self, line: str) -> str:
        return line if self.assistant_status is not None else f"_{escape(line)}_"

    def describe(self, exc: BaseException) -> str:
        return error_code(exc)

    # --- messages -----------------------------------------------------------------------------
    async def post(self, text: str, blocks: list[Block] | None = None) -> str:
        response = await self.client.chat_postMessage(
            channel=self.place.channel, thread_ts=self.place.thread_ts, text=text, blocks=blocks,
            unfurl_links=False, unfurl_media=False,
        )
        return str(response["ts"])

    async def edit(self, message_id: str, text: str) -> None:
        try:
            await self.client.chat_update(channel=self.place.channel, ts=message_id, text=text)
        except SlackApiError as exc:
            if error_code(exc) in UNEDITABLE:
                raise MessageGone(error_code(exc)) from exc
            raise

    async def delete(self, message_id: str) -> None:
        """Raises if Slack keeps refusing (the renderer then edits the message instead); a message
        already gone counts as deleted."""
        try:
            await self.client.chat_delete(channel=self.place.channel, ts=message_id)
        except SlackApiError as exc:
            if error_code(exc) != "message_not_found":
                raise

    async def end_answer(self) -> None:
        if self.stream is not None:
            await self.stream.stop()

    async def clear_progress(self, message_id: str | None) -> None:
        if self.assistant_status is not None:
            await self.assistant_status.edit(STATUS_LINE, "")
        elif message_id is not None:
            await self.delete(message_id)

    async def report(self, text: str) -> None:
        """Privately: through the command's response_url when there is one, else ephemerally."""
        if self._respond is not None:
            await self._respond(text=text, response_type="ephemeral")
        else:
            await self.client.chat_postEphemeral(
                channel=self.place.channel, user=self.place.user_id, thread_ts=self.place.thread_ts, text=text
            )

    async def post_cards(self, cards: Sequence[Card]) -> list[str]:
        return [await self.post_blocks(fallback, blocks) for fallback, blocks in card_messages(cards, self.place.key)]

    async def post_blocks(self, fallback: str, blocks: list[Block]) -> str:
        """Post a Block Kit message; without images if Slack could not fetch one; as text at worst."""
        for candidate in (blocks, without_images(blocks)):
            try:
                return await self.post(fallback, candidate)
            except SlackApiError as exc:
                if error_code(exc) not in REFUSED_BLOCKS:
                    raise
                log.warning("Slack refused blocks (%s); simplifying", error_code(exc))
        return await self.post(fallback)

    async def post_file(self, file: Attachment) -> None:
        await self.client.files_upload_v2(
            channel=self.place.channel, thread_ts=self.place.thread_ts, content=file.payload(),
            filename=file.filename, title=file.filename,
            snippet_type="markdown" if file.mime_type == "text/markdown" else None,
        )
