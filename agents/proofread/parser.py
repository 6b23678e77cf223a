"""Parse a Markdown article (Zenn, Qiita or plain) into a ParsedArticle with exact line numbers."""

from __future__ import annotations

import re

import yaml

from agents.proofread.schemas import (
    ArticleType,
    CodeBlock,
    Container,
    FrontMatter,
    Heading,
    Language,
    LineKind,
    Link,
    LinkKind,
    ParsedArticle,
)
from agents.proofread.text import count_kana, mask_code_spans

ZENN_KEYS = frozenset({"emoji", "topics", "type", "published_at", "publication_name"})
QIITA_KEYS = frozenset({"tags", "private", "updated_at", "organization_url_name", "slide", "ignorePublish"})

# Possessive quantifiers (`*+`) where giving characters back can never help, and heading text
# that only ends after a non-blank character (the shortest text the lazy `.*?` would find ends
# there too): a line of thousands of spaces is otherwise retried from every space (quadratic).
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})\s*+([^`]*)$")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+((?:[ \t]*+[^ \t\n])*?))?(?:[ \t]++#++)?[ \t]*+$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s+|$)")
CONTAINER_OPEN = re.compile(r"^\s*(:{3,})\s*([A-Za-z][\w-]*)(.*)$")
CONTAINER_CLOSE = re.compile(r"^\s*(:{3,})\s*$")
DEFINITION = re.compile(r"^ {0,3}\[([^\]^][^\]]*)\]:\s*<?(\S*?)>?(?:\s+.*)?$")
AUTOLINK = re.compile(r"<((?:https?|ftp)://[^\s<>]+|mailto:[^\s<>]+)>")
HTML_URL = re.compile(r"<(?:a|img|iframe|source|video)\b[^>]*?\s(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
HTML_TAG_START = re.compile(r"<(?:a|img|iframe|source|video)\b", re.I)
BARE_URL = re.compile(r"(?<!\[)(?:https?|ftp)://[^\s<>\"'`\[\]]+")
ZENN_EMBED_NAMES = frozenset({
    "card", "tweet", "youtube", "gist", "codepen", "codesandbox", "stackblitz", "speakerdeck",
    "slideshare", "docswell", "figma", "blueprintue", "jsfiddle", "github",
})
TRAILING_PUNCTUATION = ".,:;!?*_~'\""
# Links inside link text ([![badge](img)](url)) are read this many levels deep. CommonMark allows
# no link inside a link at all; without a limit, brackets nested thousands deep would make the
# work (and the texts kept) grow with the square of the line.
MAX_LINK_NESTING = 32
_SCAN_STOP = re.compile(r"[\\\[]")
_BRACKET_CHARS = re.compile(r"[\\\[\]()]")


def parse_article(text: str) -> ParsedArticle:
    """Split `text` into front matter, body, code blocks, links and headings."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = raw.split("\n")
    kinds: list[LineKind] = ["blank"] * len(lines)

    front_matter, fm_count = _front_matter(lines)
    for index in range(fm_count):
        kinds[index] = "front_matter"
    body_start = fm_count + 1

    code_blocks: list[CodeBlock] = []
    headings: list[Heading] = []
    containers: list[Container] = []
    open_containers: list[tuple[int, Container]] = []
    fence: tuple[str, int, str, int] | None = None  # (marker, start line, info, indent)
    fence_lines: list[str] = []
    in_math = False
    in_comment = False

    for index in range(fm_count, len(lines)):
        number = index + 1
        line = lines[index]
        stripped = line.strip()
        if fence is not None:
            marker, start, info, _indent = fence
            close = re.match(r"^\s*(`{3,}|~{3,})\s*$", line)
            if close and close.group(1)[0] == marker[0] and len(close.group(1)) >= len(marker):
                kinds[index] = "fence"
                code_blocks.append(_code_block(marker, info, start, number, fence_lines))
                fence = None
            else:
                kinds[index] = "code"
                fence_lines.append(line)
            continue
        if in_comment:
            kinds[index] = "html_comment"
            in_comment = "-->" not in line
            continue
        if in_math:
            kinds[index] = "math"
            in_math = not stripped.endswith("$$")
            continue
        opening = FENCE_OPEN.match(line)
        if opening and not (opening.group(2)[0] == "`" and "`" in opening.group(3)):
            fence = (opening.group(2), number, opening.group(3).strip(), len(opening.group(1)))
            fence_lines = []
            kinds[index] = "fence"
            continue
        if stripped.startswith("$$"):
            kinds[index] = "math"
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            continue
        if stripped.startswith("<!--"):
            kinds[index] = "html_comment"
            in_comment = "-->" not in stripped[4:]
            continue
        if opened := CONTAINER_OPEN.match(line):
            container = Container(kind=opened.group(2), start_line=number, end_line=None)
            containers.append(container)
            open_containers.append((len(opened.group(1)), container))
            kinds[index] = "container"
            continue
        if closed := CONTAINER_CLOSE.match(line):
            if open_containers:
                colons = len(closed.group(1))
                # Zenn nests containers by using more colons on the outer one.
                position = next(
                    (i for i in range(len(open_containers) - 1, -1, -1) if open_containers[i][0] <= colons),
                    len(open_containers) - 1,
                )
                _colons, container = open_containers.pop(position)
                container.end_line = number
            kinds[index] = "container"
            continue
        if not stripped:
            kinds[index] = "blank"
            continue
        if (heading := ATX_HEADING.match(line)) and not line.startswith("    "):
            headings.append(Heading(level=len(heading.group(1)), text=(heading.group(2) or "").strip(), line=number))
            kinds[index] = "heading"
            continue
        if SETEXT_UNDERLINE.match(line) and index > fm_count and kinds[index - 1] == "text":
            kinds[index - 1] = "heading"
            kinds[index] = "heading"
            level = 1 if stripped.startswith("=") else 2
            headings.append(Heading(level=level, text=lines[index - 1].strip(), line=number - 1, style="setext"))
            continue
        if stripped.startswith("|"):
            kinds[index] = "table"
        elif LIST_ITEM.match(line) and not re.match(r"^\s*([-*_])(\s*\1){2,}\s*$", line):
            kinds[index] = "list"
        elif stripped.startswith(">"):
            kinds[index] = "quote"
        elif re.match(r"^ {0,3}([-*_])(\s*\1){2,}\s*$", line):
            kinds[index] = "blank"  # thematic break
        else:
            kinds[index] = "text"

    if fence is not None:
        marker, start, info, _indent = fence
        code_blocks.append(_code_block(marker, info, start, None, fence_lines))

    body_lines = lines[fm_count:]
    parsed_links = _links(lines, kinds)
    article_type = _article_type(front_matter, raw)
    return ParsedArticle(
        raw=raw,
        front_matter=front_matter,
        front_matter_line_count=fm_count,
        body="\n".join(body_lines),
        body_start_line=body_start,
        article_type=article_type,
        language=_language(lines, kinds),
        code_blocks=code_blocks,
        links=parsed_links,
        headings=sorted(headings, key=lambda h: h.line),
        containers=containers,
        line_kinds=kinds,
    )


def _front_matter(lines: list[str]) -> tuple[FrontMatter | None, int]:
    if not lines or lines[0].strip() != "---":
        return None, 0
    end = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return None, 0
    source = "\n".join(lines[1:end])
    key_lines: dict[str, int] = {}
    for offset, line in enumerate(lines[1:end], start=2):
        if key := re.match(r"^([A-Za-z_][\w-]*)\s*:", line):
            key_lines.setdefault(key.group(1), offset)
    front = FrontMatter(start_line=1, end_line=end + 1, key_lines=key_lines)
    try:
        data = yaml.safe_load(source) if source.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        front.error = str(getattr(exc, "problem", None) or exc)
        front.error_line = (mark.line + 2) if mark is not None else None
        return front, end + 1
    except RecursionError:  # PyYAML composes nested collections recursively: [[[[…
        front.error = "the front matter is nested too deeply"
        front.error_line = 2
        return front, end + 1
    if _expands_beyond(data, 2 * len(source) + 100):
        # Aliases can make a few hundred bytes stand for billions of values, which the checkers
        # would then format (repr) into their messages. Without aliases, YAML never holds more
        # values and characters than its source has characters.
        front.error = "its aliases (*name) expand to far more data than is written"
        front.error_line = 2
        return front, end + 1
    if isinstance(data, dict):
        front.data = data
    else:
        front.error = "front matter is not a mapping of keys to values"
        front.error_line = 2
    return front, end + 1


def _expands_beyond(data: object, limit: int) -> bool:
    """True when `data`, counting every value once per place it appears (and the characters of
    strings), has more than `limit` of them. Stops as soon as it knows."""
    pending = [data]
    size = 0
    while pending:
        item = pending.pop()
        size += 1 + (len(item) if isinstance(item, str | bytes) else 0)
        if size > limit:
            return True
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple | set):
            pending.extend(item)
    return False


def _code_block(marker: str, info: str, start: int, end: int | None, content: list[str]) -> CodeBlock:
    # Zenn and Qiita: ```lang:filename; Zenn also ```diff lang; Qiita ```diff_lang.
    head = info.split()[0] if info.split() else ""
    language, _, filename = head.partition(":")
    rest = info[len(head):].strip()
    diff = language == "diff" or language.startswith("diff_")
    if language == "diff" and rest:
        language, _, filename = rest.split()[0].partition(":")
    if language.startswith("diff_"):
        language = language[5:]
    return CodeBlock(
        language=language.lower() or None,
        filename=filename or None,
        info=info,
        content="\n".join(content),
        start_line=start,
        end_line=end,
        fence=marker,
        diff=diff,
    )


def _article_type(front_matter: FrontMatter | None, raw: str) -> ArticleType:
    keys = set(front_matter.data) if front_matter else set()
    if keys & ZENN_KEYS:
        return "zenn"
    if keys & QIITA_KEYS:
        return "qiita"
    if re.search(r"^:::\s*note\b", raw, re.M):
        return "qiita"
    if re.search(r"^:::\s*(message|details)\b|^@\[(card|tweet|youtube)\]", raw, re.M):
        return "zenn"
    return "markdown"


def _language(lines: list[str], kinds: list[LineKind]) -> Language:
    prose = "".join(line for line, kind in zip(lines, kinds, strict=True) if kind in ("text", "list", "heading"))
    kana = count_kana(prose)
    letters = sum(1 for c in prose if c.isascii() and c.isalpha())
    return "ja" if kana >= 10 and kana * 4 >= letters * 0.2 else "en"


# --- links ---------------------------------------------------------------------------------------


def _links(lines: list[str], kinds: list[LineKind]) -> list[Link]:
    found: list[Link] = []
    for index, line in enumerate(lines):
        if kinds[index] in ("front_matter", "fence", "code", "math", "html_comment", "blank"):
            continue  # (blank: only whitespace, or a thematic break)
        number = index + 1
        if definition := DEFINITION.match(line):
            found.append(Link(url=definition.group(2), text=definition.group(1), line=number, kind="definition"))
            continue
        masked = mask_code_spans(line)
        pairs = _bracket_pairs(masked)
        _collect_links(masked, pairs, 0, len(masked), number, 0, line, found, 0)
        for match in html_url_matches(masked):
            found.append(Link(url=match.group(1), text="", line=number, kind="html", column=match.start()))
        masked = _mask_spans(masked, _spans(masked, pairs, 0, len(masked)))
        for match in AUTOLINK.finditer(masked):
            found.append(Link(url=match.group(1), text=match.group(1), line=number, kind="autolink", column=match.start()))
        masked = AUTOLINK.sub(lambda m: " " * len(m.group(0)), masked)
        masked = _mask_spans(masked, [match.span() for match in html_url_matches(masked)])
        stripped = line.strip()
        unbracketed = stripped.strip("<>")
        for match in BARE_URL.finditer(masked):
            url, swallowed = _trim_bare_url(match.group(0))
            alone = unbracketed == match.group(0).strip() or stripped == url
            found.append(
                Link(url=url, text=url, line=number, kind="bare", column=match.start(),
                     swallowed=swallowed, alone_on_line=alone)
            )
    return found


def html_url_matches(line: str) -> list[re.Match[str]]:
    """HTML_URL.finditer(line), without retrying every `<a` of a tag that has no href/src: when
    the tag starting at one `<` has none before its `>`, neither has any `<` inside that tag."""
    matches = []
    position = 0
    while (tag := HTML_TAG_START.search(line, position)) is not None:
        if match := HTML_URL.match(line, tag.start()):
            matches.append(match)
            position = match.end()
            continue
        position = line.find(">", tag.end())
        if position == -1:
            break
    return matches


def _trim_bare_url(url: str) -> tuple[str, str]:
    """Split what a reader means as the URL from what a renderer would swallow after it."""
    swallowed = ""
    for position, char in enumerate(url):
        if not char.isascii():
            url, swallowed = url[:position], url[position:]
            break
    url = url.rstrip(TRAILING_PUNCTUATION)
    opened, closed = url.count("("), url.count(")")
    end = len(url)
    while end and url[end - 1] == ")" and opened < closed:
        end -= 1
        closed -= 1
    return url[:end], swallowed


def _mask_spans(line: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return line
    chars = list(line)
    for start, end in spans:
        for i in range(max(0, start), min(len(chars), end)):
            chars[i] = " "
    return "".join(chars)


Pairs = tuple[dict[int, int], dict[int, int]]


def _bracket_pairs(line: str) -> Pairs:
    """({`[` position: its `]`}, {`(` position: its `)`}) for the whole line, in one pass with a
    stack. A bracket's match is the first closer after it where the count of openers minus closers
    (from it on) returns to zero, skipping the character after each backslash; a left-to-right
    scan reaches the same backslashes from any bracket it visits, so one pass serves every bracket
    (scanning to the end of the line for each `[` was quadratic: 8 KB of `[` took 6 s)."""
    squares: dict[int, int] = {}
    parens: dict[int, int] = {}
    open_squares: list[int] = []
    open_parens: list[int] = []
    hidden = -1  # the character after a backslash
    for match in _BRACKET_CHARS.finditer(line):
        index = match.start()
        if index == hidden:
            continue
        char = line[index]
        if char == "\\":
            hidden = index + 1
        elif char == "[":
            open_squares.append(index)
        elif char == "]":
            if open_squares:
                squares[open_squares.pop()] = index
        elif char == "(":
            open_parens.append(index)
        elif open_parens:
            parens[open_parens.pop()] = index
    return squares, parens


def scan_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of every `[..](..)`, `![..](..)`, `@[..](..)` and `[..][..]` construct."""
    return _spans(line, _bracket_pairs(line), 0, len(line))


def _spans(line: str, pairs: Pairs, low: int, high: int) -> list[tuple[int, int]]:
    """scan_spans(line[low:high]), in positions of `line`, from the brackets of the whole line.
    A `[` inside line[low:high] has its `]` inside too (high is a `]` whose `[` is before low,
    or the end); a `(` or `]` beyond high is not there."""
    squares, parens = pairs
    spans = []
    index = low
    while (stop := _SCAN_STOP.search(line, index, high)) is not None:
        index = stop.start()
        if line[index] == "\\":
            index += 2
            continue
        close = squares.get(index, -1)
        if close == -1 or close >= high:
            index += 1
            continue
        start = index - 1 if index > low and line[index - 1] in "!@" else index
        after = close + 1
        if after < high and line[after] == "(":
            end = parens.get(after, -1)
            if end != -1 and end < high:
                spans.append((start, end + 1))
                index = end + 1
                continue
        if after < high and line[after] == "[":
            end = line.find("]", after, high)
            if end != -1:
                spans.append((start, end + 1))
                index = end + 1
                continue
        index = close + 1
    return spans


def scan_inline_links(line: str, number: int, offset: int = 0, original: str | None = None) -> list[Link]:
    """Inline links, images, Zenn embeds and reference uses on one line. `line` has its code
    spans masked (so brackets inside code are ignored); text is read from `original`."""
    found: list[Link] = []
    _collect_links(line, _bracket_pairs(line), 0, len(line), number, offset, line if original is None else original,
                   found, 0)
    return found


def _collect_links(
    line: str, pairs: Pairs, low: int, high: int, number: int, offset: int, original: str,
    found: list[Link], depth: int,
) -> None:
    """scan_inline_links on line[low:high] (positions of the whole line; columns are `offset` + position)."""
    squares = pairs[0]
    for start, end in _spans(line, pairs, low, high):
        prefix = line[start] if line[start] in "!@" else ""
        open_bracket = start + len(prefix)
        close = squares[open_bracket]
        text = original[open_bracket + 1 : close]
        if text.startswith("^"):
            continue  # footnote reference
        if close + 1 < high and line[close + 1] == "[":
            ref = line[close + 2 : end - 1] or text
            found.append(Link(url=ref, text=text, line=number, kind="reference", column=offset + start))
            continue
        destination = line[close + 2 : end - 1].strip()
        url, extra = _destination_url(destination)
        kind: LinkKind
        if prefix == "@":
            kind = "embed"
        elif prefix == "!":
            kind = "image"
        else:
            kind = "inline"
            # A badge or image inside the link text: [![alt](img)](url)
            if depth < MAX_LINK_NESTING:
                _collect_links(line, pairs, open_bracket + 1, close, number, offset, original, found, depth + 1)
        found.append(Link(url=url, text=text, line=number, kind=kind, column=offset + start, extra=extra))


def _destination_url(destination: str) -> tuple[str, str]:
    """(url, what follows it): a title `"…"`, Zenn's image size `=250x`, or stray text."""
    if destination.startswith("<"):
        end = destination.find(">")
        if end == -1:
            return destination[1:], ""
        return destination[1:end], destination[end + 1 :].strip()
    parts = destination.split(None, 1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) > 1 else ""
