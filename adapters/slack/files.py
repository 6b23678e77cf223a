"""Files users share with the bot: metadata checks before download, a bounded authenticated fetch."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.agent import IncomingFile

TEXT_SUFFIXES = (".md", ".markdown", ".mdown", ".txt")
TEXT_FILETYPES = ("markdown", "text", "md")
TEXT_MIME_PREFIXES = ("text/markdown", "text/x-markdown", "text/plain")
DOWNLOAD_TIMEOUT = 20.0


class FileRejected(Exception):
    """A shared file the bot will not read; the message is shown to the user."""


def human_size(size: int) -> str:
    if size < 1000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1000:.0f} KB"
    return f"{size / 1_000_000:.1f} MB"


def check_file(meta: dict[str, Any], max_bytes: int) -> None:
    """Refuse a file by its metadata (type, size) before anything is downloaded."""
    name = str(meta.get("name") or meta.get("title") or "file")
    if meta.get("mode") in ("tombstone", "hidden_by_limit") or meta.get("is_external"):
        raise FileRejected(f"I can't open `{name}`: it isn't stored in Slack or is no longer available.")
    suffix = PurePosixPath(name.lower()).suffix
    filetype = str(meta.get("filetype") or "").lower()
    mimetype = str(meta.get("mimetype") or "").lower()
    is_text = suffix in TEXT_SUFFIXES or (
        not suffix and (filetype in TEXT_FILETYPES or mimetype.startswith(TEXT_MIME_PREFIXES))
    )
    if not is_text:
        kind = meta.get("pretty_type") or filetype.upper() or mimetype or "unknown type"
        raise FileRejected(
            f"`{name}` is not a Markdown or text file ({kind}). "
            "I can read Markdown (`.md`) or plain-text (`.txt`) files."
        )
    size = meta.get("size")
    if isinstance(size, int) and size > max_bytes:
        raise FileRejected(f"`{name}` is {human_size(size)}; the limit is {human_size(max_bytes)}.")


def trusted_download_url(url: str, api_base_url: str) -> bool:
    """The bot token is only ever sent to Slack's file hosts (or the configured API host)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and (host == "slack.com" or host.endswith(".slack.com")):
        return True
    base = urlsplit(api_base_url)
    return (parts.scheme, parts.hostname, parts.port) == (base.scheme, base.hostname, base.port)


async def file_metadata(client: AsyncWebClient, meta: dict[str, Any]) -> dict[str, Any]:
    """Event file objects may be partial (`file_access: check_file_info`): complete them."""
    if meta.get("url_private_download") or meta.get("url_private"):
        if meta.get("file_access") != "check_file_info" and "size" in meta:
            return meta
    try:
        response = await client.files_info(file=str(meta["id"]))
    except (SlackApiError, KeyError) as exc:
        raise FileRejected(f"I couldn't read `{meta.get('name') or 'the file'}` (no access to it).") from exc
    return dict(response["file"])


async def download(
    session: aiohttp.ClientSession,
    meta: dict[str, Any],
    *,
    token: str,
    api_base_url: str,
    max_bytes: int,
) -> IncomingFile:
    """Fetch a checked file with the bot token, stopping at `max_bytes`; refuse binary content."""
    name = str(meta.get("name") or "file")
    url = str(meta.get("url_private_download") or meta.get("url_private") or "")
    if not url or not trusted_download_url(url, api_base_url):
        raise FileRejected(f"I can't download `{name}` from where it is stored.")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with session.get(
            url, headers=headers, timeout=aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT), allow_redirects=False
        ) as resp:
            if resp.status != 200:
                raise FileRejected(f"Downloading `{name}` failed (HTTP {resp.status}). Please try again.")
            if resp.content_type == "text/html" and not name.lower().endswith((".html", ".htm")):
                # Slack serves its sign-in page when the token may not read the file.
                raise FileRejected(f"I'm not allowed to download `{name}` (the app needs the files:read scope).")
            content = bytearray()
            async for chunk in resp.content.iter_chunked(64 * 1024):
                content.extend(chunk)
                if len(content) > max_bytes:
                    raise FileRejected(f"`{name}` is larger than {human_size(max_bytes)}, the limit.")
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise FileRejected(f"Downloading `{name}` failed ({type(exc).__name__}). Please try again.") from exc
    data = bytes(content)
    if b"\x00" in data[:8192]:
        raise FileRejected(f"`{name}` looks like a binary file; please share a Markdown or text file.")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileRejected(f"`{name}` is not UTF-8 text; please save it as UTF-8 and share it again.") from None
    mime = str(meta.get("mimetype") or "text/markdown")
    return IncomingFile(filename=name, content=data, mime_type=mime)
