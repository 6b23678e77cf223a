"""Each deterministic checker on small articles: what it must flag, and what it must leave alone."""

from __future__ import annotations

import httpx
import pytest

from agents.proofread.checkers import CHECKER_CLASSES, CheckContext
from agents.proofread.checkers.code_quality import unclosed_opener
from agents.proofread.checkers.language_quality import sentence_style
from agents.proofread.checkers.markdown_format import linter_chunks, linter_view, unrendered_strong
from agents.proofread.checkers.privacy import find_secrets, redact
from agents.proofread.config import GraphConfig
from agents.proofread.japanese import tokenize
from agents.proofread.linter import LinterWorker
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.schemas import Issue
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel

ZENN_HEAD = '---\ntitle: "テスト記事"\nemoji: "🧪"\ntype: "tech"\ntopics: ["python"]\npublished: true\n---\n\n'


def context(**config) -> CheckContext:
    return CheckContext(
        config=GraphConfig(**config),
        llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)),
    )


def run(category: str, text: str, **config) -> list[Issue]:
    checker = CHECKER_CLASSES[category](context(**config))
    return checker.rules(parse_article(text))


def lines_of(issues: list[Issue], source: str | None = None) -> list[int | None]:
    return [i.line_start for i in issues if source is None or i.source == source]


# --- markdown_format ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "broken"),
    [("これは**「強調」**です", True), ("「**強調**」です", False), ("これは **「強調」** です", False),
     ("**bold** text", False), ("2**3 and a**b", False)],
)
def test_bold_next_to_japanese_brackets_is_detected(line, broken):
    assert unrendered_strong(line) is broken


def test_front_matter_does_not_confuse_the_linter():
    assert run("markdown_format", ZENN_HEAD + "## はじめに\n\n本文です。\n") == []


def test_zenn_and_qiita_syntax_is_not_flagged():
    text = ZENN_HEAD + (
        "## A\n\n:::message alert\n注意\n:::\n\n:::details 詳細\n```js:app.js\nconsole.log(1)\n```\n:::\n\n"
        "@[card](https://zenn.dev)\n@[tweet](https://twitter.com/x/status/1)\n\n"
        "![図](https://example.com/a.png =250x)\n\n$$\na^2\n$$\n\n脚注^[注釈]と$x$。\n\n"
        ":::note info\nQiita\n:::\n\n数式 $`x^2`$ です。\n\nhttps://zenn.dev/topics/python\n"
    )
    assert run("markdown_format", text) == []


def test_unclosed_fence_is_critical_and_points_at_the_opening_fence():
    issues = run("markdown_format", "## A\n\ntext\n\n```python\nprint(1)\n\n## B\n")
    (fence,) = [i for i in issues if i.source == "rule:unclosed-fence"]
    assert fence.severity == "critical" and fence.line_start == 5


def test_heading_jump_and_missing_space_are_reported_on_their_lines():
    issues = run("markdown_format", "# T\n\n## A\n\n#### B\n\n##C\n")
    assert 5 in lines_of(issues, "pymarkdownlnt:MD001")
    assert 7 in lines_of(issues, "pymarkdownlnt:MD018")


def test_bare_url_followed_by_japanese_is_a_warning_but_a_link_card_line_is_fine():
    issues = run("markdown_format", ZENN_HEAD + "詳細は https://example.com/docsを参照。\n\nhttps://example.com/card\n")
    assert [(i.line_start, i.severity) for i in issues] == [(9, "warning")]


# --- privacy -----------------------------------------------------------------------------------


def test_documentation_placeholders_are_not_secrets():
    text = (
        "key AKIAIOSFODNN7EXAMPLE\nOPENAI_API_KEY=your-api-key\nmail user@example.com\n"
        "ip 127.0.0.1 and 192.0.2.10 and 10.0.0.0/16\nhost host.docker.internal\ngit@github.com:org/repo.git\n"
        "sha 3f2c1e0d9b8a7f6e5d4c3b2a1908f7e6d5c4b3a2\nversion 10.0.0.1 of the tool\n"
    )
    assert run("privacy", text) == []


