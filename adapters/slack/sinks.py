"""Slack message sinks for bot.editor.MessageEditor: chat.postMessage/chat.update, native text
streaming (chat.startStream/appendStream/stopStream) and the assistant thread status line."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from bot.editor import MessageGone, RateLimited

log = logging.getLogger(__name__)

MESSAGE_MAX_CHARS = 3000  # Slack advises ≤ 4,000 chars of text; 3,000 also fits a section block
STREAM_MAX_CHARS = 11_000  # markdown_text takes ≤ 12,000 chars per call
STATUS_MAX_CHARS = 200


def retry_after(exc: SlackApiError) -> float | None:
    """Seconds to wait if Slack answered 429 (after slack_sdk's own retries were used up)."""
    response = exc.response
    if getattr(response, "status_code", None) != 429:
        return None
    headers = getattr(response, "headers", None) or {}
    value: Any = None
    for name, raw in dict(headers).items():
        if name.lower() == "retry-after":
            value = raw[0] if isinstance(raw, list | tuple) else raw
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return 1.0


def error_code(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or f"http_{exc.response.status_code}")
    return type(exc).__name__


def raise_rate_limited(exc: SlackApiError) -> None:
    wait = retry_after(exc)
    if wait is not None:
        raise RateLimited(wait) from exc


# chat.update errors after which the message can never be edited again (the editor posts anew).
UNEDITABLE = ("message_not_found", "cant_update_message", "edit_window_closed", "is_inactive")


class ChatMessageSink:
    """Posts into a channel or thread; edits with chat.update. Text is Slack mrkdwn."""

    max_chars = MESSAGE_MAX_CHARS

    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str | None) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts

    async def post(self, text: str) -> str:
        try:
            response = await self.client.chat_postMessage(
                channel=self.channel, thread_ts=self.thread_ts, text=text, unfurl_links=False, unfurl_media=False
            )
        except SlackApiError as exc:
            raise_rate_limited(exc)
            raise
        return str(response["ts"])

    async def edit(self, message_id: str, text: str) -> None:
        try:
            await self.client.chat_update(channel=self.channel, ts=message_id, text=text)
        except SlackApiError as exc:
            raise_rate_limited(exc)
            if error_code(exc) in UNEDITABLE:
                raise MessageGone(error_code(exc)) from exc
            raise

    async def delete(self, message_id: str) -> None:
        try:
            await self.client.chat_delete(channel=self.channel, ts=message_id)
        except SlackApiError as exc:
            log.info("could not delete status message: %s", error_code(exc))


class StreamSink:
    """Native streaming: the first post starts a stream, edits append what is new. Text is Markdown.

    An edit that is not a continuation of what was streamed (the agent rewrote its answer) stops the
    stream and replaces the message with chat.update; later posts are ordinary messages."""

    max_chars = STREAM_MAX_CHARS

    def __init__(
        self,
        client: AsyncWebClient,
        channel: str,
        thread_ts: str,
        *,
        recipient_team_id: str | None,
        recipient_user_id: str | None,
    ) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.recipient_team_id = recipient_team_id
        self.recipient_user_id = recipient_user_id
        self._stream: AsyncChatStream | None = None
        self._sent = ""
        self.streaming = False

    async def post(self, text: str) -> str:
        try:
            if self._stream is None:
                self._stream = await self.client.chat_stream(
                    channel=self.channel,
                    thread_ts=self.thread_ts,
                    recipient_team_id=self.recipient_team_id,
                    recipient_user_id=self.recipient_user_id,
                    buffer_size=1,  # MessageEditor already coalesces; every append is one call
                )
                await self._stream.append(markdown_text=text)
                self._sent = text
                self.streaming = True
                return str(self._stream.ts)
            response = await self.client.chat_postMessage(
                channel=self.channel, thread_ts=self.thread_ts, markdown_text=text, unfurl_links=False
            )
            return str(response["ts"])
        except SlackApiError as exc:
            raise_rate_limited(exc)
            raise

    async def edit(self, message_id: str, text: str) -> None:
        try:
            if self.streaming and self._stream is not None and message_id == self._stream.ts:
                if text.startswith(self._sent):
                    delta = text[len(self._sent) :]
                    if delta:
                        await self._stream.append(markdown_text=delta)
                        self._sent = text
                    return
                await self.stop()
            await self.client.chat_update(channel=self.channel, ts=message_id, markdown_text=text)
        except SlackApiError as exc:
            raise_rate_limited(exc)
            raise

    async def stop(self) -> None:
        if self.streaming and self._stream is not None:
            self.streaming = False
            await self._stream.stop()


class AssistantStatusSink:
    """The assistant thread's status line (assistant.threads.setStatus). Cosmetic: failures other
    than rate limits are logged and dropped rather than delaying the answer."""

    max_chars = STATUS_MAX_CHARS

    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts

    async def post(self, text: str) -> str:
        await self.edit("status", text)
        return "status"

    async def edit(self, message_id: str, text: str) -> None:
        try:
            await self.client.assistant_threads_setStatus(
                channel_id=self.channel, thread_ts=self.thread_ts, status=text
            )
        except SlackApiError as exc:
            raise_rate_limited(exc)
            log.info("assistant status not set: %s", error_code(exc))

    async def clear(self) -> None:
        try:
            await self.client.assistant_threads_setStatus(channel_id=self.channel, thread_ts=self.thread_ts, status="")
        except SlackApiError as exc:
            log.info("assistant status not cleared: %s", error_code(exc))
