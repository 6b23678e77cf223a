"""link: malformed, empty and duplicate links, http where https exists, local paths, undefined
references; optionally HEAD/GET checks over the network (off by default)."""

from __future__ import annotations

import asyncio
import ipaddress
import re
from collections import defaultdict
from urllib.parse import urlsplit

import httpx

from agents.proofread.checkers.base import BaseChecker, CheckResult
from agents.proofread.parser import DEFINITION
from agents.proofread.schemas import Issue, Link, ParsedArticle, SkippedCheck

KNOWN_SCHEMES = {"http", "https", "mailto", "ftp", "tel", "data"}
SCHEME_TYPO = re.compile(r"^(h?t?t?p?s?|htps?|hhtps?|htttps?|https?s|ttps?|http[s]?[;])$", re.I)
# Zenn embeds that take an id, not a URL.
# Hugo shortcodes ({{< ref "x.md" >}}, {{% … %}}), Go/Liquid templates ({{ .Site.BaseURL }},
# {% link … %}) inside a link target.
TEMPLATE = re.compile(r"\{\{|\{%")
# Link targets a writer leaves to fill in later: `[the chart](TODO)`.
PLACEHOLDER_TARGETS = frozenset({"TODO", "TBD", "FIXME", "XXX", "TK"})
ID_EMBEDS = {"youtube", "speakerdeck", "slideshare", "docswell", "jsfiddle"}
LOCAL_PATH = re.compile(r"^(file:|[A-Za-z]:[\\/]|\\\\|~/|/Users/|/home/|/tmp/|/var/|/private/|/mnt/)")
HOST_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
SUBDOMAIN_LABEL = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$")
LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "[::1]"}
USER_AGENT = "ConciergeProofreader/1.0 (+link check)"


def _normalise(url: str) -> str:
    return url.rstrip("/").lower()


def _is_local_host(host: str) -> bool:
    host = host.lower()
    if host in LOCAL_HOSTS or host.endswith((".local", ".localhost", ".test", ".internal", ".example")):
        return True
    if host in ("example.com", "example.org", "example.net") or host.endswith((".example.com", ".example.org")):
        return True
    try:
        return ipaddress.ip_address(host).is_private
    except ValueError:
        return False


