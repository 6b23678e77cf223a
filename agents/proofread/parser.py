"""Parse a Markdown article (Zenn, Qiita, Hugo/Jekyll/Zola or plain) into a ParsedArticle with exact
line numbers, from markdown-it-py's token stream. Text in, plain data out: it runs in work-pool
processes."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import yaml
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin

from agents.proofread.schemas import (
    ArticleType,
    CodeBlock,
    Container,
    FrontMatter,
    Heading,
    Language,
    LineKind,
    Link,
    ParsedArticle,
    Platform,
    Suppression,
)
from agents.proofread.text import LIST_MARKER, count_kana, is_last_path_segment, replace_spans, trim_bare_url

PLATFORMS: tuple[Platform, ...] = ("zenn", "qiita", "hugo", "jekyll", "zola", "plain")
# `/proofread platform:zenn` — the first line of the text names the platform.
PLATFORM_DIRECTIVE = re.compile(r"^\s*platform\s*[:=]\s*(zenn|qiita|hugo|jekyll|zola|plain)\s*$", re.I)
ZENN_KEYS = frozenset({"emoji", "type", "topics", "published", "published_at", "publication_name"})
QIITA_KEYS = frozenset({"private", "updated_at", "id", "organization_url_name", "slide", "ignorePublish"})
HUGO_KEYS = frozenset({"draft", "aliases", "weight", "slug", "lastmod", "expiryDate", "publishDate", "summary"})
JEKYLL_KEYS = frozenset({"layout", "permalink", "categories", "category", "excerpt_separator"})
SITE_KEYS = HUGO_KEYS | JEKYLL_KEYS | {"date", "description", "author", "authors", "series"}

DEFINITION = re.compile(r"^ {0,3}\[([^\]^][^\]]*)\]:\s*<?(\S*?)>?(?:\s+.*)?$")
HTML_URL = re.compile(r"<(?:a|img|iframe|source|video)\b[^>]*?\s(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
HTML_TAG_START = re.compile(r"<(?:a|img|iframe|source|video)\b", re.I)
# Not a template's stand-in for a host (`https://{サーバーのIPアドレス}:8088`, `http://$HOST/`).
BARE_URL = re.compile(r"(?<!\[)(?:https?|ftp)://(?![{$%])[^\s<>\"'`\[\]]+")
_LIST_ITEM_MARKER = re.compile(rf"^{LIST_MARKER}\s+")
NAMED_HOST = re.compile(r"(?:https?|ftp)://[^\W_]")  # a host follows the scheme
# `[text](target)` the parser left as text: a target with a space, or a template inside.
UNPARSED_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\(([^()\n]*)\)")
# `[text][label]` left as text by the parser: its label has no definition.
# `[text][label]` not glued to a Latin word on either side: `board[v][h]` indexes an array and
# `[pubsub][rabbitmq]add` tags a changelog line; neither is a reference link (Japanese text glues
# links to kana: `は[PEP 8][pep8]、` still is one).
UNDEFINED_REFERENCE = re.compile(r"(?<![A-Za-z0-9_\]])\[([^\[\]\n]*)\]\[([^\[\]\n]*)\](?![A-Za-z0-9_\[(])")
# Hugo shortcodes {{< … >}} / {{% … %}}: template calls, not text or links. `[^{}]` stops each
# opener at the next brace, so every character is read by at most one opener.
SHORTCODE = re.compile(r"\{\{[<%][^{}]*[>%]\}\}")
# Jekyll's Liquid code blocks, `{% highlight python linenos %}` … `{% endhighlight %}`, and Hugo's
# highlight shortcode, `{{< highlight tf "noClasses=false" >}}` … `{{< / highlight >}}`.
LIQUID_HIGHLIGHT = re.compile(
    r"^\s{0,3}(?:\{%-?\s*highlight\s+([\w+#.-]+)[^%]*-?%\}|\{\{[<%]\s*highlight\s+\"?([\w+#.-]+)\"?[^>%]*[>%]\}\})\s*$"
)
LIQUID_END = re.compile(r"^\s{0,3}(?:\{%-?\s*endhighlight\s*-?%\}|\{\{[<%]\s*/\s*highlight\s*[>%]\}\})\s*$")
# Hatena Blog's own markup for code, `>|lisp|` or `>||` … `||<` (super pre) and `>|` … `|<` (pre):
# in a post written in that markup they are code blocks, not quotes.
HATENA_PRE = re.compile(r"^>\|([\w+#.-]*)\|?\s*$")
HATENA_PRE_END = re.compile(r"^\|\|?<\s*$")
QUOTE_MARKERS = re.compile(r"^[ >]*>")
FENCE_CLOSE = re.compile(r"^\s*(`{3,}|~{3,})\s*$")
# A shell prompt that names the host or the directory before its $ or %: `ns-nt078:~ too$ rbenv init`,
# `[ncdc@www3225ug mydomain]$ ls`, `user@host:~/src$ make`.
HOST_PROMPT = re.compile(r"^\s*\[?[\w.-]+(?:@[\w.-]+|:[~\w./-]*)(?:\s+[\w.~/-]+)?\]?[$%]\s+\S")
CONTAINER_NAME = re.compile(r"^\s*([A-Za-z][\w-]*)")
CONTAINER_CLOSE = re.compile(r"^\s*:{3,}\s*$")
COMMENT = re.compile(r"<!--(.*?)-->", re.S)
# Elements whose content is raw text (CommonMark's HTML block type 1). Inside an HTML block of
# another type (a run of <p> lines) CommonMark ends the block at a blank line, but kramdown, the
# blogs exported from Tumblr or WordPress and every reader take everything up to the closing tag
# as preformatted: code, never prose.
RAW_OPEN = re.compile(r"<(pre|script|style|textarea)(?=[\s>])", re.I)
CONTROL = re.compile(
    r"^\s*(proofread|textlint|markdownlint)-(disable-next-line|disable-line|disable-file|disable|enable)\b(.*)$",
    re.S,
)
# Zenn embeds @[card](url), @[youtube](id)…, Zenn's image size ![alt](url =250x) and Hashnode's
# image alignment ![alt](url align="center").
ZENN_EMBED = re.compile(r"@\[(\w{1,40})\]\(([^()\s]{0,2000})\)")
ZENN_SIZED_IMAGE = re.compile(
    r"!\[([^\[\]\n]{0,1000})\]\(\s*([^\s()]{0,2000})(\s+\"[^\"\n]{0,500}\")?\s+"
    r"(=\d{0,5}x\d{0,5}|align=\"(?:left|center|right)\")\s*\)"
)
# Kept for callers that limit how deep links nest in link text: CommonMark allows none.
MAX_LINK_NESTING = 32


# --- markdown-it setup ---------------------------------------------------------------------------


def _zenn_embed(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "@" or not state.src.startswith("@[", state.pos):
        return False
    match = ZENN_EMBED.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("zenn_embed", "", 0)
        token.info, token.content = match.group(1), match.group(2)
    state.pos = match.end()
    return True


def _zenn_sized_image(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("![", state.pos):
        return False
    match = ZENN_SIZED_IMAGE.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("image", "img", 0)
        token.attrs = {"src": match.group(2), "alt": ""}
        token.content = match.group(1)
        token.children = []
        token.meta = {"extra": ((match.group(3) or "").strip() + " " + match.group(4)).strip()}
    state.pos = match.end()
    return True


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """The one Markdown parser of the proofreader: CommonMark with GFM tables and strikethrough,
    footnotes (also Zenn's inline ^[…]), $…$/$$…$$ math, `:::name` containers (Zenn's
    :::message/:::details, Qiita's :::note), Zenn's @[embed](…) and ![](url =250x)."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    footnote_plugin(md, move_to_end=False)
    dollarmath_plugin(md, allow_space=False, allow_digits=False, allow_blank_lines=True)
    container_plugin(md, "block", validate=lambda params, *_: CONTAINER_NAME.match(params) is not None)
    # Links are reported as written: no percent-encoding, and file:/javascript: targets stay
    # links (the link checker has something to say about them) instead of turning into text.
    md.normalizeLink = lambda url: url  # type: ignore[method-assign]
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    md.inline.ruler.before("link", "zenn_embed", _zenn_embed)
    md.inline.ruler.before("image", "zenn_sized_image", _zenn_sized_image)
    return md


# --- the article ---------------------------------------------------------------------------------


def split_directive(text: str) -> tuple[Platform | None, str]:
    """(platform, article) for text whose first line is `platform:zenn` (as in
    `/proofread platform:zenn …`); (None, text) otherwise."""
    first, newline, rest = text.lstrip("\ufeff").partition("\n")
    match = PLATFORM_DIRECTIVE.match(first)
    if match is None:
        return None, text
    name = match.group(1).lower()
    return name, rest if newline else ""  # type: ignore[return-value]


def parse_article(text: str, platform: Platform | None = None) -> ParsedArticle:
    """Split `text` into front matter, body, code blocks, links and headings. `platform` is what
    the writer said the article is for; otherwise a leading `platform:NAME` line says it, or it
    is guessed from the front matter."""
    declared, text = split_directive(text)
    platform = platform or declared
    raw = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = raw.split("\n")
    kinds: list[LineKind] = ["blank"] * len(lines)

    front_matter, fm_count, fm_format = _front_matter(lines)
    for index in range(fm_count):
        kinds[index] = "front_matter"

    fenced = tagged_code_fences(lines)
    walk = _Walk(fenced, kinds, fm_count)
    walk.run(markdown().parse("\n".join(fenced[fm_count:])))

    detected = detect_platform(front_matter, fm_format, walk.syntax, declared=platform)
    return ParsedArticle(
        raw=raw,
        front_matter=front_matter,
        front_matter_line_count=fm_count,
        front_matter_format=fm_format,
        body="\n".join(lines[fm_count:]),
        body_start_line=fm_count + 1,
        article_type=_article_type(detected.platform),
        platform=detected.platform,
        platform_certain=detected.certain,
        platform_evidence=detected.evidence,
        declared_platform=platform,
        draft=_draft(front_matter),
        language=_language(lines, kinds),
        code_blocks=walk.code_blocks,
        links=walk.links,
        headings=walk.headings,
        containers=sorted(walk.containers, key=lambda c: c.start_line),
        line_kinds=kinds,
        suppressions=_suppressions(walk.comments, len(lines)),
        list_starts=walk.list_starts,
        thematic_breaks=walk.thematic_breaks,
    )


def tagged_code_fences(lines: list[str]) -> list[str]:
    """`lines` with each closed Liquid highlight block's tags, and each of Hatena's `>|lang|` … `||<`
    blocks, written as a fence (`~~~~~python` … `~~~~~`), so the code inside is code (a `# comment`
    in it is no heading); the line count is kept."""
    fenced = list(lines)
    opened: tuple[int, str, re.Pattern[str]] | None = None
    for index, line in enumerate(lines):
        if opened is None and (start := LIQUID_HIGHLIGHT.match(line)):
            opened = (index, start.group(1) or start.group(2), LIQUID_END)
        elif opened is None and (start := HATENA_PRE.match(line)):
            opened = (index, start.group(1), HATENA_PRE_END)
        elif opened is not None and opened[2].match(line):
            fenced[opened[0]], fenced[index] = f"~~~~~{opened[1]}", "~~~~~"
            opened = None
    return fenced


# --- front matter --------------------------------------------------------------------------------


def _front_matter(lines: list[str]) -> tuple[FrontMatter | None, int, Literal["yaml", "toml"] | None]:
    if not lines or lines[0].strip() not in ("---", "+++"):
        return None, 0, None
    marker = lines[0].strip()
    closers = ("---", "...") if marker == "---" else ("+++",)
    end = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() in closers), None)
    if end is None:
        return None, 0, None
    source = "\n".join(lines[1:end])
    key_lines: dict[str, int] = {}
    key = re.compile(r"^([A-Za-z_][\w-]*)\s*:" if marker == "---" else r"^([A-Za-z_][\w-]*)\s*=")
    for offset, line in enumerate(lines[1:end], start=2):
        if found := key.match(line):
            key_lines.setdefault(found.group(1), offset)
    front = FrontMatter(start_line=1, end_line=end + 1, key_lines=key_lines)
    fm_format: Literal["yaml", "toml"] = "yaml" if marker == "---" else "toml"
    data = _load_toml(front, source) if marker == "+++" else _load_yaml(front, source)
    if front.error is None:
        if isinstance(data, dict):
            front.data = data
        else:
            front.error = "front matter is not a mapping of keys to values"
            front.error_line = 2
    return front, end + 1, fm_format


