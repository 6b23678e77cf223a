"""The turn renderer: drives any platform's `Surface` from a turn's stream events. Progress goes to
one status message edited under the platform's rate (or a separate status line); the answer
replaces it, split at the platform's limit; cards and files follow. A platform failure never loses
the turn: the rest of the events are still consumed and the user is told what could not be shown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.editor import MessageEditor, MessageSink, retrying, split_text
from bot.events import (
    INTERNAL_ERROR,
    Attachment,
    Card,
    Failure,
    Final,
    Status,
    StreamEvent,
    Token,
    ToolFinished,
    ToolStarted,
)
from bot.phrases import say

log = logging.getLogger(__name__)

WORKING = say("working")
RESUMED = "Resumed after a restart…"
INTERRUPTED_BY_RESTART = "Interrupted by a restart; I'll pick this up when I'm back."
STOP_EDIT_TIMEOUT = 5.0  # seconds the last edit of a turn stopped by shutdown may take
ANSWER_BELOW = "The answer is below."
EDITOR_ATTEMPTS = 3  # per message write, for platforms whose client does not retry on its own


class Surface(Protocol):
    """One conversation place on a platform (a thread, a DM, a terminal), as the renderer sees it.
    Platforms subclass it and implement the four abstract calls; the rest have defaults.

    `answer` holds the turn's message: posted at the first progress, edited while the turn runs,
    finished with the answer. `progress` is a separate status line (an assistant thread's status,
    a terminal line, a status message beside a native stream); None shows progress at the foot of
    the answer message. `live_answer` False keeps streamed text out of the answer message until
    the end (a terminal cannot edit what it printed); `append_only` says the answer message cannot
    take text back (a native stream), so a failure goes below it. Platform calls raise on failure:
    the renderer logs `describe(exc)`, finishes consuming the turn and tells the user."""

    name: str = "the platform"
    answer: MessageSink
    progress: MessageSink | None = None
    live_answer: bool = True
    stream_to_progress: bool = False  # without a live answer: show streamed text on the progress line
    append_only: bool = False
    edit_interval: float = 1.0

    def retryable(self, exc: Exception) -> bool:
        """Whether a failed write is worth another try. Platforms whose client already retries
        server errors and rate limits (slack_sdk's retry handlers, discord.py's HTTP client) say
        no for those, so retries never stack (one Slack post under persistent 500s is three HTTP
        calls, not nine), and no for refusals that a retry cannot change."""
        return True

    async def post(self, text: str) -> str:
        """A new message, in `markup`'s markup, retried as the platform allows; its id."""
        ...

    async def delete(self, message_id: str) -> None: ...

    async def post_cards(self, cards: Sequence[Card]) -> list[str]: ...

    async def post_file(self, file: Attachment) -> None: ...

    def markup(self, markdown: str) -> str:
        """Agents write Markdown; this is the platform's markup for `post`."""
        return markdown

    def plain(self, text: str) -> str:
        """Plain words (a refusal, a file's name) as the platform's markup, escaped."""
        return text

    def answer_markup(self, markdown: str) -> str:
        """The markup the answer message takes (a native stream may take Markdown itself)."""
        return self.markup(markdown)

    def progress_markup(self, line: str) -> str:
        """A progress line as shown (e.g. in italics, escaped)."""
        return line

    def failure_markup(self, failure: Failure) -> str:
        text = f"⚠️ {self.markup(failure.user_message)}"
        if failure.retry_after:
            text += "\n" + self.progress_markup(f"Try again in about {max(1, round(failure.retry_after))} s.")
        return text

    async def end_answer(self) -> None:
        """The answer message is complete (e.g. stop a native stream)."""
        return None

    async def clear_progress(self, message_id: str | None) -> None:
        """The turn is over: remove the progress line."""
        if message_id is not None:
            await self.delete(message_id)

    async def report(self, text: str) -> None:
        """The last resort for telling the user something (e.g. a private, ephemeral message)."""
        return None

    def describe(self, exc: BaseException) -> str:
        """The platform's short name for a failed call (an error code), safe to show."""
        return type(exc).__name__


