"""Files users attach, for every platform: which are accepted (text, within the size limit, judged
from metadata before anything is downloaded), and a bounded download that refuses binary content."""

from __future__ import annotations

from pathlib import PurePosixPath

import aiohttp

from bot.agent import BadInput, IncomingFile

TEXT_SUFFIXES = (".md", ".markdown", ".mdown", ".txt")
TEXT_KINDS = ("markdown", "text", "md")  # platforms' own file-type names
TEXT_MIME_PREFIXES = ("text/markdown", "text/x-markdown", "text/plain")
DOWNLOAD_TIMEOUT = 20.0


class FileRejected(BadInput):
    """A file the bot will not read; the message (`said` in the user's language) is shown to the user."""


def human_size(size: int) -> str:
    if size < 1000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1000:.0f} KB"
    return f"{size / 1_000_000:.1f} MB"


def check_text_file(name: str, size: int | None, *, max_bytes: int, mime: str = "", kind: str = "", label: str = "") -> None:
    """Refuse a file by its metadata: not Markdown or text (by suffix; without one, by the
    platform's `kind` or the MIME type), or over `max_bytes`. `label` names its type for the user."""
    suffix = PurePosixPath(name.lower()).suffix
    mime, kind = mime.lower(), kind.lower()
    if not (suffix in TEXT_SUFFIXES or (not suffix and (kind in TEXT_KINDS or mime.startswith(TEXT_MIME_PREFIXES)))):
        kind_named = label or kind.upper() or mime or "unknown type"
        raise FileRejected(
            f"`{name}` is not a Markdown or text file ({kind_named}). "
            "I can read Markdown (`.md`) or plain-text (`.txt`) files.",
            ja=f"`{name}` は Markdown やテキストのファイルではありません（{kind_named}）。"
               "読めるのは Markdown（`.md`）かテキスト（`.txt`）のファイルです。",
        )
    if size is not None and size > max_bytes:
        raise FileRejected(f"`{name}` is {human_size(size)}; the limit is {human_size(max_bytes)}.",
                           ja=f"`{name}` は {human_size(size)} あります。上限は {human_size(max_bytes)} です。")


async def download_text_file(
    session: aiohttp.ClientSession, url: str, name: str, *, max_bytes: int, headers: dict[str, str] | None = None,
    mime: str = "text/markdown",
) -> IncomingFile:
    """Fetch a checked file, stopping at `max_bytes`; refuse what is not UTF-8 text. Redirects are
    not followed, so credentials in `headers` go to `url`'s host only."""
    try:
        async with session.get(
            url, headers=headers, timeout=aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT), allow_redirects=False
        ) as resp:
            if resp.status != 200:
                raise FileRejected(f"Downloading `{name}` failed (HTTP {resp.status}). Please try again.",
                                   ja=f"`{name}` のダウンロードに失敗しました（HTTP {resp.status}）。もう一度お試しください。")
            if resp.content_type == "text/html" and not name.lower().endswith((".html", ".htm")):
                # A sign-in page instead of the file: the bot may not read it.
                raise FileRejected(f"I'm not allowed to download `{name}` (the app lacks the permission to read files).",
                                   ja=f"`{name}` をダウンロードできません（ファイルを読む権限がアプリにありません）。")
            content = bytearray()
            async for chunk in resp.content.iter_chunked(64 * 1024):
                content.extend(chunk)
                if len(content) > max_bytes:
                    raise FileRejected(f"`{name}` is larger than {human_size(max_bytes)}, the limit.",
                                       ja=f"`{name}` は上限の {human_size(max_bytes)} を超えています。")
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise FileRejected(f"Downloading `{name}` failed ({type(exc).__name__}). Please try again.",
                           ja=f"`{name}` のダウンロードに失敗しました（{type(exc).__name__}）。もう一度お試しください。") from exc
    file = IncomingFile(filename=name, content=bytes(content), mime_type=mime)
    try:
        file.text()
    except BadInput as exc:  # binary or not UTF-8
        raise FileRejected(f"{exc} Please share a Markdown or text file saved as UTF-8.",
                           ja=f"{exc.said('ja')} Markdown かテキストのファイルを UTF-8 で保存して送ってください。") from None
    return file
