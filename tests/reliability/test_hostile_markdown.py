"""Hostile Markdown through the whole /proofread graph: every input gets an answer, and the work
done for 64 KB of it is about 8× the work for 8 KB (linear), never 64× (quadratic).

Work is counted, not timed (performance is measured, not timed in tests): each scanning function
of the proofreader is wrapped, and a call adds the size of what it was given to scan. The
scanners are linear in their input, so the total is linear unless something calls them again and
again on the same text (a scan to the end of the line for every `[`, a long line redacted once
per issue, links nested thousands deep…). Backtracking inside a regular expression is not
counted: the inputs below include those that made the old expressions backtrack quadratically
or worse (a 64 KB run took minutes to hours), so such a regression shows as a hung test.

pymarkdownlnt, the third-party linter, is replaced by one that reports nothing: it runs in a
child process that is killed after `linter_timeout` (tests/proofread covers that), and what is
measured here is the proofreader's own code."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from agents.proofread import parser, report, text
from agents.proofread.checkers import CHECKER_CLASSES, CheckContext, base, privacy
from agents.proofread.checkers.language_quality import LanguageQualityChecker
from agents.proofread.config import GraphConfig
from agents.proofread.linter import LinterWorker
from agents.proofread.llm import ProofreadLLM
from agents.proofread.schemas import ParsedArticle
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel
from tests.proofread.conftest import Conversation, fixture_text, offline_deps, start_conversation

SMALL, LARGE = 8_000, 64_000
# Linear work grows 8× from SMALL to LARGE; quadratic work would grow 64×.
MAX_GROWTH = 10


def repeat(unit: str, size: int) -> str:
    """`unit` repeated to `size` bytes of UTF-8."""
    return (unit * (size // len(unit.encode()) + 1)).encode()[:size].decode(errors="ignore")


def lines(make: Callable[[int], str], size: int) -> str:
    """Lines make(0), make(1)… up to `size` bytes."""
    out: list[str] = []
    total = 0
    while total < size:
        out.append(make(len(out)))
        total += len(out[-1].encode()) + 1
    return "\n".join(out)


def alias_bomb(size: int) -> str:
    # Each alias stands for nine of the previous one: 9**12 values from under 1 KB.
    head = ["---", 'title: "t"', "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    head += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    head += ["topics: [*a11]", "type: *a11", "---", ""]
    document = "\n".join(head)
    return document + repeat("本文です。\n", size - len(document.encode()))


# name -> text of about `size` bytes
HOSTILE: dict[str, Callable[[int], str]] = {
    "open_brackets": lambda n: repeat("[", n),
    "close_brackets": lambda n: repeat("]", n),
    "link_openers": lambda n: repeat("[a](", n),
    "image_openers": lambda n: repeat("![", n),
    "embed_openers": lambda n: repeat("@[", n),
    "bracket_paren": lambda n: repeat("[](", n),
    "nested_links": lambda n: "[" * (n // 5) + "a" + "](u)" * (n // 5),
    "link_destinations": lambda n: repeat("](", n),
    "references": lambda n: repeat("[a][b]", n),
    "backticks": lambda n: repeat("`", n),
    "unmatched_backticks": lambda n: "x" + "`" * (n // 2) + "a" * (n // 2),
    "backtick_runs": lambda n: ("x" + "".join("`" * k + "a" for k in range(1, 400)))[:n],
    "emphasis_stars": lambda n: repeat("*a", n),
    "emphasis_strong": lambda n: repeat("**a", n),
    "emphasis_underscores": lambda n: repeat("_a", n),
    "angle_brackets": lambda n: repeat("<", n),
    "html_tags": lambda n: repeat("<a ", n),
    "nested_list": lambda n: lines(lambda i: " " * i + "- a", n),
    "nested_quotes": lambda n: lines(lambda i: "> " * (i + 1) + "q", n),
    "long_line": lambda n: repeat("lorem ipsum dolor ", n),
    "long_japanese_line": lambda n: repeat("私は本をテストで読みます、", n),
    "japanese_lines_without_stop": lambda n: lines(lambda i: "これはテストです", n),
    "headings": lambda n: repeat("# h\n", n),
    "blank_lines": lambda n: "x" + "\n" * (n - 2) + "x",
    "heading_then_spaces": lambda n: "# a" + " " * (n - 4) + "b",
    "fence_then_spaces": lambda n: "```" + " " * (n - 4) + "`",
    "bare_urls": lambda n: " " + " ".join(f"http://a.b/{i}" for i in range(n // 15)),
    "url_closing_parens": lambda n: "http://x" + ")" * (n - 8),
    "filler_words_lines": lambda n: repeat("really\n", n),
    "dotted_word": lambda n: repeat("a.", n),
    "token_word": lambda n: repeat("token.", n),
    "email_like_word": lambda n: repeat("a%", n),
    "shell_curl": lambda n: "```sh\n" + repeat("curl ", n - 10) + "\n```",
    "front_matter_nesting": lambda n: "---\ntitle: " + "[" * (n - 20) + "\n---\n",
    "front_matter_aliases": alias_bomb,
    "mix": lambda n: repeat("[a](<`*_![@[> - **x](", n),
    "mix_lines": lambda n: lines(
        lambda i: ["[" * 50, "`" * 30, "- " * 20, "> " * 20, "[a](" * 10, "*_" * 30, "<" * 40, "![" * 20][i % 8], n
    ),
    # One long word (an image pasted as a data: URI, a minified line) and one run of spaces: the
    # names before さん and と申します were looked for from each letter, list items cut from each
    # space (tests/proofread/test_linear_rules.py gives each 2 MB).
    "long_word": lambda n: repeat("x", n),
    "data_uri_image": lambda n: "![diagram](data:image/png;base64," + repeat("iVBORw0KGgo", n - 40) + ")",
    "space_run": lambda n: "a" + " " * (n - 3) + "b",
    # Code blocks: blank lines, each tried from its start by the rules that look for a line of a kind
    # (2,000 took 73 s); and code nested past what Python's, JSON's, YAML's and TOML's parsers follow,
    # which raised RecursionError or MemoryError out of the check instead of leaving the block unjudged.
    "code_blank_lines": lambda n: "```python\nprint(1)\n" + "\n" * (n - 30) + "print(2)\n```",
    "code_space_lines": lambda n: "```\nprint(1)\n" + repeat(" \n", n - 30) + "print(2)\n```",
    "deep_python": lambda n: "```python\nx = " + repeat("a*", n - 20) + "a\n```",
    "deep_python_unary": lambda n: "```python\nx = " + repeat("-", n - 20) + "1\n```",
    "deep_json": lambda n: "```json\n" + repeat('{"a":', n - 20) + "\n```",
    "deep_yaml": lambda n: "```yaml\na: " + repeat("[", n - 20) + "\n```",
    "deep_toml": lambda n: "```toml\na = " + repeat("[", n - 20) + "\n```",
    "realistic_article": lambda n: repeat(fixture_text("mixed_realistic.md"), n),
}


# --- counting work ---------------------------------------------------------------------------

def _length(*args: Any, **_kwargs: Any) -> int:
    return len(next(a for a in args if isinstance(a, str)))


# (where the function is defined, its name, the size of one call's input)
SCANNERS: list[tuple[Any, str, Callable[..., int]]] = [
    (parser._Walk, "_inline", lambda self, token, start: len(token.content)),
    (parser._Walk, "_text", lambda self, content, line: len(content)),
    (parser, "html_url_matches", _length),
    (parser, "trim_bare_url", _length),
    (text, "code_spans", _length),
    (text, "replace_spans", _length),
    (text, "mask_for_prose", _length),
    (text, "finditer_by_runs", lambda pattern, line, *rest: len(line)),
    (text, "split_sentences", lambda lines, **_kw: sum(len(line) for _number, line in lines)),
    (privacy, "find_secrets", _length),
    (privacy, "redact", _length),
    (privacy, "redact_personal", _length),
    (base, "locate", lambda article, line: 1),
    (report, "quote_lines", lambda lines, issue, cache=None: 1),
    (LanguageQualityChecker, "_doubled_particles", lambda self, article, sentence, tokens: len(sentence.text)),
]


class WorkBudgetExceeded(Exception):
    pass


class WorkMeter:
    """While installed, work[name] adds up the input sizes of calls to each scanner, from any
    thread (the graph runs the checkers in worker threads). Past `budget` in all, the next call
    raises WorkBudgetExceeded: quadratic work is stopped early rather than run to the end."""

    def __init__(self, budget: int | None = None) -> None:
        self.work: Counter[str] = Counter()
        self.total = 0
        self.budget = budget
        self.lock = threading.Lock()

    def add(self, name: str, amount: int) -> None:
        with self.lock:
            self.work[name] += amount
            self.total += amount
            if self.budget is not None and self.total > self.budget:
                raise WorkBudgetExceeded(f"{name}: {self.total} units of work, budget {self.budget}")

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        modules = [m for name, m in sys.modules.items() if name.startswith("agents.proofread")]
        for owner, name, size in SCANNERS:
            original = getattr(owner, name)
            counted = self._counting(name, original, size)
            monkeypatch.setattr(owner, name, counted)
            for module in modules:  # modules that imported it by name hold their own reference
                if module is not owner and getattr(module, name, None) is original:
                    monkeypatch.setattr(module, name, counted)
        # Splitting the article into lines: counted each time a new list of lines is made (the
        # checkers ask for lines, line(n) and line_count inside their loops over lines).
        split = ParsedArticle.lines.fget
        # Per article: (the article, the last list returned), both kept alive so that a new list
        # can never reuse the id of that one.
        last: dict[int, tuple[ParsedArticle, list[str]]] = {}

        def lines(article: ParsedArticle) -> list[str]:
            result = split(article)
            with self.lock:
                previous = last.get(id(article))
                new = previous is None or previous[1] is not result
                if new:
                    last[id(article)] = (article, result)
            if new:
                self.add("ParsedArticle.lines", len(article.raw))
            return result

        monkeypatch.setattr(ParsedArticle, "lines", property(lines))

    def _counting(self, name: str, function: Callable[..., Any], size: Callable[..., int]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.add(name, size(*args, **kwargs))
            return function(*args, **kwargs)

        return counted


class SilentLinter(LinterWorker):
    def scan(self, text: str, extensions: tuple[str, ...], disabled: tuple[str, ...], *, timeout: float) -> list[Any]:
        return []


async def proofread(article: str) -> Any:
    context = CheckContext(
        config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)), linter=SilentLinter()
    )
    checkers = [CHECKER_CLASSES[name](context) for name in GraphConfig().checkers]
    conversation: Conversation = await start_conversation(offline_deps(proofread_checkers=checkers))
    return await conversation.send(article)


@contextmanager
def measured(monkeypatch: pytest.MonkeyPatch, budget: int | None = None) -> Iterator[WorkMeter]:
    with monkeypatch.context() as patch:
        meter = WorkMeter(budget)
        meter.install(patch)
        yield meter


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_hostile_input_gets_an_answer_with_linear_work(name: str, monkeypatch: pytest.MonkeyPatch):
    work: dict[int, Counter[str]] = {}
    for size in (SMALL, LARGE):
        article = HOSTILE[name](size)
        assert size * 0.9 <= len(article.encode()) <= size * 1.1
        # The large run may do at most MAX_GROWTH times the work of the small one.
        budget = MAX_GROWTH * sum(work[SMALL].values()) + 1_000 if size == LARGE else None
        with measured(monkeypatch, budget) as meter:
            final = await proofread(article)
        work[size] = meter.work
        assert final.data["errors"] == []  # a checker stopped by the budget reports an error
        assert final.text.startswith(("Proofreading: ", "校正結果: "))  # the report speaks the article's language
        assert final.data["score"] is not None
        report_file = final.files[0]  # safe fixes may follow it
        assert report_file.content.startswith(("# Proofreading report", "# 校正レポート"))
    small, large = work[SMALL], work[LARGE]
    assert sum(small.values()) > 0
    assert sum(large.values()) <= MAX_GROWTH * sum(small.values()), (small, large)
    for scanner in large:
        # A few units of slack for scanners that run a constant number of times.
        assert large[scanner] <= MAX_GROWTH * small[scanner] + 100, (scanner, small[scanner], large[scanner])


async def test_an_alias_bomb_in_the_front_matter_is_reported_not_expanded():
    final = await proofread(alias_bomb(2_000))
    (issue,) = [i for i in final.data["issues"] if i["source"] == "rule:front-matter-yaml"]
    assert issue["severity"] == "critical"
    assert "aliases" in issue["problem"]
    assert len(final.files[0].content) < 20_000


def test_links_nested_in_link_text_are_read_as_commonmark_does():
    depth = 1_000
    line = "[" * depth + "a" + "](u)" * depth
    links = parser.parse_article(line).links
    # CommonMark allows no link inside a link: only the innermost is one, the rest is text. Its
    # column is where its target is written.
    assert [(link.url, link.text, link.column) for link in links] == [("u", "a", depth + 3)]
    badge = parser.parse_article("[![build](https://img.example.com/b.svg)](https://ci.example.com)").links
    assert {(link.kind, link.url) for link in badge} == {
        ("image", "https://img.example.com/b.svg"), ("inline", "https://ci.example.com"),
    }
