"""Console adapter: renders stream events in a terminal, exactly as a chat platform would."""

from __future__ import annotations

import asyncio
import json
import mimetypes
import shutil
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TextIO

from bot.agent import IncomingFile
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import Attachment, Card, Failure, Final, Status, StreamEvent, Token, ToolFinished, ToolStarted
from bot.runtime import ConversationRuntime


def render_card(card: Card) -> str:
    lines = [f"  ▸ {card.title}" + (f" — {card.subtitle}" if card.subtitle else "")]
    lines += [f"      {name}: {value}" for name, value in card.fields.items()]
    if card.url:
        lines.append(f"      {card.url}")
    if card.actions:
        lines.append("      " + "  ".join(f"[{a.label}]" for a in card.actions))
    return "\n".join(lines)


class StatusLine:
    """One live-edited line on a terminal (the console's status message); plain lines otherwise."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = out.isatty()
        self.width = shutil.get_terminal_size((100, 20)).columns - 1
        self.shown = ""

    def show(self, text: str) -> None:
        text = " ".join(text.split())
        if self.live:
            text = text[-self.width :] if len(text) > self.width else text
            self.out.write("\r" + text.ljust(len(self.shown)) + "\r" + text)
        elif text != self.shown:
            self.out.write(text + "\n")
        self.out.flush()
        self.shown = text

    def clear(self) -> None:
        if self.live and self.shown:
            self.out.write("\r" + " " * len(self.shown) + "\r")
            self.out.flush()
        self.shown = ""


def save_file(directory: Path, file: Attachment) -> Path:
    """Keep a file the bot sent (e.g. a full report) where the user can open it."""
    directory.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in file.filename) or "file"
    path = directory / safe
    path.write_text(file.content, encoding="utf-8")
    return path


async def render(events: AsyncIterator[StreamEvent], out: TextIO, files_dir: Path | None = None) -> StreamEvent | None:
    """Show progress on the status line, then the final answer; returns the terminal event."""
    status = StatusLine(out)
    streamed = ""
    last: StreamEvent | None = None
    async for event in events:
        last = event
        if isinstance(event, Status):
            status.show(f"… {event.text}")
        elif isinstance(event, ToolStarted):
            status.show(f"… {event.name}({event.args_summary})")
        elif isinstance(event, ToolFinished):
            status.show(f"… {event.summary}")
        elif isinstance(event, Token):
            streamed += event.text
            if status.live:
                status.show(streamed)
        elif isinstance(event, Final):
            status.clear()
            out.write(event.text + "\n")
            for card in event.cards:
                out.write(render_card(card) + "\n")
            for file in event.files:
                where = f" → {save_file(files_dir, file)}" if files_dir is not None else ""
                out.write(f"  📎 {file.filename} ({len(file.content)} chars){where}\n")
        elif isinstance(event, Failure):
            status.clear()
            out.write(f"⚠ {event.user_message}\n")
    out.flush()
    return last


def load_attachment(path: str) -> IncomingFile:
    file = Path(path)
    mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    return IncomingFile(filename=file.name, content=file.read_bytes(), mime_type=mime)


async def ask(
    settings: Settings,
    text: str,
    *,
    thread: str | None,
    user: str,
    attach: list[str],
    as_json: bool,
    out: TextIO = sys.stdout,
) -> int:
    """One turn, then exit: 0 after a Final, 1 after a Failure."""
    try:
        files = [load_attachment(p) for p in attach]
    except OSError as exc:
        print(f"cannot read attachment: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 2
    key = ConversationKey.console(thread or f"ask-{uuid.uuid4().hex[:12]}")
    async with await ConversationRuntime.open(settings) as runtime:
        events = runtime.handle(key, text, user_id=user, attachments=files)
        if as_json:
            last = None
            async for event in events:
                last = event
                out.write(json.dumps(event.model_dump(mode="json"), ensure_ascii=False) + "\n")
                out.flush()
        else:
            last = await render(events, out, files_dir=settings.data_dir / "files" / key.thread_id.replace(":", "_"))
    return 0 if isinstance(last, Final) else 1


async def chat(settings: Settings, *, agent: str | None, thread: str, user: str = "console") -> int:
    """Interactive terminal chat. Lines starting with `/` are commands; `/quit` leaves."""
    key = ConversationKey.console(thread)
    loop = asyncio.get_running_loop()
    async with await ConversationRuntime.open(settings) as runtime:
        names = ", ".join(a.command for a in runtime.agents())
        print(f"Concierge — model: {settings.llm_mode}; commands: {names}, /reset, /help, /quit")
        if key.thread_id in runtime.interrupted_at_start:
            print("(your last request here was interrupted by a restart)")
        prefix = f"/{agent} " if agent else ""
        files_dir = settings.data_dir / "files" / key.thread_id.replace(":", "_")
        while True:
            try:
                line = await loop.run_in_executor(None, lambda: input("you › "))
            except (EOFError, KeyboardInterrupt):
                print()
                return 0
            line = line.strip()
            if line in ("/quit", "/exit"):
                return 0
            if not line:
                continue
            text = line if line.startswith("/") or not prefix else prefix + line
            print("bot › ", end="", flush=True)
            await render(runtime.handle(key, text, user_id=user), sys.stdout, files_dir=files_dir)