def malformed_reason(url: str) -> str | None:
    """Why `url` cannot work as written, or None when it looks fine."""
    if re.match(r"^[A-Za-z][\w+.-]*//", url):
        return "the scheme is missing its colon (https// instead of https://)"
    scheme, sep, rest = url.partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z][\w+.-]*", scheme):
        return None  # a relative path or an anchor: checked elsewhere
    if scheme.lower() not in KNOWN_SCHEMES:
        if SCHEME_TYPO.match(scheme) and rest.startswith("//"):
            return f"unknown scheme “{scheme}:” (a typo of https?)"
        return None
    if scheme.lower() not in ("http", "https", "ftp"):
        return None
    if not rest.startswith("//"):
        return "the URL needs two slashes after the scheme"
    if any(ch.isspace() for ch in url):
        return "the URL contains a space"
    netloc = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    if re.search(r":[A-Za-z_<{][\w<>{}-]*$", netloc):
        return None  # `http://floatingIP:port`: a template's stand-ins, not a URL to open
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"the URL cannot be parsed ({exc})"
    host = parts.hostname or ""
    if not host:
        return "the URL has no host name"
    if any(not ch.isascii() for ch in host) and not host.startswith("xn--"):
        if re.search(r"[．。／：]", host):
            return "the host contains full-width punctuation"
    # `http://www.flyte.org./`: a full stop typed into the link. DNS takes the root's dot, but the
    # Host header then carries it and most sites answer that name with an error.
    written, host = host, host.rstrip(".") or host
    if host not in LOCAL_HOSTS and not _is_ip(host):
        labels = host.split(".")
        # One label with a port (`https://k3s-master:6443`) names a machine on the writer's network.
        # DNS and browsers take `_` below the top level (`web_games_app-blue-moon.reflex.run`), not in it.
        if (len(labels) < 2 and port is None) or any(
            not (HOST_LABEL if index == len(labels) - 1 else SUBDOMAIN_LABEL).match(label)
            for index, label in enumerate(labels) if label.isascii()
        ):
            return f"“{written}” is not a valid host name"
        if labels[-1].isdigit():
            return f"“{written}” is not a valid host name"
    if written != host:
        return f"the host name “{written}” ends with a dot"
    if port is not None and not 0 < port < 65536:
        return "the port number is out of range"
    return None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class LinkChecker(BaseChecker):
    category = "link"
    status_text = "Checking links…"
    status_text_ja = "リンクを確認しています…"

    async def check(self, article: ParsedArticle) -> CheckResult:
        issues = await self.run_rules(article)
        result = CheckResult(issues=issues)
        if not self.config.check_links_online:
            result.skipped.append(SkippedCheck(
                step=self.step, reason="Links were not opened over the network (online link checks are off)."
            ))
            return result
        online, skipped = await self._online(article)
        result.issues += online
        result.skipped += skipped
        return result

    def rules(self, article: ParsedArticle) -> list[Issue]:
        issues: list[Issue] = []
        definitions: dict[str, list[Link]] = defaultdict(list)
        for link in article.links:
            if link.kind == "definition":
                definitions[_label(link.text)].append(link)
        seen: dict[tuple[str, str], Link] = {}
        for link in article.links:
            issues += self._one(article, link, definitions)
            if link.kind in ("inline", "autolink") and link.url:
                key = (_normalise(link.url), link.text.strip())
                if key in seen:
                    first = seen[key]
                    issues.append(self.issue(
                        article, "suggestion", link.line,
                        f"The same link ({link.url}) already appears on line {first.line}.",
                        "Link a page once, or make the second link point somewhere more specific.",
                        "Repeated identical links add noise without helping the reader.",
                        "rule:duplicate-link",
                    ))
                else:
                    seen[key] = link
        used = _used_labels(article)
        for label, found in definitions.items():
            if all(definition.url == "#" for definition in found):
                continue  # `[//]: # (a note)`: Markdown's comment idiom, which renders nothing
            if label not in used:
                issues.append(self.issue(
                    article, "suggestion", found[0].line, f"The link reference [{label}] is defined but never used.",
                    f"Link to it with [text][{label}], or remove the definition.",
                    "Unused definitions are usually a link the author meant to add.",
                    "rule:unused-definition",
                ))
            for duplicate in found[1:]:
                issues.append(self.issue(
                    article, "warning", duplicate.line,
                    f"The link reference [{label}] is defined again (first on line {found[0].line}).",
                    "Remove one definition or give them different labels.",
                    "Only the first definition is used; the second one is silently ignored.",
                    "rule:duplicate-definition",
                ))
        return issues

    def _one(self, article: ParsedArticle, link: Link, definitions: dict[str, list[Link]]) -> list[Issue]:
        issue = self.issue
        if link.kind == "reference":
            # In an article that defines no reference, `[変更][インパクト低]` is a pair of bracketed
            # tags, shown as written: there only link text of several words or a numbered label
            # (`[part two][part 2]`, `[the guide][1]`) is surely a link.
            looks_linked = " " in link.text.strip() or link.url.strip().isdigit()
            if link.text.strip().isdigit() and link.url.strip().isdigit():
                return []  # `…for OS X and Linux.[37][38]`: citation marks copied with the text, not a link
            if _label(link.url) not in definitions and (definitions or looks_linked):
                glued = _glued_definition(article, _label(link.url))
                if glued is not None and _after_template_definitions(article, glued):
                    return []  # the site generator writes the shortcode's URL first: every line is a definition
                if glued is not None:  # `![Chart][1]⏎[1]: /images/chart.png`: written, but read as text
                    return [issue(
                        article, "warning", link.line,
                        f"The link reference [{link.url}] is never defined: its definition on line {glued} "
                        "follows a line of text with no blank line between, so it is read as part of that paragraph.",
                        f"Put a blank line before line {glued}.",
                        "A link definition cannot interrupt a paragraph (CommonMark and kramdown alike); the "
                        "reference then renders as plain text in brackets.",
                        "rule:undefined-reference",
                    )]
                return [issue(
                    article, "warning", link.line, f"The link reference [{link.url}] is never defined.",
                    f"Add a definition line: [{link.url}]: https://…",
                    "An undefined reference renders as plain text in brackets.",
                    "rule:undefined-reference",
                )]
            return []
        if link.kind == "embed" and (link.text in ID_EMBEDS or "://" not in link.url):
            if not link.url.strip():
                return [issue(article, "warning", link.line, f"The @[{link.text}] embed has no target.",
                              "Put the URL or id inside the parentheses.", "An empty embed renders nothing.",
                              "rule:empty-link")]
            return []
        placeholder = link.kind in ("inline", "image") and link.url.strip().upper() in PLACEHOLDER_TARGETS
        if not link.url.strip() or placeholder:
            what, name = "image" if link.kind == "image" else "link", link.text or "(no text)"
            said = (
                (f"The {what} “{name}” points to a placeholder ({link.url}).",
                 "Put the real URL in place of the placeholder, or remove the link markup.",
                 "A note the writer left for later went out with the article: the link leads nowhere.")
                if placeholder else
                (f"The {what} “{name}” has an empty target ().",
                 "Put the URL inside the parentheses, or remove the link markup.",
                 "An empty link goes nowhere (it reloads the page).")
            )
            return [issue(article, "warning", link.line, *said, "rule:empty-link")]
        if TEMPLATE.search(link.url):
            return []  # a Hugo shortcode or Liquid tag: the site generator writes the URL
        found: list[Issue] = []
        if link.kind == "inline" and not link.text.strip() and not link.holds_image:  # an image's: rule:image-alt
            found.append(issue(
                article, "warning", link.line, f"The link to {link.url} has no text.",
                f"Write the text inside the brackets: [page title]({link.url}).",
                "A link without text is invisible on the page.",
                "rule:empty-link-text",
            ))
        if link.kind in ("inline", "image") and link.extra and not _valid_extra(link.extra):
            found.append(issue(
                article, "warning", link.line, f"The link target “{link.url} {link.extra}” contains a space.",
                "Remove the space or encode it as %20.",
                "Text after a space in (…) must be a quoted title; otherwise the link does not render.",
                "rule:malformed-url",
            ))
            return found
        reason = malformed_reason(link.url)
        if reason:
            found.append(issue(
                article, "warning", link.line, f"Malformed URL {link.url}: {reason}.",
                "Correct the URL and open it once to make sure it works.",
                "A malformed URL leads nowhere.",
                "rule:malformed-url",
            ))
            return found
        url = link.url
        if LOCAL_PATH.match(url) or _relative_path(article, link):
            found.append(issue(
                article, "warning", link.line, f"The {'image' if link.kind == 'image' else 'link'} points to a "
                f"local path ({url}).",
                "Upload the file (or use a public URL); on Zenn with GitHub integration, images go under /images/.",
                "Paths on your machine do not exist for readers of the published article.",
                "rule:local-path",
            ))
            return found
        if url.lower().startswith("http://"):
            host = urlsplit(url).hostname or ""
            if not _is_local_host(host):
                image = link.kind == "image"
                found.append(issue(
                    article, "warning" if image else "suggestion", link.line, f"Insecure http:// URL: {url}.",
                    "Use https:// if the site supports it.",
                    "Browsers block or warn about http images on https pages (mixed content)." if image
                    else "https protects readers from tampering, and most sites redirect to it anyway.",
                    "rule:http-image" if image else "rule:http-url",
                ))
        return found

    async def _online(self, article: ParsedArticle) -> tuple[list[Issue], list[SkippedCheck]]:
        first_line: dict[str, int] = {}
        for link in article.links:
            url = link.url
            if not url.lower().startswith(("http://", "https://")) or malformed_reason(url):
                continue
            if _is_local_host(urlsplit(url).hostname or ""):
                continue
            first_line.setdefault(url, link.line)
        urls = list(first_line)[: self.config.max_links_checked]
        if not urls:
            return [], []
        semaphore = asyncio.Semaphore(self.config.link_concurrency)
        async with httpx.AsyncClient(
            timeout=self.config.link_timeout,
            follow_redirects=True,
            headers={"User-Agent": USER_AGENT},
            transport=self.context.http_transport,
        ) as client:

            async def probe(url: str) -> tuple[str, int | None, str]:
                async with semaphore:
                    return url, *await self._probe(client, url)

            results = await asyncio.gather(*(probe(url) for url in urls))
        if all(status is None for _url, status, _error in results):
            return [], [SkippedCheck(step=self.step, reason="No link could be reached: the network seems unavailable.")]
        issues = []
        for url, status, error in results:
            line = first_line[url]
            if status in (404, 410):
                issues.append(self.issue(
                    article, "warning", line, f"Broken link: {url} answers HTTP {status}.",
                    "Update the URL (the page may have moved) or remove the link.",
                    "Readers who follow the link land on an error page.", "rule:link-status",
                ))
            elif status is not None and status >= 500:
                issues.append(self.issue(
                    article, "suggestion", line, f"{url} answered HTTP {status} (server error).",
                    "Open it yourself; if it stays down, link an archived copy.",
                    "The server failed while we checked; it may be temporary.", "rule:link-status",
                ))
            elif status is None and "resolve" in error:
                issues.append(self.issue(
                    article, "warning", line, f"The domain of {url} does not resolve.",
                    "Check the spelling of the domain.", "No server answers for this name.", "rule:link-status",
                ))
            elif status is None:
                issues.append(self.issue(
                    article, "suggestion", line, f"{url} could not be reached ({error}).",
                    "Open it yourself; it may be temporary.", "The request failed after retrying.",
                    "rule:link-status",
                ))
        return issues, []

    async def _probe(self, client: httpx.AsyncClient, url: str) -> tuple[int | None, str]:
        """(status, error): HEAD first, GET when HEAD is refused; retries on timeouts, connection
        errors and 5xx with exponential backoff."""
        error = ""
        last_status: int | None = None
        for attempt in range(self.config.link_retries + 1):
            if attempt:
                await asyncio.sleep(min(2.0, 0.25 * 2 ** (attempt - 1)))
            try:
                response = await client.head(url)
                if response.status_code in (403, 405, 501):
                    async with client.stream("GET", url) as streamed:
                        response = streamed
                if response.status_code < 500:
                    return response.status_code, ""
                error, last_status = f"HTTP {response.status_code}", response.status_code
            except httpx.ConnectError as exc:
                text = str(exc)
                if re.search(r"Name or service not known|nodename nor servname|getaddrinfo|No address", text):
                    return None, "does not resolve"
                error, last_status = "connection failed", None
            except httpx.TimeoutException:
                error, last_status = f"no answer within {self.config.link_timeout:g}s", None
            except httpx.HTTPError as exc:
                error, last_status = type(exc).__name__, None
        return last_status, error


