"""Files shared on Slack: Slack's metadata (completed with files.info when partial), the core's
text-file policy, and a download that sends the bot token to Slack's own hosts only."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.agent import IncomingFile
from bot.attachments import FileRejected, check_text_file, download_text_file


def check_file(meta: dict[str, Any], max_bytes: int) -> None:
    """Refuse a file by its metadata (gone, external, type, size) before anything is downloaded."""
    name = str(meta.get("name") or meta.get("title") or "file")
    if meta.get("mode") in ("tombstone", "hidden_by_limit") or meta.get("is_external"):
        raise FileRejected(f"I can't open `{name}`: it isn't stored in Slack or is no longer available.",
                           ja=f"`{name}` を開けません。Slack に保存されていないか、もう利用できません。")
    size = meta.get("size")
    check_text_file(name, size if isinstance(size, int) else None, max_bytes=max_bytes,
                    mime=str(meta.get("mimetype") or ""), kind=str(meta.get("filetype") or ""),
                    label=str(meta.get("pretty_type") or ""))


def trusted_download_url(url: str, api_base_url: str) -> bool:
    """The bot token is only ever sent to Slack's file hosts (or the configured API host)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and (host == "slack.com" or host.endswith(".slack.com")):
        return True
    base = urlsplit(api_base_url)
    return (parts.scheme, parts.hostname, parts.port) == (base.scheme, base.hostname, base.port)


async def fetch_file(client: AsyncWebClient, session: aiohttp.ClientSession, meta: dict[str, Any], max_bytes: int) -> IncomingFile:
    """Check, complete (event file objects may be partial: `file_access: check_file_info`), check
    again, then download with the bot token."""
    check_file(meta, max_bytes)
    if meta.get("file_access") == "check_file_info" or "size" not in meta or not (
        meta.get("url_private_download") or meta.get("url_private")
    ):
        try:
            meta = dict((await client.files_info(file=str(meta["id"])))["file"])
        except (SlackApiError, KeyError) as exc:
            name = str(meta.get("name") or "the file")
            raise FileRejected(f"I couldn't read `{name}` (no access to it).",
                               ja=f"`{name}` を読めませんでした（アクセスできません）。") from exc
        check_file(meta, max_bytes)
    name = str(meta.get("name") or "file")
    url = str(meta.get("url_private_download") or meta.get("url_private") or "")
    if not url or not trusted_download_url(url, client.base_url):
        raise FileRejected(f"I can't download `{name}` from where it is stored.",
                           ja=f"`{name}` を保存先からダウンロードできません。")
    return await download_text_file(session, url, name, max_bytes=max_bytes, mime=str(meta.get("mimetype") or "text/markdown"),
                                    headers={"Authorization": f"Bearer {client.token}"})