def _load_toml(front: FrontMatter, source: str) -> Any:
    try:
        return tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"line (\d+)", str(exc))
        front.error = str(exc).split(" (at")[0]
        front.error_line = int(where.group(1)) + 1 if where else 2
    except RecursionError:
        front.error, front.error_line = "the front matter is nested too deeply", 2
    return None


def _load_yaml(front: FrontMatter, source: str) -> Any:
    try:
        data = yaml.safe_load(source) if source.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        front.error = str(getattr(exc, "problem", None) or exc)
        front.error_line = (mark.line + 2) if mark is not None else None
        return None
    except RecursionError:  # PyYAML composes nested collections recursively: [[[[…
        front.error, front.error_line = "the front matter is nested too deeply", 2
        return None
    if _expands_beyond(data, 2 * len(source) + 100):
        # Aliases can make a few hundred bytes stand for billions of values, which the checkers
        # would then format (repr) into their messages. Without aliases, YAML never holds more
        # values and characters than its source has characters.
        front.error, front.error_line = "its aliases (*name) expand to far more data than is written", 2
        return None
    return data


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


# --- platform ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Detected:
    platform: Platform | None  # None: a front matter of no known shape
    certain: bool
    evidence: str


def detect_platform(
    front: FrontMatter | None, fm_format: str | None, syntax: set[str], *, declared: Platform | None = None,
) -> Detected:
    """Which platform the article is written for, judged from the whole front matter (one key
    proves nothing: Hugo posts have tags, Jekyll posts have a type), and how sure that is."""
    if declared is not None:
        return Detected(declared, True, "named in the request")
    data = front.data if front is not None else {}
    if fm_format == "toml":
        zola = "taxonomies" in data or "extra" in data
        return Detected("zola" if zola else "hugo", False, "TOML front matter (+++)")
    if front is None:
        if "note" in syntax:
            return Detected("qiita", False, "Qiita's :::note syntax")
        if syntax & {"message", "details", "embed"}:
            return Detected("zenn", False, "Zenn's :::message, :::details or @[embed] syntax")
        return Detected("plain", False, "no front matter")
    keys = set(data)
    zenn = [
        key for key, present in (
            ("emoji", isinstance(data.get("emoji"), str)),
            ("type", data.get("type") in ("tech", "idea")),
            ("topics", "topics" in data),
            ("published", isinstance(data.get("published"), bool) or "published_at" in data),
            ("publication_name", "publication_name" in data),
        ) if present
    ]
    tags = data.get("tags")
    named_tags = isinstance(tags, list) and bool(tags) and all(isinstance(t, dict) and "name" in t for t in tags)
    qiita = sorted(keys & QIITA_KEYS) + (["tags as {name}"] if named_tags else [])
    site = sorted(keys & SITE_KEYS)
    zenn_keys = keys & ZENN_KEYS
    if "topics" in keys and len(zenn_keys) >= 3 and not keys & (SITE_KEYS - {"description"}) and len(qiita) < 2:
        return Detected("zenn", True, "front matter keys " + ", ".join(sorted(zenn_keys)))
    if len(zenn) >= 3 and "emoji" in zenn and "topics" in zenn and len(qiita) < 2:
        return Detected("zenn", True, "front matter keys " + ", ".join(zenn))
    if "tags" in keys and "title" in keys and len(qiita) >= 2 and len(zenn) <= 1:
        return Detected("qiita", True, "front matter keys title, tags, " + ", ".join(qiita))
    if site and len(site) >= len(zenn) and len(site) >= len(qiita):
        jekyll = bool(keys & JEKYLL_KEYS - {"categories"}) and not keys & HUGO_KEYS
        return Detected("jekyll" if jekyll else "hugo", False, "front matter keys " + ", ".join(site))
    if len(zenn) >= 2:
        return Detected("zenn", False, "front matter keys " + ", ".join(zenn))
    if "tags" in keys and qiita:
        return Detected("qiita", False, "front matter keys tags, " + ", ".join(qiita))
    return Detected(None, False, "front matter of no known platform's shape")


