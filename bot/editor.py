"""The message editor: one status message per turn, edited under a rate with latest-text-wins
coalescing; long answers split at the platform limit on natural boundaries. Used by every adapter."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeGuard, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class RateLimited(Exception):
    """Raised by a sink when the platform answered 429; the editor waits `retry_after`."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited for {retry_after:.2f}s")
        self.retry_after = retry_after


class MessageGone(Exception):
    """Raised by a sink's `edit` when the message can never be edited again (deleted, too old):
    the editor posts the text as a new message and edits that one from then on."""


class MessageSink(Protocol):
    max_chars: int

    async def post(self, text: str) -> str: ...

    async def edit(self, message_id: str, text: str) -> None: ...


STATUS_LINE = "status"  # the one message id of a StatusLineSink


class StatusLineSink:
    """A sink for a status line that is always there (an assistant thread's, a terminal's):
    posting to it is editing it."""

    max_chars: int

    async def post(self, text: str) -> str:
        await self.edit(STATUS_LINE, text)
        return STATUS_LINE

    async def edit(self, message_id: str, text: str) -> None:
        raise NotImplementedError


# --- splitting ------------------------------------------------------------------------------
def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")  # a code fence line: indent, fence, info string


def closes_fence(match: re.Match[str] | None, fence: str) -> TypeGuard[re.Match[str]]:
    """Whether a FENCE match closes the code block `fence` opened (same character, at least as
    long, nothing after it)."""
    return match is not None and match.group(2)[0] == fence[0] and len(match.group(2)) >= len(fence) and not match.group(3).strip()