def test_a_secret_is_critical_and_an_email_a_suggestion_with_the_exact_line():
    text = "intro\n\n```\ntoken = ghp_NhFdnXsiVpzz63FfkCzJr4i0B3JrTAwR4y9o\n```\n\ncommitted as a.person@corp-mail.co.jp\n"
    issues = run("privacy", text)
    assert [(i.line_start, i.severity, i.source) for i in issues] == [
        (4, "critical", "rule:github-token"), (7, "suggestion", "rule:email"),
    ]
    assert "ghp_NhFdnXsiVpzz63" not in issues[0].problem


def test_redaction_masks_the_secret_in_quotes():
    line = 'aws_access_key_id="AKIAUJZDE8GXD6NCF10E"'
    assert "AKIAUJZDE8GXD6NCF10E" not in redact(line)
    assert find_secrets(line, 1)[0].kind == "aws-access-key"


def test_random_value_assigned_to_a_secret_name_is_found():
    (finding,) = find_secrets('client_secret = "q8Zr2LmX9vTt4KpW7sYb"', 1)
    assert finding.kind == "assigned-secret"


# --- code_quality ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "line"),
    [
        ("```python\nimport os\n\ndef f()\n    pass\n```", 6),
        ('```json\n{\n  "a": 1,\n}\n```', 5),
        ('```json\n{\n  "a": 1\n  "b": 2\n}\n```', 5),
        ("```yaml\na:\n  b: 1\n c: 2\n```", 6),
        ('```toml\n[x]\ny = "unterminated\n```', 5),
        ("```bash\nfor f in *; do\n  echo $f\n```", 4),
    ],
)
def test_syntax_errors_are_reported_on_the_offending_line(block, line):
    issues = run("code_quality", "intro\n\n" + block + "\n")
    assert [(i.line_start, i.severity) for i in issues if i.source.startswith("rule:syntax")] == [(line, "warning")]


@pytest.mark.parametrize(
    "block",
    [
        "```python\n>>> 1 + 1\n2\n```",
        "```python\nresult = await client.get(url)\n```",
        "```python\n    def method(self):\n        return 1\n```",
        "```yaml\nBucket:\n  Name: !Ref Param\n  Arn: !GetAtt Bucket.Arn\n```",
        "```yaml\nreplicas: {{ .Values.replicas }}\n```",
        "```jsonc\n{\n  // comment\n  \"a\": 1\n}\n```",
        "```console\n$ ls -la\ntotal 0\n$ echo 'done'\ndone\n```",
        "```diff python\n-def f()\n+def f():\n```",
        "```mermaid\ngraph LR\n  a --> b\n```",
    ],
)
def test_valid_or_non_parseable_blocks_are_not_flagged(block):
    assert run("code_quality", "intro\n\n" + block + "\n") == []


def test_missing_language_and_hardcoded_password():
    issues = run("code_quality", '```\nls\n```\n\n```python\nPASSWORD = "hunter2024"\nTOKEN = os.environ["T"]\n```\n')
    assert [(i.source, i.line_start) for i in issues] == [("rule:code-language", 1), ("rule:hardcoded-credential", 6)]


def test_unclosed_shell_opener_is_located():
    assert unclosed_opener("if true; then\n  echo\nfor x in a; do\n  echo\ndone\n") == ("if", 1)


# --- link --------------------------------------------------------------------------------------


def test_link_rules():
    text = (
        "[a](htps://example.org)\n[b](https//example.org)\n[c]()\n[](https://pypi.org/)\n"
        "[d](http://www.ietf.org/)\n[e](file:///home/me/local.md)\n[see f][missing]\n[ok](https://ja.wikipedia.org/wiki/A_(B))\n"
        "[g](https://exa mple.com)\n[loc](http://localhost:3000)\n"
    )
    issues = run("link", text)
    assert [(i.line_start, i.source) for i in issues] == [
        (1, "rule:malformed-url"), (2, "rule:malformed-url"), (3, "rule:empty-link"), (4, "rule:empty-link-text"),
        (5, "rule:http-url"), (6, "rule:local-path"), (7, "rule:undefined-reference"), (9, "rule:malformed-url"),
    ]