@dataclass
class StatusMessage:
    """Where a turn's status message is on its platform: the renderer fills in its id when it
    posts it; whoever runs the turn may listen (the runtime records it with the turn, so the next
    start can edit the message a crash left behind)."""

    message_id: str | None = None
    on_posted: Callable[[str], Awaitable[None]] | None = None

    async def posted(self, message_id: str) -> None:
        if message_id == self.message_id:
            return
        self.message_id = message_id
        if self.on_posted is not None:
            await self.on_posted(message_id)


def web_url(url: str | None, max_chars: int | None = None) -> str | None:
    """A card's link or image address, if it is a web address a platform can open (not
    `javascript:`, not a local path) and fits in `max_chars`."""
    if url and url.startswith(("https://", "http://")) and (max_chars is None or len(url) <= max_chars):
        return url
    return None


def progress_line(event: Status | ToolStarted | ToolFinished) -> str:
    if isinstance(event, Status):
        return event.text
    if isinstance(event, ToolStarted):
        return f"Using {event.name}" + (f" ({event.args_summary})" if event.args_summary else "") + "…"
    return f"{event.name}: {event.summary}" if event.summary else f"{event.name} done"


class TurnRenderer:
    """Renders one turn's events on a Surface; `run()` returns the terminal event."""

    def __init__(
        self,
        surface: Surface,
        *,
        working: str = WORKING,
        status: StatusMessage | None = None,
        replacing: str | None = None,
    ) -> None:
        """`status`: told where the status message went. `replacing`: the id of a status message
        an earlier run of this turn left (a restart): it is edited in place of posting a new one."""
        self.surface = surface
        self.working = working
        self.status_message = status
        self.replacing = replacing
        self.answer = MessageEditor(surface.answer, min_interval=surface.edit_interval, max_attempts=EDITOR_ATTEMPTS,
                                    retryable=surface.retryable)
        self.status = (
            MessageEditor(surface.progress, min_interval=surface.edit_interval, max_attempts=EDITOR_ATTEMPTS,
                          retryable=surface.retryable)
            if surface.progress is not None
            else None
        )
        self.streamed = ""
        self.progress = ""
        self.final: Final | Failure | None = None
        self.message_ids: list[str] = []
        self.error: BaseException | None = None
        self.stopped = False  # stopped by shutdown before the answer
        if replacing is not None:
            if surface.progress is None:
                self.answer.message_id = replacing
            # else: the old message was a separate status message; run() deletes it

    @property
    def _status_editor(self) -> MessageEditor:
        """The editor of the message that shows progress."""
        return self.status if self.status is not None else self.answer

    async def run(self, events: AsyncIterator[StreamEvent], *, first: StreamEvent | None = None) -> StreamEvent | None:
        if self.replacing is not None and self.surface.progress is not None:
            await self._delete_quietly(self.replacing)
        # Start the turn before showing progress, so it queues on its thread in arrival order.
        pending = asyncio.ensure_future(anext(events, None)) if first is None else None
        try:
            if self.working:
                await self._guard(self._show_progress(self.working))
                await self._note_status()
            if pending is not None:
                first = await pending
            if first is not None:
                await self._guard(self._render(first))
                await self._note_status()
                async for event in events:
                    await self._guard(self._render(event))
                    await self._note_status()
        except asyncio.CancelledError:
            if self.final is None:
                await self._stopped()
            raise
        except Exception:  # the turn itself broke (not its rendering, which `_guard` keeps): say so
            log.exception("a turn failed before it ended")
            if self.final is None:
                await self._guard(self._render(Failure(kind="internal", user_message=INTERNAL_ERROR)))
        finally:
            if pending is not None and not pending.done():
                pending.cancel()
            await self._cleanup()
        if self.error is not None:
            await self._report_failure()
        elif self.final is None and self.answer.message_id is not None and self._touched():
            try:  # nothing came: no stale "working" message
                await self.surface.delete(self.answer.message_id)
            except Exception as exc:
                log.info("could not delete the status message: %s", self.surface.describe(exc))
        return self.final

    def _touched(self) -> bool:
        """Whether this run posted or edited the answer message (an earlier run's message it was
        given to replace stays as it is when nothing came)."""
        return self.answer.message_id != self.replacing or self.answer.edits > 0

    async def _note_status(self) -> None:
        """Tell `status` where the status message is (once posted, and if it moved)."""
        message_id = self._status_editor.message_id
        if self.status_message is None or message_id is None or self.final is not None:
            return
        try:
            await self.status_message.posted(message_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("could not record where the status message is", exc_info=True)

    async def _stopped(self) -> None:
        """The turn was stopped (shutdown) before its answer: say so in the status message, so no
        "working" message is left behind; the turn resumes on the next start."""
        editor = self._status_editor
        message_id = editor.message_id
        if message_id is None:
            return
        self.stopped = True  # the notice stays: the next start replaces it
        await editor.close()
        try:
            await asyncio.wait_for(
                editor.sink.edit(message_id, self.surface.progress_markup(INTERRUPTED_BY_RESTART)), STOP_EDIT_TIMEOUT
            )
        except (Exception, asyncio.CancelledError) as exc:
            log.info("could not mark the status message interrupted: %s", self.surface.describe(exc))

    async def _delete_quietly(self, message_id: str) -> None:
        try:
            await self.surface.delete(message_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("could not delete the earlier status message: %s", self.surface.describe(exc))

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
            log.error("rendering a turn failed: %s", self.surface.describe(exc), exc_info=log.isEnabledFor(logging.DEBUG))

    async def _render(self, event: StreamEvent) -> None:
        if isinstance(event, ToolStarted | ToolFinished) and event.narrated:
            return  # the agent's own Status lines say it
        if isinstance(event, Status | ToolStarted | ToolFinished):
            await self._show_progress(progress_line(event))
        elif isinstance(event, Token):
            self.streamed += event.text
            await self._show_answer_so_far()
        elif isinstance(event, Final):
            self.final = event
            await self._deliver_final(event)
        elif isinstance(event, Failure):
            self.final = event
            await self._deliver_failure(event)

    # --- while the turn runs ----------------------------------------------------------------
    async def _show_progress(self, line: str) -> None:
        self.progress = line
        if self.status is not None:
            await self.status.show(self.surface.progress_markup(line))
        else:
            await self.answer.show(self._combined())

    async def _show_answer_so_far(self) -> None:
        if not self.surface.live_answer:
            if self.surface.stream_to_progress and self.status is not None and self.streamed.strip():
                await self.status.show(self.surface.progress_markup(self.streamed))
        elif self.status is not None:
            if self.streamed.strip():
                await self.answer.show(self.surface.answer_markup(self.streamed))
        else:
            await self.answer.show(self._combined())

    def _combined(self) -> str:
        """The answer message while a turn runs: the answer streamed so far, then the progress line."""
        answer = self.surface.answer_markup(self.streamed).rstrip()
        line = self.surface.progress_markup(self.progress) if self.progress else ""
        limit = self.surface.answer.max_chars
        if answer and len(answer) + len(line) + 2 > limit:
            answer = "…" + answer[-(limit - len(line) - 4) :]
        return "\n\n".join(part for part in (answer, line) if part) or "…"

    # --- the answer ---------------------------------------------------------------------------
    async def _deliver_final(self, final: Final) -> None:
        text = final.text.strip() or ("Here is what I found:" if final.cards else "Done.")
        self.message_ids = await self._finish(self.surface.answer_markup(text))
        await self.surface.end_answer()
        if final.cards:
            self.message_ids += await self.surface.post_cards(final.cards)
        for file in final.files:
            await self._post_file(file)

    async def _deliver_failure(self, failure: Failure) -> None:
        text = self.surface.failure_markup(failure)
        if self.surface.append_only:
            await self.surface.end_answer()
            # the answer message may hold a partial, streamed answer; the failure goes below it
            self.message_ids = [await self.surface.post(text)]
            return
        self.message_ids = await self._finish(text)

    async def _finish(self, text: str) -> list[str]:
        """The answer replaces the status message, split at the limit. If the platform keeps
        refusing to edit that message (after its own and the editor's retries), the answer goes into
        a new message instead, so what follows it (cards, buttons, files) still follows the text,
        and the stale status message is tidied away."""
        parts = split_text(text or "…", self.surface.answer.max_chars)
        try:
            ids = await self.answer.finish(parts[0])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            stale = self.answer.message_id
            if stale is None or self.surface.append_only:
                raise  # nothing was posted yet, or a stream: the renderer's failure report follows
            log.warning("could not edit the status message (%s); posting the answer anew", self.surface.describe(exc))
            ids = [await self._post_answer(parts[0])]
            await self._tidy(stale)
        for part in parts[1:]:
            ids.append(await self._post_answer(part))
        return ids

    async def _post_answer(self, text: str) -> str:
        return await retrying(lambda: self.surface.answer.post(text), attempts=EDITOR_ATTEMPTS,
                              retryable=self.surface.retryable, what="answer post")

    async def _tidy(self, stale: str) -> None:
        """Delete a status message the answer could not replace; failing that, point to the answer."""
        try:
            await self.surface.delete(stale)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("could not delete the stale status message: %s", self.surface.describe(exc))
        try:
            await self.surface.answer.edit(stale, self.surface.progress_markup(ANSWER_BELOW))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("the stale status message stays as it was: %s", self.surface.describe(exc))

    async def _post_file(self, file: Attachment) -> None:
        try:
            await self.surface.post_file(file)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # Never lose the file: say why and post it inline instead.
            log.warning("sending %s failed: %s", file.filename, self.surface.describe(exc))
            if file.is_binary:  # an image cannot go inline; the answer stands without it
                await self.surface.post(
                    self.surface.progress_markup(f"I couldn't attach {file.filename} ({self.surface.describe(exc)}).")
                )
                return
            await self.surface.post(
                self.surface.progress_markup(f"I couldn't attach {file.filename} ({self.surface.describe(exc)}); here it is inline:")
            )
            for part in split_text(self.surface.markup(file.content), self.surface.answer.max_chars):
                await self.surface.post(part)

    # --- endings ------------------------------------------------------------------------------
    async def _cleanup(self) -> None:
        await self.answer.close()
        if self.status is not None:
            await self.status.close()
            try:
                if not self.stopped:
                    await self.surface.clear_progress(self.status.message_id)
            except Exception as exc:
                log.info("could not clear the progress line: %s", self.surface.describe(exc))
        try:
            await self.surface.end_answer()
        except Exception as exc:
            log.info("could not end the answer message: %s", self.surface.describe(exc))

    async def _report_failure(self) -> None:
        """Tell the user what could not be shown; the answer itself is re-sent as plain text."""
        code = self.surface.describe(self.error) if self.error else "unknown"
        lines = [f"⚠️ I couldn't show the whole answer here ({self.surface.name} said `{code}`)."]
        if isinstance(self.final, Final) and self.final.text.strip():
            lines.append(self.surface.markup(self.final.text.strip()))
        elif isinstance(self.final, Failure):
            lines.append(self.surface.markup(self.final.user_message))
        parts = split_text("\n\n".join(lines), self.surface.answer.max_chars)
        try:
            for part in parts:
                await self.surface.post(part)
            return
        except Exception as exc:
            log.error("could not report a failed answer: %s", self.surface.describe(exc))
        try:
            await self.surface.report(parts[0])
        except Exception as exc:
            log.error("could not report a failed answer privately: %s", self.surface.describe(exc))
