"""The proofreader's data types: issues, errors, and the parsed article with exact line numbers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Category = Literal[
    "markdown_format",
    "technical_accuracy",
    "code_quality",
    "privacy",
    "structure",
    "language_quality",
    "link",
]
CATEGORIES: tuple[Category, ...] = (
    "markdown_format",
    "link",
    "code_quality",
    "privacy",
    "structure",
    "language_quality",
    "technical_accuracy",
)

Severity = Literal["critical", "warning", "suggestion"]
SEVERITIES: tuple[Severity, ...] = ("critical", "warning", "suggestion")

ArticleType = Literal["zenn", "qiita", "markdown"]
# What the article is written for; "plain" is Markdown without a site generator's front matter.
Platform = Literal["zenn", "qiita", "hugo", "jekyll", "zola", "plain"]
Language = Literal["ja", "en"]


class Issue(BaseModel):
    """One problem found in the article. Line numbers count from the first line of the file,
    front matter included."""

    category: Category
    severity: Severity
    line_start: int | None = None
    line_end: int | None = None
    location_description: str
    problem: str
    suggestion: str
    reason: str
    # Which rule or tool produced the issue, e.g. "pymarkdownlnt:MD001", "rule:mixed-style", "llm".
    source: str | None = None


class ErrorInfo(BaseModel):
    """A checker that failed; the others still ran."""

    step: str
    error_type: str
    message: str


class SkippedCheck(BaseModel):
    """A check that deliberately did not run (no language model, network checks off…)."""

    step: str
    reason: str


class FrontMatter(BaseModel):
    """The YAML block at the top of a Zenn or Qiita article, as parsed (None fields: absent)."""

    data: dict[str, Any] = Field(default_factory=dict)
    start_line: int = 1
    end_line: int = 1  # the closing `---`
    error: str | None = None  # YAML syntax error, with its line when known
    error_line: int | None = None
    key_lines: dict[str, int] = Field(default_factory=dict)

    def line_of(self, key: str) -> int | None:
        """The line where a top-level key is written, for issues about that key."""
        return self.key_lines.get(key)


class CodeBlock(BaseModel):
    language: str | None  # "python" for ```python:main.py
    filename: str | None  # "main.py" for ```python:main.py (Zenn and Qiita syntax)
    info: str  # the whole info string after the fence
    content: str
    start_line: int  # the opening fence
    end_line: int | None  # the closing fence; None when the fence is never closed
    fence: str  # "```" or "~~~~" …
    diff: bool = False  # Zenn ```diff js / Qiita ```diff_js: +/- lines, not parseable code

    @property
    def content_start_line(self) -> int:
        return self.start_line + 1

    @property
    def closed(self) -> bool:
        return self.end_line is not None


LinkKind = Literal["inline", "image", "autolink", "bare", "reference", "definition", "embed", "html"]


class Link(BaseModel):
    url: str
    text: str
    line: int
    kind: LinkKind
    column: int = 0
    # For bare URLs: characters that a renderer would swallow into the URL (e.g. Japanese text).
    swallowed: str = ""
    alone_on_line: bool = False
    # What follows the URL inside (…): a "title", Zenn's `=250x` image size, or stray text.
    extra: str = ""
    # A link around an image (`[![alt](thumb.png)](full.png)`): the image's alt text names it.
    holds_image: bool = False


class Heading(BaseModel):
    level: int
    text: str
    line: int
    style: Literal["atx", "setext"] = "atx"
    line_end: int | None = None  # the last line: a setext heading's underline


class Container(BaseModel):
    """A Zenn `:::message` / `:::details` or Qiita `:::note` block."""

    kind: str
    start_line: int
    end_line: int | None


class Suppression(BaseModel):
    """Lines where an inline comment (`<!-- proofread-disable rule -->`, textlint's or
    markdownlint's) turns rules off; no rules: every rule."""

    tool: str  # proofread, textlint or markdownlint
    start_line: int
    end_line: int
    rules: tuple[str, ...] = ()


LineKind = Literal[
    "front_matter", "fence", "code", "math", "container", "html_comment", "html", "blank",
    "heading", "table", "list", "quote", "text",
]


class ParsedArticle(BaseModel):
    """An article split into the parts the checkers need. Line numbers are 1-based and absolute."""

    raw: str
    front_matter: FrontMatter | None
    front_matter_line_count: int
    front_matter_format: Literal["yaml", "toml"] | None = None
    body: str
    body_start_line: int
    article_type: ArticleType
    # The platform (None: a front matter of no known shape), and whether that is certain: named by
    # the writer or proven by the whole front matter. Platform rules run only when it is.
    platform: Platform | None = None
    platform_certain: bool = False
    platform_evidence: str = ""
    declared_platform: Platform | None = None
    # The front matter setting that keeps the article unpublished ("published: false"), if any.
    draft: str | None = None
    language: Language
    code_blocks: list[CodeBlock] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    headings: list[Heading] = Field(default_factory=list)
    containers: list[Container] = Field(default_factory=list)
    # One entry per line of the file: what the line is, for checkers that only read prose.
    line_kinds: list[LineKind] = Field(default_factory=list)
    suppressions: list[Suppression] = Field(default_factory=list)
    # The first line of each ordered list that does not start at 1 → the number it starts at
    # (`3.`: CommonMark renders <ol start="3">, so the list starts there on purpose).
    list_starts: dict[int, int] = Field(default_factory=dict)
    # The lines of the body's thematic breaks (`---`, `***`, `___`), in order.
    thematic_breaks: list[int] = Field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        """The lines of `raw` (do not modify the list: it is split once and shared). Checkers call
        line(n) and line_count inside loops over lines, so re-splitting made those quadratic."""
        cached = self.__dict__.get("_split_lines")
        if cached is None or cached[0] is not self.raw:
            # Kept outside the model's fields: not validated, serialised or compared.
            cached = (self.raw, self.raw.split("\n"))
            self.__dict__["_split_lines"] = cached
        return cached[1]

    @property
    def line_count(self) -> int:
        return len(self.lines)

    @property
    def title(self) -> str | None:
        if self.front_matter and isinstance(self.front_matter.data.get("title"), str):
            return self.front_matter.data["title"]
        h1 = next((h for h in self.headings if h.level == 1), None)
        return h1.text if h1 else None

    def line(self, number: int) -> str:
        """The text of line `number` (1-based, absolute); '' outside the article."""
        lines = self.lines
        return lines[number - 1] if 1 <= number <= len(lines) else ""

    def kind(self, number: int) -> LineKind:
        return self.line_kinds[number - 1] if 1 <= number <= len(self.line_kinds) else "blank"

    def get_numbered_body(self, *, skip_code: bool = False) -> str:
        """The body with each line prefixed by its absolute line number, for the model."""
        numbered = []
        for number, line in enumerate(self.body.split("\n"), start=self.body_start_line):
            if skip_code and self.kind(number) == "code":
                continue
            numbered.append(f"{number}: {line}")
        return "\n".join(numbered)

    def prose_lines(self) -> list[tuple[int, str]]:
        """(line number, text) for lines of running text: paragraphs, list items, quotes, tables."""
        return [
            (number, line)
            for number, line in enumerate(self.lines, start=1)
            if self.kind(number) in ("text", "list", "quote", "table", "heading")
        ]
