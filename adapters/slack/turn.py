"""One turn on Slack: stream events in, messages out (status edits, answer, cards, files)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import Block, card_messages, without_images
from adapters.slack.mrkdwn import escape, to_mrkdwn
from adapters.slack.sinks import (
    MESSAGE_MAX_CHARS,
    AssistantStatusSink,
    ChatMessageSink,
    StreamSink,
    error_code,
    retry_after,
)
from bot.conversation import ConversationKey
from bot.editor import MessageEditor, RateLimited, split_text
from bot.events import Attachment, Failure, Final, Status, StreamEvent, Token, ToolFinished, ToolStarted

log = logging.getLogger(__name__)

WORKING = "Working on it…"
SEND_ATTEMPTS = 4
EDITOR_ATTEMPTS = 3  # per message write; each attempt already includes slack_sdk's 429 retries


@dataclass(frozen=True)
class Place:
    """Where a turn's messages go and who they answer."""

    channel: str
    thread_ts: str | None  # None: top level (the rolling conversation of a DM)
    team_id: str
    user_id: str
    assistant: bool = False  # an assistant thread: progress via assistant.threads.setStatus


def status_line(event: Status | ToolStarted | ToolFinished) -> str:
    if isinstance(event, Status):
        return event.text
    if isinstance(event, ToolStarted):
        return f"Using {event.name}" + (f" ({event.args_summary})" if event.args_summary else "") + "…"
    return f"{event.name}: {event.summary}" if event.summary else f"{event.name} done"


async def send_with_retry(call: Callable[[], Awaitable[Any]], *, what: str) -> Any:
    """A Slack call outside the editor: rate limits waited out, transient failures retried."""
    for attempt in range(SEND_ATTEMPTS):
        try:
            return await call()
        except RateLimited as limited:
            if attempt == SEND_ATTEMPTS - 1:
                raise
            await asyncio.sleep(limited.retry_after)
        except SlackApiError as exc:
            wait = retry_after(exc)
            status = getattr(exc.response, "status_code", 200)
            if attempt == SEND_ATTEMPTS - 1 or (wait is None and status < 500):
                raise
            log.info("%s: Slack said %s; retrying", what, error_code(exc))
            await asyncio.sleep(wait if wait is not None else 0.5 * 2**attempt)
        except (aiohttp.ClientError, TimeoutError):
            if attempt == SEND_ATTEMPTS - 1:
                raise
            log.info("%s: connection problem; retrying", what)
            await asyncio.sleep(0.5 * 2**attempt)
    raise AssertionError("unreachable")