# `[text][label]`, `[label][]` and `[label]`; a label may wrap onto the next line.
_REFERENCE_USE = re.compile(r"\[([^\]\[]+)\](?:\[([^\]\[]*)\]|(?![(:]))")


def _used_labels(article: ParsedArticle) -> set[str]:
    used = {_label(link.url) for link in article.links if link.kind == "reference"}
    prose = "\n".join(
        line if article.kind(number) in ("text", "list", "quote", "table", "heading")
        and not re.match(r"^\s*\[[^\]]+\]:", line) else ""
        for number, line in enumerate(article.lines, start=1)
    )
    for match in _REFERENCE_USE.finditer(prose):
        used.add(_label(match.group(2) or match.group(1)))
    return used


def _label(text: str) -> str:
    return " ".join(text.lower().split())


def _valid_extra(extra: str) -> bool:
    """A title, Zenn's image size (`=250x`) or Hashnode's image alignment (`align="center"`)."""
    return bool(re.fullmatch(r"(\"[^\"]*\"|'[^']*'|\([^)]*\))?\s*(=\d*x\d*|align=\"(?:left|center|right)\")?\s*", extra))


def _relative_path(article: ParsedArticle, link: Link) -> bool:
    url = link.url
    if link.kind not in ("inline", "image", "definition", "html") or url.startswith("#"):
        return False
    if re.match(r"^[A-Za-z][\w+.-]*:", url) or url.startswith("//"):
        return False  # has a scheme
    if article.article_type == "markdown" or not article.platform_certain:
        return False  # a README, docs page or site: relative links resolve in its repository or site
    if url.startswith("/"):
        # A site path (/images/…): Zenn serves it from the GitHub-linked repository, a site from
        # its static files; nothing here can tell whether it exists.
        return False
    # `./other-article` is another article of the same site (Zenn and Qiita resolve it against the
    # article's own address); a file (`./images/a.png`, `../b.md`) only exists in the writer's folder.
    return bool(re.search(r"\.(png|jpe?g|gif|svg|webp|md|pdf)$", url.split("#")[0].split("?")[0], re.I))


def _after_template_definitions(article: ParsedArticle, number: int) -> bool:
    """Whether the definition on line `number` sits in a run of definitions that a template target
    opened (`[ci]: {{< relref "ci.md" >}}` and the definitions under it): Markdown reads the run as
    a paragraph because of the shortcode's spaces, but Hugo writes the URL in before Markdown runs."""
    start = number
    while start > 1 and article.kind(start - 1) == "text":
        start -= 1
    run = [article.line(n) for n in range(start, number + 1)]
    return all(DEFINITION.match(line) for line in run) and any(TEMPLATE.search(line) for line in run)


def _glued_definition(article: ParsedArticle, label: str) -> int | None:
    """The line of a `[label]: url` line that sits in a paragraph (right under a line of text), where
    Markdown reads it as text instead of a definition; None when there is none."""
    for number, line in enumerate(article.lines, start=1):
        match = DEFINITION.match(line)
        if match and article.kind(number) == "text" and _label(match.group(1)) == label:
            return number
    return None