def _blocks(text: str) -> list[str]:
    """Paragraph blocks; a fenced code block (with its surrounding paragraph lines) is one block."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)
            current.append(line)
            continue
        if fence is not None:
            current.append(line)
            if closes_fence(match, fence):
                fence = None
            continue
        if line.strip() == "":
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _split_words(text: str, limit: int) -> list[str]:
    parts: list[str] = []
    current = ""
    for word in re.findall(r"\S+\s*", text):
        while len(word) > limit:  # a single word longer than the limit: hard cut
            if current:
                parts.append(current.rstrip())
                current = ""
            parts.append(word[:limit])
            word = word[limit:]
        if len(current) + len(word.rstrip()) > limit:
            parts.append(current.rstrip())
            current = ""
        current += word
    if current.strip():
        parts.append(current.rstrip())
    return parts


def _split_block(block: str, limit: int) -> list[str]:
    """Split one oversized block by lines (re-opening a code fence in every part), then words."""
    lines = block.split("\n")
    fence_open = FENCE.match(lines[0]) if lines else None
    if fence_open:
        opener = lines[0]
        closer = fence_open.group(1) + fence_open.group(2)
        body = lines[1:-1] if len(lines) > 1 and FENCE.match(lines[-1]) else lines[1:]
        room = limit - len(opener) - len(closer) - 2
        parts: list[str] = []
        current: list[str] = []
        size = 0
        for line in body:
            pieces = [line] if len(line) <= room else [line[i : i + room] for i in range(0, len(line), room)]
            for piece in pieces:
                if current and size + len(piece) + 1 > room:
                    parts.append("\n".join([opener, *current, closer]))
                    current, size = [], 0
                current.append(piece)
                size += len(piece) + 1
        if current or not parts:
            parts.append("\n".join([opener, *current, closer]))
        return parts
    parts = []
    current_text = ""
    for line in lines:
        for piece in ([line] if len(line) <= limit else _split_words(line, limit)):
            candidate = f"{current_text}\n{piece}" if current_text else piece
            if len(candidate) > limit:
                parts.append(current_text)
                current_text = piece
            else:
                current_text = candidate
    if current_text:
        parts.append(current_text)
    return parts


def split_text(text: str, limit: int) -> list[str]:
    """Split `text` into parts of at most `limit` characters, on paragraph, then line, then word
    boundaries; never inside a code fence (an oversized fence is closed and re-opened per part)."""
    if limit < 20:
        raise ValueError("limit too small")
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    current = ""
    for block in _blocks(text):
        pieces = [block] if len(block) <= limit else _split_block(block, limit)
        for piece in pieces:
            candidate = f"{current}\n\n{piece}" if current else piece
            if len(candidate) <= limit:
                current = candidate
            else:
                if current:
                    parts.append(current)
                current = piece
    if current:
        parts.append(current)
    return parts


# --- editing --------------------------------------------------------------------------------
class MessageEditor:
    """Shows progress in one message and ends it with the answer.

    `show()` never queues stale text: while an edit is pending only the newest text is kept, and
    edits of the message are at least `min_interval` seconds apart. Rate-limit answers from the
    platform (RateLimited) are waited out, then the newest text is sent."""

    def __init__(
        self,
        sink: MessageSink,
        *,
        min_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        max_attempts: int = 5,
        retryable: Callable[[Exception], bool] = lambda exc: True,
    ) -> None:
        self.sink = sink
        self._retryable = retryable
        self.min_interval = min_interval
        self._clock = clock
        self._sleep = sleep
        self._max_attempts = max_attempts
        self.message_id: str | None = None
        self._latest: str | None = None
        self._shown: str | None = None
        self._next_allowed = 0.0
        self._flusher: asyncio.Task[None] | None = None
        self._io = asyncio.Lock()
        self._sending = False  # a post or edit is on its way to the platform
        self._finishing = False
        self.edits = 0

    async def show(self, text: str) -> None:
        text = clip(text, self.sink.max_chars)
        self._latest = text
        if self.message_id is None and self._flusher is None:
            await self._write(text)
            return
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    async def finish(self, text: str) -> list[str]:
        """Replace the status message with the answer (split as needed); returns message ids.

        A progress edit already sent is waited for, never cancelled (the platform may apply it
        after the answer otherwise); one still waiting for its turn is dropped. The answer then
        keeps the pace like any edit, so edits of the message stay ordered and `min_interval`
        apart."""
        self._finishing = True
        if self._flusher is not None:
            flusher, self._flusher = self._flusher, None
            if not self._sending:
                flusher.cancel()
            try:
                await flusher
            except asyncio.CancelledError:
                if asyncio.current_task() and asyncio.current_task().cancelling():  # type: ignore[union-attr]
                    raise
        parts = split_text(text or "…", self.sink.max_chars)
        ids: list[str] = []
        self._latest = parts[0]
        await self._write(parts[0], final=True)
        assert self.message_id is not None
        ids.append(self.message_id)
        for part in parts[1:]:
            ids.append(await self._retrying(lambda p=part: self.sink.post(p)))  # type: ignore[misc]
        return ids

    async def close(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None

    async def _flush(self) -> None:
        while not self._finishing and self._latest is not None and self._latest != self._shown:
            try:
                await self._write(self._latest)
            except asyncio.CancelledError:
                raise
            except Exception:  # progress edits are best effort; the final answer is retried
                log.warning("status edit failed", exc_info=True)
                return

    async def _write(self, text: str, *, final: bool = False) -> None:
        async with self._io:
            if final and self.message_id is not None and (self._latest or text) == self._shown:
                return  # the answer is already showing (streamed): nothing to wait for
            wait = self._next_allowed - self._clock()
            if wait > 0:
                await self._sleep(wait)
            if final:
                text = self._latest or text
            elif self._latest is not None:
                text = self._latest  # latest text wins, even if it changed while we waited
            if self.message_id is not None and text == self._shown:
                return
            if self._finishing and not final:
                return  # the answer replaces this progress text
            self._sending = True
            try:
                await self._send(text)
            finally:
                self._sending = False
            self._shown = text
            self._next_allowed = self._clock() + self.min_interval

    async def _send(self, text: str) -> None:
        if self.message_id is None:
            self.message_id = await self._retrying(lambda: self.sink.post(text))
        else:
            message_id = self.message_id
            try:
                await self._retrying(lambda: self.sink.edit(message_id, text))
                self.edits += 1
            except MessageGone:
                log.info("the message can no longer be edited; posting a new one")
                self.message_id = await self._retrying(lambda: self.sink.post(text))

    async def _retrying(self, call: Callable[[], Awaitable[str | None]]) -> str:
        return await retrying(
            call, attempts=self._max_attempts, sleep=self._sleep,
            retryable=lambda exc: not isinstance(exc, MessageGone) and self._retryable(exc),
        ) or ""


async def retrying(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int,
    retryable: Callable[[Exception], bool] = lambda exc: True,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    what: str = "message send",
) -> T:
    """The one retry policy for platform calls: a RateLimited answer is waited out, other failures
    that `retryable` accepts are retried with exponential backoff; after `attempts` the last
    failure is raised."""
    for attempt in range(attempts):
        try:
            return await call()
        except asyncio.CancelledError:
            raise
        except RateLimited as limited:
            if attempt == attempts - 1:
                raise
            log.info("%s: platform rate limit; waiting %.2fs", what, limited.retry_after)
            await sleep(limited.retry_after)
        except Exception as exc:
            if attempt == attempts - 1 or not retryable(exc):
                raise
            log.warning("%s failed (%s); retrying", what, type(exc).__name__)
            await sleep(min(8.0, 0.5 * 2**attempt))
    raise AssertionError("unreachable")