class SlackTurn:
    """Renders one turn's stream events. Progress goes to one status message edited under the
    editor's rate (or the assistant status line); the answer replaces it, split at Slack's limit;
    cards follow as Block Kit messages and files as uploads. A Slack failure never loses the turn:
    the rest of the events are still consumed and the user is told what could not be shown."""

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
        self.report = report  # last resort for telling the user (e.g. the command's response_url)
        self.chat = ChatMessageSink(client, place.channel, place.thread_ts)
        self.stream: StreamSink | None = None
        if native_streaming and place.thread_ts:
            self.stream = StreamSink(
                client,
                place.channel,
                place.thread_ts,
                recipient_team_id=place.team_id,
                recipient_user_id=place.user_id,
            )
        self.answer = MessageEditor(self.stream or self.chat, min_interval=edit_interval, max_attempts=EDITOR_ATTEMPTS)
        # A separate progress line when the answer message cannot show it: assistant threads use
        # their status line; a native stream cannot take text back, so it gets a status message.
        self.assistant_status: AssistantStatusSink | None = None
        self.status: MessageEditor | None = None
        if place.assistant and place.thread_ts:
            self.assistant_status = AssistantStatusSink(client, place.channel, place.thread_ts)
            self.status = MessageEditor(self.assistant_status, min_interval=edit_interval, max_attempts=EDITOR_ATTEMPTS)
        elif self.stream is not None:
            self.status = MessageEditor(
                ChatMessageSink(client, place.channel, place.thread_ts),
                min_interval=edit_interval,
                max_attempts=EDITOR_ATTEMPTS,
            )
        self.streamed = ""
        self.progress = ""
        self.final: Final | Failure | None = None
        self.message_ids: list[str] = []
        self.error: BaseException | None = None

    # --- driving --------------------------------------------------------------------------
    async def run(self, events: AsyncIterator[StreamEvent], *, first: StreamEvent | None = None) -> StreamEvent | None:
        """Render every event; returns the terminal event (None if the stream was empty)."""
        # Start the turn before showing progress, so it queues on its thread in arrival order.
        pending = asyncio.ensure_future(anext(events, None)) if first is None else None
        try:
            await self._guard(self._show_progress(WORKING))
            if pending is not None:
                first = await pending
            if first is not None:
                await self._guard(self._render(first))
                async for event in events:
                    await self._guard(self._render(event))
        finally:
            if pending is not None and not pending.done():
                pending.cancel()
            await self._cleanup()
        if self.error is not None:
            await self._report_failure()
        elif self.final is None and self.answer.message_id is not None:
            await self.chat.delete(self.answer.message_id)  # nothing came: no stale "working" message
        return self.final

    async def _guard(self, step: Awaitable[None]) -> None:
        if self.error is not None:
            step.close()  # type: ignore[attr-defined]
            return
        try:
            await step
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.error = exc
            log.error("rendering a turn in %s failed: %s", self.key, error_code(exc), exc_info=not isinstance(exc, SlackApiError))

    async def _render(self, event: StreamEvent) -> None:
        if isinstance(event, Status | ToolStarted | ToolFinished):
            await self._show_progress(status_line(event))
        elif isinstance(event, Token):
            self.streamed += event.text
            await self._show_answer_so_far()
        elif isinstance(event, Final):
            self.final = event
            await self._deliver_final(event)
        elif isinstance(event, Failure):
            self.final = event
            await self._deliver_failure(event)

    # --- progress -------------------------------------------------------------------------
    async def _show_progress(self, line: str) -> None:
        self.progress = line
        if self.status is not None:
            await self.status.show(line if self.assistant_status else f"_{escape(line)}_")
        else:
            await self.answer.show(self._combined())

    async def _show_answer_so_far(self) -> None:
        if self.stream is not None:
            if self.streamed.strip():
                await self.answer.show(self.streamed)
        else:
            await self.answer.show(self._combined())

    def _combined(self) -> str:
        """The chat.update message while a turn runs: the answer streamed so far, then the progress line."""
        answer = to_mrkdwn(self.streamed).rstrip()
        line = f"_{escape(self.progress)}_" if self.progress else ""
        if answer and len(answer) + len(line) + 2 > self.chat.max_chars:
            answer = "…" + answer[-(self.chat.max_chars - len(line) - 4) :]
        return "\n\n".join(part for part in (answer, line) if part) or "…"

    # --- the answer -----------------------------------------------------------------------
    async def _deliver_final(self, final: Final) -> None:
        text = final.text.strip() or ("Here is what I found:" if final.cards else "Done.")
        self.message_ids = await self.answer.finish(text if self.stream else to_mrkdwn(text))
        if self.stream is not None:
            await self.stream.stop()
        for fallback, blocks in card_messages(final.cards, self.key):
            self.message_ids.append(await self.post_blocks(fallback, blocks))
        for file in final.files:
            await self._upload(file)

    async def _deliver_failure(self, failure: Failure) -> None:
        text = f"⚠️ {escape(failure.user_message)}"
        if failure.retry_after:
            text += f"\n_Try again in about {max(1, round(failure.retry_after))} s._"
        if self.stream is not None:
            await self.stream.stop()
            # the stream may hold a partial answer; the failure goes to a new message
            self.message_ids = [await self.chat.post(text)]
            return
        self.message_ids = await self.answer.finish(text)

    async def post_blocks(self, fallback: str, blocks: list[Block]) -> str:
        """Post a Block Kit message; without images if Slack could not fetch one; as text at worst."""
        attempts: list[list[Block] | None] = [blocks, without_images(blocks), None]
        last: SlackApiError | None = None
        for candidate in attempts:
            try:
                response = await send_with_retry(
                    lambda c=candidate: self.client.chat_postMessage(  # type: ignore[misc]
                        channel=self.place.channel,
                        thread_ts=self.place.thread_ts,
                        text=fallback,
                        blocks=c,
                        unfurl_links=False,
                        unfurl_media=False,
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

    async def _upload(self, file: Attachment) -> None:
        try:
            await send_with_retry(
                lambda: self.client.files_upload_v2(
                    channel=self.place.channel,
                    thread_ts=self.place.thread_ts,
                    content=file.content.encode("utf-8"),
                    filename=file.filename,
                    title=file.filename,
                    snippet_type="markdown" if file.mime_type == "text/markdown" else None,
                ),
                what="files upload",
            )
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            # Never lose the report: say why and post it inline instead.
            log.warning("upload of %s failed: %s", file.filename, error_code(exc))
            note = f"_I couldn't attach `{escape(file.filename)}` ({error_code(exc)}); here it is inline:_"
            await self.chat.post(note)
            for part in split_text(to_mrkdwn(file.content), MESSAGE_MAX_CHARS):
                await send_with_retry(lambda p=part: self.chat.post(p), what="chat.postMessage")  # type: ignore[misc]

    # --- endings --------------------------------------------------------------------------
    async def _cleanup(self) -> None:
        await self.answer.close()
        if self.status is not None:
            await self.status.close()
            if self.assistant_status is not None:
                await self.assistant_status.clear()
            elif self.status.message_id is not None:
                await self.chat.delete(self.status.message_id)
        if self.stream is not None and self.stream.streaming:
            try:
                await self.stream.stop()
            except SlackApiError as exc:
                log.info("stopping the stream failed: %s", error_code(exc))

    async def _report_failure(self) -> None:
        """Tell the user what could not be shown; the answer itself is re-sent as plain text."""
        code = error_code(self.error) if self.error else "unknown"
        lines = [f"⚠️ I couldn't show the whole answer here (Slack said `{code}`)."]
        if isinstance(self.final, Final) and self.final.text.strip():
            lines.append(to_mrkdwn(self.final.text.strip()))
        elif isinstance(self.final, Failure):
            lines.append(escape(self.final.user_message))
        parts = split_text("\n\n".join(lines), MESSAGE_MAX_CHARS)
        try:
            for part in parts:
                await send_with_retry(lambda p=part: self.chat.post(p), what="chat.postMessage")  # type: ignore[misc]
            return
        except (SlackApiError, RateLimited, aiohttp.ClientError, TimeoutError) as exc:
            log.error("could not report a failed answer in %s: %s", self.key, error_code(exc))
        if self.report is not None:
            try:
                await self.report(parts[0])
            except Exception as exc:
                log.error("could not report a failed answer to %s: %s", self.place.user_id, error_code(exc))