def _article_type(platform: Platform | None) -> ArticleType:
    return platform if platform in ("zenn", "qiita") else "markdown"  # type: ignore[return-value]


def _draft(front: FrontMatter | None) -> str | None:
    """The front matter setting that keeps the article unpublished, e.g. "published: false"."""
    if front is None:
        return None
    data = front.data
    if data.get("published") is False:
        return "published: false"
    if data.get("private") is True:
        return "private: true"
    if data.get("draft") is True:
        return "draft: true"
    return None


def _language(lines: list[str], kinds: list[LineKind]) -> Language:
    prose = "".join(line for line, kind in zip(lines, kinds, strict=True) if kind in ("text", "list", "heading"))
    kana = count_kana(prose)
    letters = sum(1 for c in prose if c.isascii() and c.isalpha())
    return "ja" if kana >= 10 and kana * 4 >= letters * 0.2 else "en"


# --- the token walk ------------------------------------------------------------------------------


@dataclass
class _Walk:
    """One pass over the block tokens: line kinds, headings, code blocks, containers, comments,
    and the links found in the inline tokens."""

    lines: list[str]
    kinds: list[LineKind]
    offset: int  # lines before the Markdown body (the front matter)
    code_blocks: list[CodeBlock] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    comments: list[tuple[int, str]] = field(default_factory=list)  # (line, text inside <!-- -->)
    syntax: set[str] = field(default_factory=set)  # platform syntax seen: note, message, embed…
    list_starts: dict[int, int] = field(default_factory=dict)  # line of an ordered list → its start number
    thematic_breaks: list[int] = field(default_factory=list)
    raw_ranges: list[tuple[int, int]] = field(default_factory=list)  # 0-based [start, end): <pre> content past its HTML block
    _columns: dict[int, int] = field(default_factory=dict)  # per line: where the next search starts
    _above_comments: dict[int, int] = field(default_factory=dict)  # per line: the nearest line above not starting `# `

    def run(self, tokens: list[Token]) -> None:
        covered = [False] * len(self.lines)
        stack: list[str] = []  # enclosing list/quote
        for index, token in enumerate(tokens):
            if token.type in ("bullet_list_open", "ordered_list_open"):
                stack.append("list")
                start_number = token.attrGet("start")
                if token.type == "ordered_list_open" and token.map and start_number not in (None, 1):
                    self.list_starts[token.map[0] + self.offset + 1] = int(start_number)
            elif token.type == "blockquote_open":
                stack.append("quote")
            elif token.type in ("bullet_list_close", "ordered_list_close", "blockquote_close"):
                if stack:
                    stack.pop()
            if token.map is None:
                continue
            start, end = token.map[0] + self.offset, token.map[1] + self.offset  # 0-based, end exclusive
            kind = token.type
            if kind in ("paragraph_open", "heading_open", "table_open", "fence", "code_block", "html_block",
                        "math_block", "math_block_label", "hr") or kind.startswith("container_"):
                for i in range(start, min(end, len(covered))):
                    covered[i] = True
            if kind == "heading_open":
                self._heading(token, tokens[index + 1], start, end, quoted="quote" in stack)
            elif kind == "paragraph_open":
                inline = tokens[index + 1]
                prose: LineKind = stack[-1] if stack else "text"  # type: ignore[assignment]
                self._mark(start, end, "html" if _only_shortcodes(inline.content) else prose)
            elif kind == "table_open":
                self._mark(start, end, "table")
            elif kind == "fence":
                self._fence(token, start, end)
            elif kind == "code_block":
                self._mark(start, end, "code")
            elif kind == "html_block":
                self._html_block(token, start, end)
            elif kind in ("math_block", "math_block_label"):
                self._mark(start, end, "math")
            elif kind == "hr":
                self._mark(start, end, "blank")
                self.thematic_breaks.append(start + 1)
            elif kind.startswith("container_") and kind.endswith("_open"):
                self._container(token, start, end)
            elif kind == "inline":
                self._inline(token, start)
        for start, end in self.raw_ranges:
            self._mark(start, end, "html")
            self.headings = [h for h in self.headings if not start < h.line <= end]
            self.code_blocks = [b for b in self.code_blocks if not start < b.start_line <= end]
        for i in range(self.offset, len(self.lines)):
            if not covered[i] and self.lines[i].strip() and self.kinds[i] == "blank":
                self.kinds[i] = "text"  # link reference definitions, which make no token
                if definition := DEFINITION.match(self.lines[i]):
                    url = definition.group(2)
                    if not url and i + 1 < len(self.lines):  # CommonMark: the destination may follow on the next line
                        url = self.lines[i + 1].strip().split(" ", 1)[0].strip("<>")
                    self.links.append(Link(url=url, text=definition.group(1), line=i + 1, kind="definition"))
        self.headings.sort(key=lambda h: h.line)
        self.links.sort(key=lambda link: (link.line, link.column))

    def _mark(self, start: int, end: int, kind: LineKind) -> None:
        for i in range(start, min(end, len(self.kinds))):
            if kind == "blank" or self.lines[i].strip():
                self.kinds[i] = kind

    def _heading(self, token: Token, inline: Token, start: int, end: int, *, quoted: bool = False) -> None:
        """A heading of the article's outline; one inside a blockquote (`> ### …`) is quoted text:
        its line is still no prose, but it opens no section."""
        setext = token.markup in ("=", "-")
        self._mark(start, end, "heading")
        if quoted or (not setext and token.tag == "h1" and self._under_prompt(start)):
            return
        self.headings.append(Heading(
            level=int(token.tag[1]), text=" ".join(inline.content.split()), line=start + 1,
            style="setext" if setext else "atx", line_end=end,
        ))

    def _under_prompt(self, start: int) -> bool:
        """`# Load rbenv automatically by adding` right under `ns-nt078:~ too$ rbenv init`: a terminal
        session pasted without a fence, whose `#` lines are the program's comments, not headings.
        Only `# ` lines directly under the prompt (no blank line between) count."""
        above = start - 1
        while above >= 0 and self.lines[above].startswith("# "):
            if above in self._above_comments:  # a `# ` line just above was asked already: a jump, not a walk
                above = self._above_comments[above]
                break
            above -= 1
        self._above_comments[start] = above
        return above >= 0 and HOST_PROMPT.match(self.lines[above]) is not None

    def _fence(self, token: Token, start: int, end: int) -> None:
        last = self.lines[end - 1] if end - 1 > start else ""
        close = FENCE_CLOSE.match(QUOTE_MARKERS.sub("", last))
        closed = bool(close and close.group(1)[0] == token.markup[0] and len(close.group(1)) >= len(token.markup))
        content_end = end - 1 if closed else end
        self.kinds[start] = "fence"
        for i in range(start + 1, content_end):
            self.kinds[i] = "code"
        if closed:
            self.kinds[end - 1] = "fence"
        content = token.content[:-1] if token.content.endswith("\n") else token.content
        self.code_blocks.append(_code_block(token.markup, token.info.strip(), start + 1, end if closed else None,
                                            content))

    def _html_block(self, token: Token, start: int, end: int) -> None:
        comment = token.content.lstrip().startswith("<!--")
        self._mark(start, end, "html_comment" if comment else "html")
        last = next(reversed(list(RAW_OPEN.finditer(token.content))), None)
        close = f"</{last.group(1).lower()}" if last else ""
        if last and not comment and close not in token.content[last.start():].lower():
            # The block ended (at a blank line) inside the element: it runs on to its closing tag.
            for i in range(end, len(self.lines)):
                if close in self.lines[i].lower():
                    self.raw_ranges.append((end, i + 1))
                    break
        for match in COMMENT.finditer(token.content):
            self.comments.append((start + 1 + token.content.count("\n", 0, match.start()), match.group(1)))
        for number in range(start + 1, end + 1):
            line = self.lines[number - 1]
            for match in html_url_matches(line):
                self.links.append(Link(url=attribute_url(match.group(1)), text="", line=number, kind="html", column=match.start()))

    def _container(self, token: Token, start: int, end: int) -> None:
        name = CONTAINER_NAME.match(token.info)
        kind = name.group(1) if name else token.info.strip()
        self.syntax.add(kind)
        # The container's map ends before its closing ::: line, or at the end when there is none.
        closed = end < len(self.lines) and CONTAINER_CLOSE.match(QUOTE_MARKERS.sub("", self.lines[end])) is not None
        self.kinds[start] = "container"
        if closed:
            self.kinds[end] = "container"
        self.containers.append(Container(kind=kind, start_line=start + 1, end_line=end + 1 if closed else None))

    # --- inline ------------------------------------------------------------------------------

    def _inline(self, token: Token, start: int) -> None:
        line = start + 1
        link: Link | None = None
        text: list[str] = []
        for child in token.children or []:
            kind = child.type
            if kind in ("softbreak", "hardbreak"):
                line += 1
                if link is not None:
                    text.append(" ")
            elif kind == "link_open":
                href = str(child.attrs.get("href", ""))
                autolink = child.markup == "autolink"
                link = Link(url=href, text="", line=line, kind="autolink" if autolink else "inline",
                            column=self._column(line, href), extra=_title(child))
                text = []
            elif kind == "link_close" and link is not None:
                link.text = "".join(text)
                if link.kind == "autolink":
                    link.text = link.url
                self.links.append(link)
                link = None
            elif kind == "image":
                src = str(child.attrs.get("src", ""))
                extra = child.meta.get("extra") if child.meta else None
                self.links.append(Link(url=src, text=child.content, line=line, kind="image",
                                       column=self._column(line, src), extra=extra or _title(child)))
                if link is not None:
                    text.append(child.content)
                    link.holds_image = True
            elif kind == "html_inline" and link is not None:
                text.append(child.content)  # `[<span class="octicon octicon-link"></span>](#x)`: an icon shows
            elif kind == "zenn_embed":
                self.syntax.add("embed")
                self.links.append(Link(url=child.content, text=child.info, line=line, kind="embed",
                                       column=self._column(line, "@[" + child.info)))
            elif kind == "text":
                if link is not None:
                    text.append(child.content)
                else:
                    self._text(child.content, line)
                line += child.content.count("\n")
            elif kind == "code_inline":
                if link is not None:
                    text.append(child.content)
            elif kind == "html_inline":
                for match in COMMENT.finditer(child.content):
                    self.comments.append((line, match.group(1)))
                for match in html_url_matches(child.content):
                    self.links.append(Link(url=attribute_url(match.group(1)), text="", line=line, kind="html",
                                           column=self._column(line, match.group(1))))
                line += child.content.count("\n")
            elif kind in ("math_inline", "math_inline_double"):
                if link is not None:
                    text.append(child.content)  # `[$\KaTeX$](https://katex.org/)`: the formula is the text
                line += child.content.count("\n")
        if link is not None:  # a link the parser left open (cannot happen in CommonMark)
            self.links.append(link)

    def _text(self, content: str, line: int) -> None:
        """Bare URLs and undefined `[text][label]` references in a run of plain text."""
        if "](" in content:
            spans = []
            for match in UNPARSED_LINK.finditer(content):
                url, extra = _destination_url(match.group(3).strip())
                number = line + content.count("\n", 0, match.start())
                self.links.append(Link(url=url, text=match.group(2), line=number,
                                       kind="image" if match.group(1) else "inline",
                                       column=self._column(number, match.group(0)), extra=extra))
                spans.append((match.start(), match.end(), " " * (match.end() - match.start())))
            content = replace_spans(content, spans)
        if "{{" in content:
            content = SHORTCODE.sub(lambda m: " " * len(m.group(0)), content)
        if "://" in content:
            for match in BARE_URL.finditer(content):
                number = line + content.count("\n", 0, match.start())
                url, swallowed = trim_bare_url(match.group(0))
                if not NAMED_HOST.match(url):
                    continue  # 「「https://」で始まるサイト」: the scheme named in text; with no domain after it, no autolink
                if match.start() and content[match.start() - 1].isalnum():
                    # 「デフォルトはhttp://…」: GFM's autolinks and Zenn's linkify start a URL only after
                    # a space or punctuation, so this one is plain text and swallows nothing.
                    swallowed = ""
                source = self.lines[number - 1].strip() if number <= len(self.lines) else ""
                if swallowed and _LIST_ITEM_MARKER.sub("", source) == url + swallowed and is_last_path_segment(url, swallowed):
                    url, swallowed = url + swallowed, ""  # `https://ja.wikipedia.org/wiki/ヌメロニム` alone: the page's name
                alone = source == url or source.strip("<>") == url
                self.links.append(Link(url=url, text=url, line=number, kind="bare",
                                       column=self._column(number, url), swallowed=swallowed,
                                       alone_on_line=alone))
        if "][" in content:
            for match in UNDEFINED_REFERENCE.finditer(content):
                label = match.group(2) or match.group(1)
                if label.startswith("^"):
                    continue
                number = line + content.count("\n", 0, match.start())
                self.links.append(Link(url=label, text=match.group(1), line=number, kind="reference",
                                       column=self._column(number, match.group(0))))

    def _column(self, line: int, needle: str) -> int:
        """Where `needle` is on `line`, searching on from the last thing found there."""
        if not needle or not 1 <= line <= len(self.lines):
            return 0
        text = self.lines[line - 1]
        position = text.find(needle, self._columns.get(line, 0))
        if position == -1:
            position = text.find(needle)
        if position == -1:
            return 0
        self._columns[line] = position + len(needle)
        return position


