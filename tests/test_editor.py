"""The message editor: rate, latest-text-wins, splitting, rate-limit waits."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from bot.editor import MessageEditor, MessageGone, RateLimited, split_text


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Wait until the clock (advanced by `tick`) has moved `seconds` on."""
        target = self.now + seconds
        while self.now < target:  # noqa: ASYNC110 - a fake clock advanced by tick()
            await asyncio.sleep(0)

    async def tick(self) -> None:
        while True:
            self.now += 0.1
            await asyncio.sleep(0)


class RecordingSink:
    """A platform stand-in recording when each edit happened (on the fake clock)."""

    def __init__(self, clock: Clock, max_chars: int = 100, rate_limit_once: float | None = None) -> None:
        self.clock = clock
        self.max_chars = max_chars
        self.messages: dict[str, str] = {}
        self.edits: list[tuple[float, str, str]] = []
        self.posts: list[str] = []
        self._rate_limit = rate_limit_once

    async def post(self, text: str) -> str:
        message_id = f"m{len(self.messages) + 1}"
        self.messages[message_id] = text
        self.posts.append(text)
        return message_id

    async def edit(self, message_id: str, text: str) -> None:
        if self._rate_limit is not None:
            retry_after, self._rate_limit = self._rate_limit, None
            raise RateLimited(retry_after)
        self.messages[message_id] = text
        self.edits.append((self.clock.now, message_id, text))


async def test_edits_never_exceed_the_rate_and_end_on_the_latest_text() -> None:
    clock = Clock()
    sink = RecordingSink(clock)
    editor = MessageEditor(sink, min_interval=1.0, clock=clock, sleep=clock.sleep)
    ticker = asyncio.create_task(clock.tick())
    try:
        for i in range(50):
            await editor.show(f"step {i}")
            await asyncio.sleep(0)
        await editor.finish("all done")
    finally:
        ticker.cancel()
    times = [t for t, _, _ in sink.edits]
    assert all(b - a >= 1.0 - 1e-9 for a, b in itertools.pairwise(times))
    assert len(sink.edits) <= clock.now / 1.0 + 1 < 50  # coalesced, never one edit per update
    assert sink.messages == {"m1": "all done"}


async def test_stale_text_is_never_sent_after_newer_text() -> None:
    clock = Clock()
    sink = RecordingSink(clock)
    editor = MessageEditor(sink, min_interval=1.0, clock=clock, sleep=clock.sleep)
    ticker = asyncio.create_task(clock.tick())
    try:
        await editor.show("one")
        await editor.show("two")
        await editor.show("three")
        await asyncio.sleep(0)
        await editor.finish("final")
    finally:
        ticker.cancel()
    sent = [text for _, _, text in sink.edits]
    assert "two" not in sent
    assert sent[-1] == "final"


async def test_rate_limit_is_waited_out_then_latest_text_sent() -> None:
    clock = Clock()
    sink = RecordingSink(clock, rate_limit_once=3.0)
    editor = MessageEditor(sink, min_interval=1.0, clock=clock, sleep=clock.sleep)
    ticker = asyncio.create_task(clock.tick())
    try:
        await editor.show("working")
        await editor.finish("answer")
    finally:
        ticker.cancel()
    assert sink.messages["m1"] == "answer"
    assert sink.edits[-1][0] >= 3.0


async def test_long_answer_is_split_into_several_messages() -> None:
    clock = Clock()
    sink = RecordingSink(clock, max_chars=50)
    editor = MessageEditor(sink, min_interval=0.0, clock=clock, sleep=clock.sleep)
    await editor.show("thinking")
    text = "\n\n".join(f"Paragraph {i} has some words in it." for i in range(6))
    ids = await editor.finish(text)
    assert len(ids) > 1 and ids[0] == "m1"
    assert all(len(sink.messages[i]) <= 50 for i in ids)
    assert " ".join(sink.messages[i] for i in ids).split() == text.split()


def test_split_prefers_paragraphs_then_lines_then_words() -> None:
    text = "alpha beta\n\ngamma delta\nepsilon zeta\n\n" + "word " * 30
    parts = split_text(text, 40)
    assert parts[0] == "alpha beta\n\ngamma delta\nepsilon zeta"
    assert all(len(p) <= 40 for p in parts)
    assert " ".join(parts).split() == text.split()


def test_split_never_cuts_inside_a_code_fence() -> None:
    code = "```python\n" + "\n".join(f"print({i})" for i in range(30)) + "\n```"
    text = "Intro paragraph.\n\n" + code + "\n\nOutro."
    parts = split_text(text, 120)
    assert all(len(p) <= 120 for p in parts)
    for part in parts:
        assert part.count("```") % 2 == 0, part
    body = "\n".join(parts)
    for i in range(30):
        assert f"print({i})" in body


def test_short_text_is_one_part() -> None:
    assert split_text("hello", 100) == ["hello"]
    with pytest.raises(ValueError):
        split_text("x", 5)


async def test_a_message_that_can_no_longer_be_edited_is_replaced_and_edits_follow_the_new_one() -> None:
    clock = Clock()
    ticker = asyncio.create_task(clock.tick())

    class GoneOnce(RecordingSink):
        gone = {"m1"}

        async def edit(self, message_id: str, text: str) -> None:
            if message_id in self.gone:
                raise MessageGone("message_not_found")
            await super().edit(message_id, text)

    sink = GoneOnce(clock)
    editor = MessageEditor(sink, min_interval=1.0, clock=clock, sleep=clock.sleep)
    try:
        await editor.show("Working…")
        ids = await editor.finish("The answer.")
        await editor.close()
    finally:
        ticker.cancel()
    assert sink.posts == ["Working…", "The answer."]  # posted once more, not retried against m1
    assert ids == ["m2"] and editor.message_id == "m2"


class SlowSink(RecordingSink):
    """Each edit takes `delay` seconds of the fake clock, recorded at start and end: a request in
    flight when the answer is ready."""

    def __init__(self, clock: Clock, delay: float) -> None:
        super().__init__(clock)
        self.delay = delay
        self.spans: list[tuple[float, float, str]] = []

    async def edit(self, message_id: str, text: str) -> None:
        start = self.clock.now
        await self.clock.sleep(self.delay)
        self.messages[message_id] = text
        self.spans.append((start, self.clock.now, text))


async def test_the_answer_waits_for_an_edit_in_flight_and_keeps_the_pace() -> None:
    clock = Clock()
    sink = SlowSink(clock, delay=0.5)
    editor = MessageEditor(sink, min_interval=1.0, clock=clock, sleep=clock.sleep)
    ticker = asyncio.create_task(clock.tick())
    try:
        await editor.show("working")
        await editor.show("step 1")
        while not clock.now > 1.1:  # noqa: ASYNC110 - the fake clock: the step-1 edit is now in flight
            await asyncio.sleep(0)
        await editor.finish("the answer")
    finally:
        ticker.cancel()
    assert [text for _, _, text in sink.spans] == ["step 1", "the answer"]  # the edit in flight was not dropped
    (_, first_end, _), (second_start, _, _) = sink.spans
    assert second_start >= first_end + 1.0 - 1e-9  # never two edits closer than the interval
    assert sink.messages == {"m1": "the answer"}