def test_relative_paths_are_local_on_zenn_but_fine_in_a_readme():
    assert run("link", ZENN_HEAD + "![図](/images/diagram.png)\n") == []  # Zenn's GitHub images folder
    assert lines_of(run("link", ZENN_HEAD + "![図](images/diagram.png)\n"), "rule:local-path") == [9]
    assert run("link", "# README\n\nSee [the guide](docs/guide.md).\n") == []


class _Site:
    """A fake web for online link checks: status codes by path, counting requests."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.flaky_failures = 1

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path))
        path = request.url.path
        if path == "/gone":
            return httpx.Response(404)
        if path == "/flaky" and self.flaky_failures:
            self.flaky_failures -= 1
            return httpx.Response(503)
        if path == "/slow":
            raise httpx.ReadTimeout("timed out", request=request)
        if path == "/no-head" and request.method == "HEAD":
            return httpx.Response(405)
        return httpx.Response(200)


async def _online(text: str, site: _Site, **config) -> tuple[list[Issue], list[str]]:
    checker = CHECKER_CLASSES["link"](context(check_links_online=True, link_timeout=1, **config))
    checker.context.http_transport = httpx.MockTransport(site.handler)
    result = await checker.check(parse_article(text))
    return result.issues, [s.reason for s in result.skipped]


async def test_online_checks_report_broken_links_and_retry_transient_errors():
    site = _Site()
    text = (
        "[a](https://docs.acme.dev/ok)\n[b](https://docs.acme.dev/gone)\n[c](https://docs.acme.dev/flaky)\n"
        "[d](https://docs.acme.dev/slow)\n[e](https://docs.acme.dev/no-head)\n"
    )
    issues, _ = await _online(text, site, link_retries=1)
    assert {(i.line_start, i.severity) for i in issues} == {(2, "warning"), (4, "suggestion")}
    assert site.requests.count(("HEAD", "/flaky")) == 2  # retried once after the 503
    assert site.requests.count(("HEAD", "/slow")) == 2
    assert ("GET", "/no-head") in site.requests


async def test_online_checks_are_off_by_default_and_say_so():
    site = _Site()
    checker = CHECKER_CLASSES["link"](context())
    checker.context.http_transport = httpx.MockTransport(site.handler)
    result = await checker.check(parse_article("[b](https://docs.acme.dev/gone)\n"))
    assert site.requests == []
    assert result.issues == []
    assert any("not opened" in s.reason for s in result.skipped)


# --- structure ---------------------------------------------------------------------------------


def test_zenn_front_matter_rules():
    # Without an emoji the shape alone is not certainly Zenn's: the writer says it is.
    text = 'platform:zenn\n---\ntitle: ""\ntype: "news"\ntopics: []\npublished: true\n---\n\n本文\n'
    issues = run("structure", text)
    assert {(i.source, i.severity, i.line_start) for i in issues} >= {
        ("rule:title", "critical", 2), ("rule:zenn-type", "critical", 3),
        ("rule:topics-count", "warning", 4), ("rule:zenn-emoji", "warning", 1),
    }


def test_zenn_topics_written_as_one_string_are_asked_for_as_a_list():
    # `topics: ai, api, agent` is one YAML string: Zenn's validator wants a list, not other letters.
    head = '---\ntitle: "記事"\nemoji: "🧪"\ntype: "tech"\ntopics: ai, api, agent\npublished: true\n---\n\n本文\n'
    [issue] = [i for i in run("structure", head) if i.source == "rule:topics-format"]
    assert issue.line_start == 5 and "one string, not a list" in issue.problem
    assert 'topics: ["ai", "api", "agent"]' in issue.suggestion
    # A listed topic with a symbol is still named as such.
    dotted = head.replace("topics: ai, api, agent", 'topics: ["Next.js", "react"]')
    [issue] = [i for i in run("structure", dotted) if i.source == "rule:topics-format"]
    assert "Next.js" in issue.problem and "spaces or symbols" in issue.problem


def test_a_host_name_ending_in_a_dot_is_named_for_what_it_is():
    from agents.proofread.checkers.link import malformed_reason

    # `[www.flyte.org](http://www.flyte.org./)`: the sentence's full stop typed into the link.
    assert malformed_reason("http://www.flyte.org./") == "the host name “www.flyte.org.” ends with a dot"
    assert malformed_reason("http://www.flyte.org/") is None
    # A host that is wrong besides its dot is still called invalid.
    assert malformed_reason("http://examplecom./") == "“examplecom.” is not a valid host name"


def test_qiita_needs_tags():
    issues = run("structure", "platform:qiita\n---\ntitle: Qiita記事\ntags: []\nprivate: false\n---\n\n本文\n")
    assert [(i.source, i.severity, i.line_start) for i in issues] == [("rule:tags-count", "critical", 3)]


def test_intro_and_conclusion_are_found_by_their_headings():
    paragraph = "".join(f"段落{i}です。\n\n" for i in range(6))
    ok = ZENN_HEAD + f"## はじめに\n\n{paragraph}## 本題\n\n{paragraph}## まとめ\n\n終わりです。\n"
    assert run("structure", ok) == []
    bad = ZENN_HEAD + f"## 本題\n\n{paragraph}## 詳細\n\n{paragraph}## 参考\n\n- link\n"
    assert {i.source for i in run("structure", bad)} == {"rule:introduction", "rule:conclusion"}


# --- language_quality --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "style"),
    [("これはペンです。", "polite"), ("実装しました。", "polite"), ("そうでしょうね。", "polite"),
     ("これはペンである。", "plain"), ("実装した。", "plain"), ("問題はない。", "plain"), ("以上。", None)],
)
def test_sentence_style(sentence, style):
    assert sentence_style(tokenize(sentence)) == style


def test_japanese_rules_flag_seeded_problems_on_their_lines():
    text = ZENN_HEAD + (
        "私は彼は好きです。\n\nAはX、BはYです。\n\n設定をを変えます。\n\n画面を見れます。\n\n"
        "東京に行き、大阪に住みます。\n"
    )
    issues = run("language_quality", text)
    assert [(i.line_start, i.source) for i in issues] == [
        (9, "rule:doubled-particle"), (13, "rule:doubled-word"), (15, "rule:ranuki"),
    ]


def test_mixed_style_flags_the_minority():
    text = ZENN_HEAD + "これは本です。\n\nあれも本です。\n\nそれは本である。\n\nどれも本でした。\n"
    issues = run("language_quality", text)
    assert [(i.line_start, i.source) for i in issues] == [(13, "rule:mixed-style")]


def test_list_items_are_separate_sentences():
    text = ZENN_HEAD + "- 設定は簡単\n- 導入は容易\n"
    assert run("language_quality", text) == []


def test_english_rules():
    text = "This is is fine.\n\nI think it is basically good.\n"
    issues = run("language_quality", text)
    assert [(i.line_start, i.source) for i in issues] == [
        (1, "rule:doubled-word"), (3, "rule:hedge"), (3, "rule:weak-phrase"),
    ]


def test_bold_code_spans_and_code_link_text_are_not_flagged():
    text = "- **`/hotel`** — the travel assistant\n\nPaste [`manifest.yaml`](https://example.com/m.yaml).\n"
    assert run("markdown_format", text) == []
    assert run("link", text) == []


async def test_a_linter_that_never_finishes_is_stopped_and_our_own_rules_still_report():
    worker = LinterWorker(scan="tests.proofread.stuck_linter:scan_forever")
    try:
        checker = CHECKER_CLASSES["markdown_format"](context(linter_timeout=1))
        checker.context.linter = worker
        result = await checker.check(parse_article("## A\n\n![](https://example.com/a.png)\n\n```python\nx = 1\n"))
    finally:
        worker.close()
    assert [e.error_type for e in result.errors] == ["LinterTimeout"]
    assert {i.source for i in result.issues} == {"rule:image-alt", "rule:unclosed-fence"}


def test_long_articles_are_linted_in_pieces_with_exact_line_numbers():
    section = "## 節{n}\n\n" + "これは長い記事の本文です。" * 40 + "\n\n"
    body = "".join(section.format(n=n) for n in range(40)) + "##壊れた見出し\n\n本文です。\n"
    text = ZENN_HEAD + body
    article = parse_article(text)
    view = linter_view(article).split("\n")
    assert len(linter_chunks(article, view)) > 1
    issues = run("markdown_format", text)
    expected = text.split("\n").index("##壊れた見出し") + 1
    assert lines_of(issues, "pymarkdownlnt:MD018") == [expected]