def _destination_url(destination: str) -> tuple[str, str]:
    """(url, what follows it): a title `"…"`, or stray text after a space."""
    if destination.startswith("<"):
        end = destination.find(">")
        if end == -1:
            return destination[1:], ""
        return destination[1:end], destination[end + 1 :].strip()
    parts = destination.split(None, 1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


def _title(token: Token) -> str:
    title = token.attrs.get("title")
    return f'"{title}"' if title else ""


def _only_shortcodes(content: str) -> bool:
    return "{{" in content and not SHORTCODE.sub("", content).strip()


def _code_block(marker: str, info: str, start: int, end: int | None, content: str) -> CodeBlock:
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
        content=content,
        start_line=start,
        end_line=end,
        fence=marker,
        diff=diff,
    )


_C0_OR_SPACE = "".join(chr(code) for code in range(0x21))


def attribute_url(value: str) -> str:
    """An href/src value as a browser reads it (the URL Standard's first steps): tabs and newlines
    removed, leading and trailing spaces and control characters stripped. `src="https://….png\n"`
    loads the image."""
    return value.replace("\t", "").replace("\n", "").replace("\r", "").strip(_C0_OR_SPACE)


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


# --- inline rule control -------------------------------------------------------------------------


def _suppressions(comments: list[tuple[int, str]], line_count: int) -> list[Suppression]:
    """The line ranges where `<!-- proofread-disable … -->` (and textlint's and markdownlint's
    own comments) turn rules off. Rules named by markdownlint are kept by their own ids
    (md034…); the rule-control module maps them to ours."""
    ranges: list[Suppression] = []
    open_ranges: dict[tuple[str, str], int] = {}  # (tool, rule or "*") -> first line
    for line, inside in sorted(comments):
        match = CONTROL.match(inside)
        if match is None:
            continue
        tool, action = match.group(1), match.group(2)
        names = tuple(_rule_names(match.group(3))) if tool != "textlint" else ()
        if action == "disable-next-line":
            ranges.append(Suppression(tool=tool, start_line=line + 1, end_line=line + 1, rules=names))
        elif action == "disable-line":
            ranges.append(Suppression(tool=tool, start_line=line, end_line=line, rules=names))
        elif action == "disable-file":
            ranges.append(Suppression(tool=tool, start_line=1, end_line=line_count, rules=names))
        elif action == "disable":
            for name in names or ("*",):
                open_ranges.setdefault((tool, name), line)
        else:
            for key in [k for k in open_ranges if k[0] == tool and (not names or k[1] in names or k[1] == "*")]:
                first = open_ranges.pop(key)
                ranges.append(Suppression(tool=tool, start_line=first, end_line=line,
                                          rules=() if key[1] == "*" else (key[1],)))
    for (tool, name), first in open_ranges.items():
        ranges.append(Suppression(tool=tool, start_line=first, end_line=line_count,
                                  rules=() if name == "*" else (name,)))
    return ranges


def _rule_names(text: str) -> Iterator[str]:
    for name in re.split(r"[\s,]+", text.strip()):
        if name and name != "--":
            yield name.lower().removeprefix("rule:")
